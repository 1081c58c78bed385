"""A private PostgreSQL for the tests: the system's initdb + pg_ctl in a temp dir, stopped by PID.

``initdb`` refuses to run as root, so as root the server runs as the ``postgres`` user (through
``runuser``) in a directory that user owns. It listens on a free loopback port (password auth)
and on a unix socket in the same temp dir (trust), with durability switched off: tests do not
need fsync, and it makes every schema they create cheap.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

SUPERUSER = "rig"
START_TIMEOUT_S = 60.0


def find_bindir() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin with initdb and pg_ctl, or a PATH that has both."""
    candidates = sorted(
        (Path(path) for path in glob.glob("/usr/lib/postgresql/*/bin")),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
        reverse=True,
    )
    for bindir in candidates:
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).parent
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One private server; ``url(schema=...)`` is a password URL over loopback TCP."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="rig-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()
        self.password = secrets.token_urlsafe(12)
        self.database = "rig_test"
        self.pid: int | None = None
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            account = pwd.getpwnam("postgres")
            os.chown(self.root, account.pw_uid, account.pw_gid)
        os.chmod(self.root, 0o755)  # the postgres user must reach the socket; tests must read the log

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=START_TIMEOUT_S, check=False)

    def _check(self, done: subprocess.CompletedProcess[str], what: str) -> None:
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{what} failed ({done.returncode}): {done.stderr.strip()} {log}")

    def initialize(self) -> None:
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n")
        if self._as_postgres:
            account = pwd.getpwnam("postgres")
            os.chown(pwfile, account.pw_uid, account.pw_gid)
        done = self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, f"--pwfile={pwfile}", "--auth-local=trust",
            "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync", "--no-instructions",
        )  # fmt: skip
        pwfile.unlink()
        self._check(done, "initdb")

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        )
        done = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        self._check(done, "pg_ctl start")
        self.pid = int((self.data / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        """SIGINT to the postmaster (a fast shutdown), then SIGKILL if it lingers; by PID, never by name."""
        pid, self.pid = self.pid, None
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def admin_url(self, database: str | None = None) -> str:
        password = quote(self.password, safe="")
        return f"postgresql://{SUPERUSER}:{password}@127.0.0.1:{self.port}/{database or self.database}"

    def url(self, schema: str | None = None, *, fragments_schema: str | None = None) -> str:
        """A state URL for rig (password in it) with the given schemas."""
        query = [f"schema={schema}"] if schema else []
        if fragments_schema:
            query.append(f"fragments_schema={fragments_schema}")
        return self.admin_url() + ("?" + "&".join(query) if query else "")

    def sql(
        self, statement: str, params: tuple[object, ...] = (), *, database: str | None = None
    ) -> list[tuple[object, ...]]:
        import psycopg

        with psycopg.connect(self.admin_url(database), autocommit=True) as connection:
            cursor = connection.execute(statement, params)  # type: ignore[arg-type]
            return list(cursor.fetchall()) if cursor.description else []

    def create_database(self) -> None:
        self.sql(f"CREATE DATABASE {self.database}", database="postgres")

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def start_server() -> PostgresServer:
    bindir = find_bindir()
    if bindir is None:
        raise FileNotFoundError("no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql or on PATH")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise FileNotFoundError("running as root, and there is no postgres user to run the server as") from None
    server = PostgresServer(bindir)
    try:
        server.initialize()
        server.start()
        server.create_database()
    except BaseException:
        server.cleanup()
        raise
    return server


def unique_schema(prefix: str = "t") -> str:
    return f"{prefix}_{secrets.token_hex(6)}"


__all__ = ["PostgresServer", "find_bindir", "start_server", "unique_schema"]
