"""`python3 -m tests.hostile signals|instants|exec|corrupt`: the hostile run on its own, with its figures.

- ``signals --trials N``: N process-group interrupts per handler kind and signal (SIGINT, SIGTERM,
  SIGHUP), plus N kill -9s during a docker exec recovered by the next command and N by `rig gc`
  (docker kinds only when a daemon answers at DOCKER_HOST). Fails on any exit 0, run recorded
  succeeded, wrong exit code or process left running.
- ``instants --trials N``: N SIGINT/SIGTERM/SIGHUPs to rig's process group at random instants of
  random commands (``instants.py``), from the interpreter's start to rig's exit. Fails on any
  outcome but an interrupt (exit 128 + N, the one line ``interrupted``), a completed command or a
  signal that came before rig's first line; on a leaked program; or a state that fails its check.
- ``exec --trials N``: `rig exec`'s signal matrix (``exec_matrix.py``), N rounds of: local and docker
  x lean and full way x rig's pid or its group x SIGINT, SIGTERM, SIGHUP, plus kill -9 of rig during
  a docker exec recovered by `rig gc` and by the next writer (docker only when a daemon answers at
  DOCKER_HOST). Fails on an exit other than 128 + the signal, a hang, or anything left running.
- ``corrupt --databases N``: N state databases damaged at different pages and offsets, each run
  through the common commands, then recovered with `rig state recover`. Fails on any exit 3, any
  write into a damaged file, or a recovery after which `rig state check` or `rig apply` fails.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path


def _signals(args: argparse.Namespace) -> int:
    from tests.hostile.signals import HOST_KINDS, KINDS, SIGNALS, Docker, SignalProject, Trial, Unavailable, summarize

    kinds = [kind for kind in args.kinds.split(",") if kind]
    docker: Docker | None = None
    if any(kind not in HOST_KINDS for kind in kinds):
        try:
            docker = Docker()
        except Unavailable as exc:
            print(f"docker kinds skipped ({exc})")
            kinds = [kind for kind in kinds if kind in HOST_KINDS]
    trials: list[Trial] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rig-hostile-") as workdir:
        project = SignalProject(Path(workdir), docker)
        try:
            for index in range(args.trials):
                for kind in kinds:
                    assert kind in KINDS, kind
                    for signum in SIGNALS:
                        trial = project.trial(kind, signum)
                        trials.append(trial)
                        if not trial.clean:
                            print(f"NOT CLEAN: {trial}", file=sys.stderr)
                if docker is not None:
                    for recover_with in ("apply", "gc"):
                        trial = project.kill9_exec_trial(recover_with=recover_with)
                        trial.signal = "SIGKILL"
                        trials.append(trial)
                        if not trial.clean:
                            print(f"NOT CLEAN (kill -9, then {recover_with}): {trial}", file=sys.stderr)
                print(f"round {index + 1}/{args.trials} done ({time.monotonic() - started:.0f}s)", file=sys.stderr)
        finally:
            project.close()
            if docker is not None:
                docker.close()
    for line in summarize(trials):
        print(line)
    print(f"{len(trials)} trials in {time.monotonic() - started:.0f}s")
    return 0 if trials and all(trial.clean for trial in trials) else 1


def _instants(args: argparse.Namespace) -> int:
    from tests.hostile.instants import main_loop, summarize

    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}")
    started = time.monotonic()
    outcomes, checked = main_loop(args.trials, seed, *([args.rig] if args.rig else []))
    for line in summarize(outcomes):
        print(line)
    print(f"rig state check afterwards: exit {checked.returncode}")
    print(f"{len(outcomes)} trials in {time.monotonic() - started:.0f}s")
    return 0 if outcomes and all(item.clean for item in outcomes) and checked.returncode == 0 else 1


def _exec(args: argparse.Namespace) -> int:
    from tests.hostile.exec_matrix import PATHS, SIGNALS, TARGETS, MatrixProject, Trial, summarize
    from tests.hostile.signals import Docker, Unavailable

    providers = [item for item in args.providers.split(",") if item]
    docker: Docker | None = None
    if "docker" in providers:
        try:
            docker = Docker()
        except Unavailable as exc:
            print(f"docker skipped ({exc})")
            providers.remove("docker")
    trials: list[Trial] = []
    started = time.monotonic()
    for provider in providers:
        with tempfile.TemporaryDirectory(prefix=f"rig-exec-{provider}-") as workdir:
            project = MatrixProject(Path(workdir), provider, docker if provider == "docker" else None)
            try:
                for index in range(args.trials):
                    for path in PATHS:
                        for target in TARGETS:
                            for signum in SIGNALS:
                                trials.append(project.trial(path, signum, target))
                        if provider == "docker":
                            trials += [project.kill9_trial(path, recover) for recover in ("gc", "next writer")]
                    took = time.monotonic() - started
                    print(f"{provider}: round {index + 1}/{args.trials} ({took:.0f}s)", file=sys.stderr)
            finally:
                project.close()
    if docker is not None:
        docker.close()
    for line in summarize(trials):
        print(line)
    print(f"{len(trials)} trials in {time.monotonic() - started:.0f}s")
    return 0 if trials and all(trial.clean for trial in trials) else 1


def _corrupt(args: argparse.Namespace) -> int:
    from tests.hostile.corrupt import COMMANDS, CorruptProject, summarize

    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rig-corrupt-") as workdir:
        project = CorruptProject(Path(workdir))
        damages = project.damages(args.databases, rng)
        outcomes, recoveries = [], []
        for damage in damages:
            outcomes += project.sweep(damage, COMMANDS)
            recoveries.append(project.recover(damage))
            if not recoveries[-1].clean:
                print(f"NOT RECOVERED: {recoveries[-1]}", file=sys.stderr)
    for line in summarize(outcomes, recoveries):
        print(line)
    print(f"{len(damages)} damaged databases x {len(COMMANDS)} commands in {time.monotonic() - started:.0f}s")
    clean = outcomes and all(outcome.clean for outcome in outcomes)
    return 0 if clean and all(recovery.clean for recovery in recoveries) else 1


def main(argv: list[str] | None = None) -> int:
    from tests.hostile.signals import KINDS

    parser = argparse.ArgumentParser(prog="python3 -m tests.hostile", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="sweep", required=True)
    signals = commands.add_parser("signals", help="process-group interrupts across handler kinds and signals")
    signals.add_argument("--trials", type=int, default=3, help="rounds: each kind x signal once per round (default 3)")
    signals.add_argument("--kinds", default=",".join(KINDS), help=",".join(KINDS))
    instants = commands.add_parser("instants", help="signals at random instants of random commands")
    instants.add_argument("--trials", type=int, default=500, help="interrupts (default 500)")
    instants.add_argument("--seed", type=int, default=None, help="seed for the draws (default: random)")
    instants.add_argument("--rig", default=None, help="the rig to run (default: the one beside this Python)")
    matrix = commands.add_parser("exec", help="rig exec's signal matrix, local and docker")
    matrix.add_argument("--trials", type=int, default=1, help="rounds of the whole matrix (default 1)")
    matrix.add_argument("--providers", default="local,docker", help="local,docker")
    corrupt = commands.add_parser("corrupt", help="damaged state databases x the common commands")
    corrupt.add_argument("--databases", type=int, default=20, help="damaged databases (default 20)")
    corrupt.add_argument("--seed", type=int, default=None, help="seed for the damage (default: random)")
    args = parser.parse_args(argv)
    sweeps = {"signals": _signals, "instants": _instants, "exec": _exec, "corrupt": _corrupt}
    return sweeps[args.sweep](args)


if __name__ == "__main__":
    sys.exit(main())
