"""The entry point `python -m benchmarks`: parse options, build fixtures in a temp dir, run cases, report."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from benchmarks import install
from benchmarks.cases import CLI_CASES
from benchmarks.connect_cases import CONNECT_CASES
from benchmarks.day_two_cases import DAY_TWO_CASES
from benchmarks.devcontainer_cases import DEVCONTAINER_CASES
from benchmarks.fixtures import SetupError, precompile, time_installation
from benchmarks.history_cases import HISTORY_CASES
from benchmarks.machine_cases import MACHINE_CASES
from benchmarks.report import describe_install, describe_machine, document, header, summary, table
from benchmarks.suite import Case, Context, Row
from benchmarks.swarm_cases import SWARM_CASES
from benchmarks.team_cases import TEAM_CASES

CASES: list[Case] = [
    *CLI_CASES,
    *MACHINE_CASES,
    *HISTORY_CASES,
    *TEAM_CASES,
    *DAY_TWO_CASES,
    *SWARM_CASES,
    *DEVCONTAINER_CASES,
    *CONNECT_CASES,
]
BY_NAME = {case.name: case for case in CASES}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Side-by-side benchmarks of rig against its baselines (ratio = rig / baseline).",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: small sizes, 2 timed runs per command")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout (progress on stderr)")
    parser.add_argument(
        "--case",
        action="append",
        choices=sorted(BY_NAME),
        metavar="NAME",
        help="run only this case (repeatable); see --list",
    )
    parser.add_argument("--repeat", type=int, help="timed runs per command (default 5, --quick 2)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs per command first (default 1)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one run may take (default 120)")
    parser.add_argument("--workdir", type=Path, help="where to make the temp dir for fixtures (default: $TMPDIR)")
    parser.add_argument("--keep", action="store_true", help="keep the fixtures' temp dir")
    parser.add_argument(
        "--rig",
        choices=(*install.KINDS, "both"),
        default="regular",
        help="which rig to time: a regular (non-editable) install of this checkout in a venv of its own, "
        "as users have it, with that venv's python as the baseline (default); the rig beside this "
        "interpreter (editable in a checkout); or both, one after the other",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=install.default_cache(),
        help="where the regular install's venv (its dependencies) is kept between runs (default: %(default)s)",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when any row fails its target")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    if args.repeat is None:
        args.repeat = 2 if args.quick else 5
    if args.repeat < 1 or args.warmup < 0 or args.timeout <= 0:
        parser.error("--repeat must be ≥ 1, --warmup ≥ 0 and --timeout > 0")
    return args


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_case(ctx: Context, case: Case) -> list[Row]:
    log(f"{case.name}: {case.title}")
    started = time.perf_counter()
    try:
        rows = case.run(ctx, case)
    except SetupError as error:
        rows = [case.row(status="fail", note=str(error))]
    except Exception as error:
        # One broken case (a fixture rig cannot build, a bug here) is that row's failure, not the whole run's.
        traceback.print_exc(file=sys.stderr)
        rows = [case.row(status="fail", note=f"error: {type(error).__name__}: {error}")]
    for row in rows:
        ratio = "" if row.ratio is None else f" ratio {row.ratio:.2f}"
        log(f"  -> {row.status}{ratio} {row.note}".rstrip())
    log(f"  ({time.perf_counter() - started:.1f} s)")
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for case in CASES:
            print(f"{case.name:16} {case.title}  [baseline: {case.baseline}; target {case.target.text()}]")
        return 0
    selected = [BY_NAME[name] for name in dict.fromkeys(args.case)] if args.case else CASES
    kinds = list(install.KINDS) if args.rig == "both" else [args.rig]
    options = {
        "quick": args.quick,
        "repeat": args.repeat,
        "warmup": args.warmup,
        "timeout": args.timeout,
        "cases": [case.name for case in selected],
        "rig": args.rig,
    }
    started = time.perf_counter()
    machine = describe_machine()
    machine["installs"] = []
    root = Path(tempfile.mkdtemp(prefix="rig-bench-", dir=args.workdir))
    rows: list[Row] = []
    try:
        for kind in kinds:
            log(f"rig: {kind} install")
            try:
                timed = install.regular(args.cache, log) if kind == "regular" else install.editable()
            except SetupError as error:
                rows += [case.row(status="fail", note=f"{kind} install: {error}", install=kind) for case in selected]
                continue
            time_installation(list(timed.rig), timed.python)
            if kind == "editable":
                precompile()  # a regular install's bytecode was written by pip
            machine["installs"].append(describe_install(kind))
            ctx = Context(
                root=root / kind,
                quick=args.quick,
                repeat=args.repeat,
                warmup=args.warmup,
                timeout=args.timeout,
                log=log,
            )
            ctx.root.mkdir()
            for case in selected:
                for row in run_case(ctx, case):
                    row.install = kind
                    rows.append(row)
    finally:
        if args.keep:
            log(f"fixtures kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    if machine["installs"]:  # the first timed rig, where a reader of one install looks for it
        machine.update({key: value for key, value in machine["installs"][0].items() if key != "install"})
    if not args.json:
        print(header(machine, options), flush=True)
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps(document(machine, options, rows, elapsed), indent=2))
    else:
        print()
        print(table(rows))
        print()
        print(summary(rows, elapsed))
    return 1 if args.check and any(row.status == "fail" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
