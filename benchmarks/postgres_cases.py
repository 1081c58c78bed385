"""The PostgreSQL state row: a no-op rig apply against Terraform's own ``pg`` backend on the same server.

The server is ``RIG_BENCH_POSTGRES_URL`` when it is set, otherwise one started for the run as the
tests start theirs (``tests/pg_server.py``: the system's initdb and pg_ctl, loopback, stopped by
PID). rig's state and Terraform's live in schemas of their own in the same database, both reached
with the same URL and TLS mode, and are dropped afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import statistics
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from benchmarks.cases import CACHED_TASKS, cached_project, terraform_path
from benchmarks.fixtures import Project, TerraformProject, chain_config, python_executable, rig_argv, run_checked
from benchmarks.measure import Command, Invocation
from benchmarks.postgres_probe import MARKER
from benchmarks.suite import Case, Context, Row, Side, Target, judge

RIG_PARAMETERS = ("schema", "fragments_schema")


class NoServer(Exception):
    """No PostgreSQL server to measure on; the message says why."""


@contextlib.contextmanager
def server_url() -> Iterator[str]:
    """A URL of a loopback server: ``RIG_BENCH_POSTGRES_URL``, or a private server's for as long as the block runs."""
    given = os.environ.get("RIG_BENCH_POSTGRES_URL")
    if given:
        yield given
        return
    unset = "RIG_BENCH_POSTGRES_URL is not set"
    try:
        import psycopg  # noqa: F401  # the private server creates its database with it

        from tests.pg_server import start_server
    except ImportError as missing:
        raise NoServer(
            f"{unset}, and a private server needs {missing.name} here (pip install -e '.[postgres]')"
        ) from None
    try:
        server = start_server()
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
        first = (str(error).splitlines() or [type(error).__name__])[0]
        raise NoServer(f"{unset}, and no private server could start: {first[:160]}") from None
    try:
        yield server.admin_url()
    finally:
        server.cleanup()


def _query(url: str, **settings: str) -> str:
    """``url`` without rig's own parameters, with ``settings`` in their place; libpq's parameters are kept."""
    parts = urlsplit(url)
    kept = [(key, value) for key, value in parse_qsl(parts.query) if key not in (*RIG_PARAMETERS, *settings)]
    return urlunsplit(parts._replace(query=urlencode([*kept, *settings.items()])))


def _same_transport(url: str) -> str:
    """The URL both tools get: its own ``sslmode``, or ``disable`` (lib/pq, Terraform's driver, has no ``prefer``)."""
    sslmode = dict(parse_qsl(urlsplit(url).query)).get("sslmode", "disable")
    return _query(url, sslmode=sslmode)


def _drop_schemas(url: str, *schemas: str) -> None:
    """Best effort: the run's schemas are uniquely named, so leaving them is harmless if psycopg is absent."""
    try:
        import psycopg
    except ImportError:
        return
    try:
        with psycopg.connect(_query(url), autocommit=True) as connection:
            for name in schemas:
                connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    except Exception:  # cleanup must never hide the measurement
        return


def _rig_refusal(apply: Invocation, timeout: float) -> str | None:
    """The first apply on the new schema (it migrates and runs every task); why it failed, or None."""
    done = subprocess.run(
        list(apply.argv),
        cwd=apply.cwd,
        env=apply.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()] or ["(no stderr)"]
    return lines[-1].strip()[:160]


def run_apply_postgres(ctx: Context, case: Case) -> list[Row]:
    try:
        with server_url() as url:
            return _measure(ctx, case, _same_transport(url), given=bool(os.environ.get("RIG_BENCH_POSTGRES_URL")))
    except NoServer as missing:
        return case.skipped(str(missing))


def _measure(ctx: Context, case: Case, url: str, *, given: bool) -> list[Row]:
    sqlite = cached_project(ctx, CACHED_TASKS)
    project = Project.create(ctx.root, "postgres-200", chain_config(CACHED_TASKS))
    token = secrets.token_hex(4)
    schema, terraform_schema = f"rig_bench_{token}", f"tf_bench_{token}"
    state = _query(url, schema=schema, fragments_schema=f"{schema}_fragments")
    try:
        refusal = _rig_refusal(project.invocation("--state", state, "--json", "apply"), ctx.timeout)
        if refusal is not None:
            return case.skipped(f"rig does not accept a PostgreSQL --state here: {refusal}")
        apply = project.invocation("--state", state, "apply", plain=True)
        rig = Command("rig apply, PostgreSQL", [apply])
        on_sqlite = Command("rig apply, SQLite", [sqlite.invocation("apply", plain=True)])
        terraform = terraform_path()
        if terraform is None:
            rig_series, sqlite_series = ctx.measure([rig, on_sqlite])
            rows = case.skipped("terraform (the baseline) is not on PATH")
        else:
            ctx.log(f"  a Terraform module of {CACHED_TASKS} terraform_data on the pg backend, applied once")
            module = TerraformProject.create(
                ctx.root,
                "tf-postgres",
                CACHED_TASKS,
                terraform,
                backend="pg",
                PG_CONN_STR=_query(url),
                PG_SCHEMA_NAME=terraform_schema,
            )
            run_checked(module.apply())  # create the resources once; the measured applies change nothing
            baseline = Command("terraform apply, pg backend", [module.apply()])
            rig_series, terraform_series, sqlite_series = ctx.measure([rig, baseline, on_sqlite])
            rows = [judge(case.row(), rig_series, terraform_series)]
            if not rows[0].note:  # a failed run's note says what failed
                rows[0].note = "on RIG_BENCH_POSTGRES_URL" if given else "on a server started for this run"
        against_sqlite = case.row(
            title="the same `rig apply` on PostgreSQL, against SQLite", baseline_title="the same on SQLite"
        )
        against_sqlite.target = Target()  # information, no target: what PostgreSQL state costs over SQLite
        against_sqlite = judge(against_sqlite, rig_series, sqlite_series)
        if against_sqlite.baseline is not None and against_sqlite.status == "pass":
            against_sqlite.note = _where_the_time_goes(apply, against_sqlite.baseline)
        return [*rows, against_sqlite]
    finally:
        _drop_schemas(url, schema, f"{schema}_fragments", terraform_schema)


def _where_the_time_goes(apply: Invocation, sqlite: Side, runs: int = 5) -> str:
    """The medians of what postgres_probe.py reads inside rig, beside the SQLite apply."""
    probe = Path(__file__).with_name("postgres_probe.py")
    argv = [python_executable(), "-I", str(probe), *apply.argv[len(rig_argv()) :]]
    found: list[dict[str, float]] = []
    for _ in range(runs):
        done = subprocess.run(
            argv, cwd=apply.cwd, env=apply.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )
        lines = [line for line in done.stderr.splitlines() if line.startswith(MARKER)]
        if done.returncode != 0 or not lines:
            return f"no breakdown: the probe exited {done.returncode}"
        found.append(json.loads(lines[-1][len(MARKER) :]))

    def median(key: str) -> float:
        return statistics.median(item[key] for item in found)

    driver = median("import_ms")
    return (
        f"in rig: psycopg's import {driver:.0f} ms ({driver / 1000 / sqlite.median_s:.2f}× the SQLite apply), "
        f"connecting {median('connect_ms'):.0f} ms, {median('statements'):.0f} statements "
        f"{median('statements_ms'):.0f} ms"
    )


APPLY_POSTGRES = Case(
    "apply-postgres",
    f"no-op `rig apply`, {CACHED_TASKS} cached, PostgreSQL state over loopback",
    f"no-op `terraform apply` of {CACHED_TASKS} `terraform_data`, `pg` backend on the same server",
    Target(max_ratio=0.8),
    run_apply_postgres,
)

__all__ = ["APPLY_POSTGRES", "NoServer", "server_url"]
