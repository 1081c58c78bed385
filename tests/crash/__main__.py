"""`python3 -m tests.crash --trials 50`: the kill -9 harness on its own, with its figures.

Kills `rig fork` and `rig rm` at random instants (``--trials`` each, per provider; docker when
a daemon answers at DOCKER_HOST, swarm when the RIG_TEST_SWARM_* cluster answers), recovers with
one `rig rm` and one `rig gc`, and prints per provider and command: the trials, how many were
killed mid-command, the workspace record's state at the kill, what gc still had to remove, leaks,
stuck records and integrity checks. Exits 1 if anything leaked or stuck.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from tests.crash.harness import (
    OPS,
    PROVIDERS,
    CrashProject,
    Trial,
    Unavailable,
    docker_api,
    summarize,
    swarm_cluster,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.crash", description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50, help="trials per provider and command (default 50)")
    parser.add_argument("--providers", default=",".join(PROVIDERS), help="local,docker,swarm (each if it answers)")
    parser.add_argument("--ops", default=",".join(OPS), help="fork,rm")
    parser.add_argument("--seed", type=int, default=None, help="seed for the kill instants (default: random)")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}")
    trials: list[Trial] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rig-crash-") as workdir:
        for provider in args.providers.split(","):
            api = None
            if provider in ("docker", "swarm"):
                try:
                    api = docker_api() if provider == "docker" else swarm_cluster()
                except Unavailable as exc:
                    print(f"{provider}: skipped ({exc})")
                    continue
            project = CrashProject(Path(workdir) / provider, provider, api)
            try:
                for op in args.ops.split(","):
                    for index in range(args.trials):
                        trial = project.trial(op, index, random.Random(seed * 1000 + index))
                        trials.append(trial)
                        if not trial.clean:
                            print(f"NOT CLEAN: {trial}", file=sys.stderr)
            finally:
                project.close()
    for line in summarize(trials):
        print(line)
    print(f"{len(trials)} trials in {time.monotonic() - started:.0f}s")
    return 0 if trials and all(trial.clean for trial in trials) else 1


if __name__ == "__main__":
    sys.exit(main())
