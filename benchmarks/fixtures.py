"""Build what the cases measure: rig projects, Terraform projects and the environments to run them in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import Invocation

REPO_ROOT = Path(__file__).resolve().parents[1]
SETUP_TIMEOUT_S = 900.0  # building a fixture (a 20,000-task apply) may take a while; measuring never does


class SetupError(RuntimeError):
    """A fixture could not be built; the case is reported as failed with this message."""


def beside_this_interpreter() -> list[str]:
    """The console script installed next to this interpreter; a shim on PATH would add its own startup."""
    beside = Path(sys.executable).parent / "rig"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("rig")
    if found is not None and "shims" not in Path(found).parts:
        return [found]
    return [sys.executable, "-m", "rigcli"]


@dataclass
class Timed:
    """The rig this run times and the interpreter of its ``python -c pass`` baseline (install.py picks them)."""

    rig: list[str]
    python: str


TIMED = Timed(beside_this_interpreter(), sys.executable)


def rig_argv() -> list[str]:
    """How to start the rig being timed."""
    return list(TIMED.rig)


def python_executable() -> str:
    """The interpreter the timed rig runs on: its ``python -c pass`` is the Python baseline."""
    return TIMED.python


def time_installation(rig: list[str], python: str) -> None:
    """From now on, time ``rig`` and compare it with ``python``."""
    TIMED.rig, TIMED.python = list(rig), python


def base_env() -> dict[str, str]:
    """The caller's environment without anything that changes rig's behaviour or adds a per-run cost."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("RIG_")}
    # With it set, an editable install recompiles its sources on every run, which no user pays.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)  # the timed rig imports what its own install holds, nothing else
    env.update({"RIG_NO_BROWSER": "1", "NO_COLOR": "1"})
    return env


def precompile() -> None:
    """Write the bytecode of rig's own packages once, as an installed copy would have it."""
    import importlib.util

    dirs: list[str] = []
    for package in ("rigcli", "providers"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(spec.submodule_search_locations)
    if dirs:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", *dirs], env=base_env(), check=False, stdout=subprocess.DEVNULL
        )


@dataclass
class Project:
    """A rig project in its own directory with its own RIG_HOME, so fixtures never share caches."""

    dir: Path
    env: dict[str, str]

    @classmethod
    def create(cls, root: Path, name: str, config: str, **extra_env: str) -> Project:
        directory = root / name
        directory.mkdir(parents=True)
        (directory / "rig_config.py").write_text(textwrap.dedent(config).lstrip(), encoding="utf-8")
        env = base_env()
        env.update({"RIG_HOME": str(directory / "_home"), "RIG_HOST_STORAGE_DIR": str(directory / "_home/providers")})
        env.update(extra_env)
        return cls(directory, env)

    def invocation(self, *args: str, plain: bool = False, **extra_env: str) -> Invocation:
        env = dict(self.env, **extra_env)
        if plain:
            env["RIG_RENDER"] = "0"
        return Invocation([*rig_argv(), "-C", str(self.dir), *args], self.dir, env)

    def run(self, *args: str, **extra_env: str) -> str:
        """Run rig untimed to prepare the fixture; a failure stops the case with rig's error."""
        return run_checked(self.invocation(*args, **extra_env))

    def reset_state(self) -> None:
        shutil.rmtree(self.dir / ".rig", ignore_errors=True)


def run_checked(invocation: Invocation, timeout: float = SETUP_TIMEOUT_S) -> str:
    try:
        done = subprocess.run(
            list(invocation.argv),
            cwd=invocation.cwd,
            env=invocation.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SetupError(f"setup timed out after {timeout:g} s: {' '.join(invocation.argv[-3:])}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()] or ["(no stderr)"]
        raise SetupError(f"setup failed ({' '.join(invocation.argv[-3:])}): {lines[-1].strip()[:200]}")
    return done.stdout


def chain_config(tasks: int, *, cache_ttl: str | None = None) -> str:
    """A workflow of ``tasks`` trivial tasks in one sequence, all sharing one handler."""
    ttl = f", cache_ttl={cache_ttl}" if cache_ttl is not None else ""
    return f"""
        from rigcli import sequence


        def noop(step):
            return None


        flow = sequence("bench")
        for index in range({tasks}):
            flow = flow.task(f"t{{index:05d}}", noop{ttl})
        workflows = flow
    """


def parallel_config(branches: int, seconds: float) -> str:
    """``branches`` parallel branches of one sleeping task each; cache_ttl=0 so every apply runs them."""
    return f"""
        import time

        from rigcli import sequence


        def work(step):
            time.sleep({seconds})


        branches = {{f"b{{i}}": sequence(f"b{{i}}").task("work", work, cache_ttl=0) for i in range({branches})}}
        workflows = sequence("bench").parallel(branches)
    """


# 100-byte lines, like a build log; RIG_BENCH_BYTES is read at run time, and cache_ttl=0 reruns it each apply.
EXEC_CONFIG = """
    import os

    from rigcli import define_provider, workflow

    LINE = "a" * 99
    app = workflow("bench", providers={"box": define_provider("local")})


    def emit(box):
        machine = box.create_machine()
        try:
            size = int(os.environ.get("RIG_BENCH_BYTES", "0"))
            machine.exec(f"yes {LINE} | head -c {size}", name="output")
        finally:
            machine.delete()


    workflows = app.sequence("root").task("emit", emit, cache_ttl=0)
"""


def snapshot_tree_config(files: int, total_bytes: int) -> str:
    """A local machine filled with ``files`` files (``total_bytes`` in all), snapshotted; workspaces fork it."""
    return f"""
        from pathlib import Path

        from rigcli import define_provider, workflow

        app = workflow("bench", providers={{"box": define_provider("local")}})


        def fill(box):
            machine = box.create_machine()
            try:
                blob = b"x" * {total_bytes // max(files, 1)}
                for index in range({files}):
                    target = Path(machine.path, f"d{{index // 1000:03d}}", f"f{{index:05d}}")
                    target.parent.mkdir(exist_ok=True)
                    target.write_bytes(blob)
                return {{"ctx": {{"base": machine.snapshot_ref()}}}}
            finally:
                machine.delete()


        def create(workflow, box):
            return {{"machine": box.from_snapshot(workflow.ctx["base"]).id}}


        def remove(workspace, box):
            box.delete_machine(workspace.ctx["machine"])


        workflows = app.sequence("root").task("fill", fill).workspace(create=create, remove=remove)
    """


DOCKER_CONFIG = """
    from rigcli import define_provider, env, workflow

    app = workflow("bench", providers={"box": define_provider("docker", image=env("RIG_BENCH_DOCKER_IMAGE"))})


    def prepare(box):
        machine = box.create_machine()
        try:
            machine.write_text("marker.txt", "prepared\\n")
            return {"ctx": {"base": machine.snapshot_ref()}}
        finally:
            machine.delete()


    def create(workflow, box):
        machine = box.from_snapshot(workflow.ctx["base"])
        return {"machine": machine.id, "container": machine.container_id}


    def remove(workspace, box):
        box.delete_machine(workspace.ctx["machine"])


    workflows = app.sequence("root").task("prepare", prepare).workspace(create=create, remove=remove)
"""


@dataclass
class TerraformProject:
    """A Terraform root module of ``terraform_data`` resources (built into terraform core: no provider download)."""

    dir: Path
    env: dict[str, str]
    terraform: str

    @classmethod
    def create(
        cls, root: Path, name: str, resources: int, terraform: str, *, backend: str | None = None, **extra_env: str
    ) -> TerraformProject:
        """``backend``: one built into Terraform (``pg``), set up by ``extra_env`` (``PG_CONN_STR`` ...)."""
        directory = root / name
        directory.mkdir(parents=True)
        blocks = [f'resource "terraform_data" "r{index:05d}" {{\n  input = {index}\n}}\n' for index in range(resources)]
        if backend is not None:
            blocks.insert(0, f'terraform {{\n  backend "{backend}" {{}}\n}}\n')
        (directory / "main.tf").write_text("\n".join(blocks), encoding="utf-8")
        (directory / "terraformrc").write_text("", encoding="utf-8")
        env = base_env()
        env.update(
            {
                "TF_CLI_CONFIG_FILE": str(directory / "terraformrc"),
                "CHECKPOINT_DISABLE": "1",
                "TF_IN_AUTOMATION": "1",
                "TF_INPUT": "0",
            }
        )
        env.update(extra_env)
        project = cls(directory, env, terraform)
        run_checked(project.invocation("init", "-input=false", "-no-color"))
        return project

    def invocation(self, *args: str) -> Invocation:
        return Invocation([self.terraform, *args], self.dir, dict(self.env))

    def apply(self) -> Invocation:
        return self.invocation("apply", "-auto-approve", "-input=false", "-no-color")

    def reset_state(self) -> None:
        for name in ("terraform.tfstate", "terraform.tfstate.backup"):
            (self.dir / name).unlink(missing_ok=True)


__all__ = [
    "DOCKER_CONFIG",
    "EXEC_CONFIG",
    "REPO_ROOT",
    "Project",
    "SetupError",
    "TerraformProject",
    "base_env",
    "beside_this_interpreter",
    "chain_config",
    "parallel_config",
    "precompile",
    "python_executable",
    "rig_argv",
    "run_checked",
    "snapshot_tree_config",
    "time_installation",
]
