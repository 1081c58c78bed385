"""Bad input never gets exit 3: each case exits 1 with one line on stderr and changes nothing on disk."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig, write_project

SIMPLE = """
from rigcli import sequence

workflows = sequence("w").task("a", lambda step: {"ctx": {"a": 1}})
"""

Tree = dict[str, tuple[int, bytes | str]]


def tree(*roots: Path) -> Tree:
    """Every path under ``roots`` with its mode and contents (a symlink's target), to compare before and after."""
    found: Tree = {}
    for root in roots:
        if root.is_symlink() or root.is_file():
            found[str(root)] = (root.lstat().st_mode, root.read_bytes() if root.is_file() else os.readlink(root))
            continue
        for path in [root, *sorted(root.rglob("*"))]:
            stat = path.lstat()
            if path.is_symlink():
                found[str(path)] = (stat.st_mode, os.readlink(path))
            elif path.is_file():
                found[str(path)] = (stat.st_mode, path.read_bytes())
            else:
                found[str(path)] = (stat.st_mode, b"")
    return found


def one_error_line(result: Result, *needles: str) -> str:
    """The single line on stderr, checked for ``needles``; never an internal error."""
    assert result.returncode == 1, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result
    line = lines[0]
    assert line.startswith("error: ") and "internal error" not in line, result
    for needle in needles:
        assert needle in line, result
    return line


def test_a_dotenv_file_that_is_not_utf8(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", SIMPLE)
    (project / ".env").write_bytes(b"TOKEN=caf\xe9\n")
    before = tree(project)
    one_error_line(run_rig("plan", cwd=project), ".env", "UTF-8")
    assert tree(project) == before


def test_the_lock_file_being_a_directory(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", SIMPLE)
    assert run_rig("apply", cwd=project).returncode == 0
    lock = project / ".rig" / "state.sqlite.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()
    before = tree(project)
    one_error_line(run_rig("--json", "apply", cwd=project), "state.sqlite.lock", "directory")
    assert tree(project) == before


def test_rig_home_being_a_file(tmp_path: Path) -> None:
    config = """
    from rigcli import sequence

    shared = sequence("shared").task("a", lambda step: {"ctx": {"a": 1}}).global_()
    workflows = sequence("w").add(shared)
    """
    project = write_project(tmp_path / "p", config)
    home = tmp_path / "home"
    home.write_text("not a directory\n")
    before = tree(project, home)
    one_error_line(run_rig("--json", "apply", cwd=project, env={"RIG_HOME": str(home)}), "RIG_HOME", str(home))
    assert tree(project, home) == before


def _nested(depth: int) -> str:
    return f"""
    from rigcli import sequence

    node = sequence("s0").task("a", lambda step: {{"ctx": {{"a": 1}}}})
    for level in range(1, {depth}):
        node = sequence(f"s{{level}}").add(node)
    workflows = sequence("w").add(node)
    """


def test_600_deep_nesting_of_sequences_plans(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", _nested(600))
    result = run_rig("--json", "plan", cwd=project)
    assert result.returncode == 0, result
    assert result.json["nodes"][0]["path"].startswith("s599.s598.")


def test_absurdly_deep_nesting_is_a_config_error(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", _nested(50_000))
    before = tree(project)
    one_error_line(run_rig("plan", cwd=project), "nested", "deep")
    assert tree(project) == before


def test_a_task_returning_a_context_that_contains_itself(tmp_path: Path) -> None:
    config = """
    from rigcli import sequence


    def loop(step):
        ctx = {"name": "x"}
        ctx["again"] = {"inner": ctx}
        return {"ctx": ctx}


    workflows = sequence("w").task("loop", loop)
    """
    project = write_project(tmp_path / "p", config)
    before = tree(project)
    one_error_line(run_rig("--json", "apply", cwd=project), "Task loop", "again.inner", "contains itself")
    after = tree(project)
    assert {path: item for path, item in after.items() if "/.rig" not in path} == before


def test_rig_init_through_a_dangling_config_symlink_writes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    outside = tmp_path / "outside"
    (project / "rig_config.py").symlink_to(outside / "deeper" / "target.py")
    before = tree(tmp_path)
    one_error_line(run_rig("init", cwd=project), "rig_config.py", "symlink")
    assert tree(tmp_path) == before
    assert not outside.exists()


def test_duplicate_task_names_are_a_load_error_naming_both(tmp_path: Path) -> None:
    config = """
    from rigcli import sequence


    def first(step):
        return None


    def second(step):
        return None


    workflows = (
        sequence("w")
        .task("setup", first)
        .task("setup", second)
    )
    """
    project = write_project(tmp_path / "p", config)
    before = tree(project)
    line = one_error_line(run_rig("plan", cwd=project), "setup", "rig_config.py:14", "rig_config.py:15")
    assert "Duplicate task" in line
    assert tree(project) == before


def test_invalidating_an_unknown_task_names_close_matches(tmp_path: Path) -> None:
    config = """
    from rigcli import sequence

    workflows = sequence("w").task("install-tools", lambda step: None).task("clone", lambda step: None)
    """
    project = write_project(tmp_path / "p", config)
    assert run_rig("apply", cwd=project).returncode == 0
    before = tree(project)
    one_error_line(run_rig("cache", "invalidate", "instal-tools", cwd=project), "instal-tools", "install-tools")
    assert tree(project) == before


# -- what needs a real mount: a read-only checkout and a full disk (root in a mount namespace) --------


def _can_mount(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=1m tmpfs {tmp_path}"], capture_output=True
    )
    return probe.returncode == 0


def _in_mount_namespace(script: str, *, cwd: Path, env: dict[str, str] | None = None) -> Result:
    """Run ``script`` (sh) in a private mount namespace; ``$RIG`` is the installed rig."""
    body = textwrap.dedent(script)
    completed = subprocess.run(
        ["unshare", "-m", "sh", "-c", body],
        cwd=cwd,
        env=env_with_rig({"RIG": RIG, **(env or {})}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Result(["sh", body], completed.returncode, completed.stdout, completed.stderr)


@pytest.fixture
def mounts(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    if not _can_mount(probe):
        pytest.skip("needs root and unshare to mount a read-only or full filesystem")


@pytest.mark.usefixtures("mounts")
def test_plan_in_a_read_only_checkout(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", SIMPLE)
    assert run_rig("apply", cwd=project, subprocess=True).returncode == 0
    before = tree(project)
    result = _in_mount_namespace(
        f"mount --bind {project} {project} && mount -o remount,bind,ro {project} && cd {project} && exec $RIG plan",
        cwd=tmp_path,
    )
    one_error_line(result, "read-only")
    assert tree(project) == before


FORK_CONFIG = """
from rigcli import define_provider, workflow

app = workflow("w", providers={"box": define_provider("local")})


def prepare(step, box):
    machine = box.create_machine()
    machine.exec("head -c 400000 /dev/urandom > blob", name="prepare")
    return {"ctx": {"base": machine.snapshot_ref()}}


def create(workflow, workspace, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


workflows = app.sequence("w").task("prepare", prepare).workspace(create=create)
"""


@pytest.mark.usefixtures("mounts")
def test_fork_on_a_full_disk(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    # The project lives on a 4 MiB tmpfs: applied, then filled to leave room for the state but
    # not for a copy of the machine; fork must fail with one clear line and leave no temp copy.
    result = _in_mount_namespace(
        f"""
        set -e
        mount -t tmpfs -o size=4m tmpfs {disk}
        mkdir {disk}/p && cd {disk}/p
        cat > rig_config.py <<'EOF'
        {textwrap.indent(FORK_CONFIG, "        ").strip()}
        EOF
        sed -i 's/^        //' rig_config.py
        $RIG apply >/dev/null 2>&1
        free=$(df --output=avail -k . | tail -1)
        head -c $(( (free - 200) * 1024 )) /dev/zero > filler || true
        set +e
        $RIG --json fork dev >/dev/null 2>err.txt
        echo "exit=$?"
        cat err.txt >&2
        ls -a .rig/machines | grep -c '^\\.tmp-' || true
        """,
        cwd=tmp_path,
        env={"RIG_HOME": str(tmp_path / "home")},
    )
    lines = result.stdout.split()
    assert lines[0] == "exit=1", result
    assert lines[1] == "0", f"a temp copy was left behind\n{result}"
    errors = result.stderr.splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: "), result
    assert "internal error" not in errors[0]
    assert "No space left on device" in errors[0] or "disk is full" in errors[0], result
