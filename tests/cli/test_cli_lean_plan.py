"""Through the installed `rig`: `rig plan` without loading the config (the plan the last full one
printed) prints exactly what the full way prints, and gives way to it whenever an input of that
plan may have changed: the config, a helper module, `.env`, the environment, the run journal, the
clock, the lock, or the workflow asked for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.cli_support import Result, run_rig, write_project
from tests.helpers import wait_for

# Each import of the config appends a line to loads.txt: how a test sees whether rig loaded it.
CONFIG = """
import os
import time
from pathlib import Path

from helper import GREETING
from rigcli import sequence

GREETING = os.environ.get("RIG_TEST_GREETING", GREETING)  # read when the config is imported
EDIT = Path(__file__).with_name("edit-now")
if EDIT.exists():  # the helper edited while rig loads the project (after it was imported)
    EDIT.unlink()
    Path(__file__).with_name("helper.py").write_text('GREETING = "edited"\\n')
with open(Path(__file__).with_name("loads.txt"), "a") as loads:
    loads.write("loaded\\n")


def build(step):
    return {"ctx": {"greeting": GREETING}}


def slow(step):
    Path(__file__).with_name("slow.started").write_text("yes")
    while not Path(__file__).with_name("slow.go").exists():
        time.sleep(0.05)


def later(step):
    return None


main = sequence("main").task("build", build, cache_ttl=@TTL@).task("later", later)
other = sequence("other").task("slow", slow)
workflows = @WORKFLOWS@
"""


def config(ttl: str = "None", workflows: str = "main") -> str:
    return CONFIG.replace("@TTL@", ttl).replace("@WORKFLOWS@", workflows)


def make_project(directory: Path, ttl: str = "None", workflows: str = "main") -> Path:
    return write_project(directory, config(ttl, workflows), **{"helper.py": 'GREETING = "hello"\n'})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A one-workflow project whose first task has run and whose second has not."""
    project = make_project(tmp_path / "project")
    rig(project, "apply", "--only", "build")
    return project


def rig(project: Path, *args: str, code: int = 0, **env: str) -> Result:
    result = run_rig(*args, cwd=project, env=env, subprocess=True)
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr, result
    return result


def loads(project: Path) -> int:
    path = project / "loads.txt"
    return path.read_text().count("loaded") if path.exists() else 0


def forget_memo() -> None:
    for path in (Path(os.environ["RIG_HOME"]) / "cache" / "answers").glob("*.marshal"):
        path.unlink()


def answer(project: Path, *args: str, code: int = 0, **env: str) -> tuple[Result, bool]:
    """``rig ARGS`` and whether it loaded the config."""
    before = loads(project)
    result = rig(project, *args, code=code, **env)
    return result, loads(project) > before


def statuses(result: Result) -> dict[str, str]:
    return {node["path"]: node["status"] for node in json.loads(result.stdout)["nodes"]}


@pytest.mark.parametrize(
    ("args", "code"),
    [(("plan",), 0), (("--json", "plan"), 0), (("plan", "--detailed-exitcode"), 2), (("-C", ".", "plan"), 0)],
)
def test_a_second_plan_prints_what_the_full_way_printed_without_loading_the_config(
    project: Path, args: tuple[str, ...], code: int
) -> None:
    forget_memo()
    full, loaded = answer(project, *args, code=code)
    assert loaded
    lean, loaded = answer(project, *args, code=code)
    assert not loaded, "the second rig plan loaded the config"
    assert (lean.stdout, lean.stderr) == (full.stdout, full.stderr)
    assert "pending" in lean.stdout and "cached" in lean.stdout
    if "--json" not in args:
        assert "For cache details, run: rig cache explain" in lean.stdout


def test_a_plan_of_everything_cached_answers_lean_with_exit_0_under_detailed_exitcode(project: Path) -> None:
    rig(project, "apply")
    rig(project, "plan")
    result, loaded = answer(project, "plan", "--detailed-exitcode")
    assert not loaded
    assert result.stdout.startswith("main  2/2 cached") and "rig cache explain" not in result.stdout


@pytest.mark.parametrize("change", ["config", "helper", "dotenv", "variable read at import"])
def test_a_changed_project_file_or_environment_makes_plan_load_the_config_and_answer_right(
    project: Path, change: str
) -> None:
    rig(project, "plan")
    assert answer(project, "plan")[1] is False
    time.sleep(0.01)  # a new mtime even on a coarse clock
    env: dict[str, str] = {}
    if change == "config":
        (project / "rig_config.py").write_text(config().replace("GREETING}}", '"hi"}}'))
    elif change == "helper":
        (project / "helper.py").write_text('GREETING = "salut"\n')
    elif change == "dotenv":
        (project / ".env").write_text("UNRELATED=1\n")
    else:
        env["RIG_TEST_GREETING"] = "hola"
    result, loaded = answer(project, "--json", "plan", **env)
    assert loaded
    changed = change != "dotenv"  # the handler reads GREETING; .env holds nothing it reads
    assert statuses(result) == {"build": "pending" if changed else "cached", "later": "pending"}
    again, loaded = answer(project, "--json", "plan", **env)
    assert not loaded and again.stdout == result.stdout  # remembered anew


def test_a_file_edited_while_rig_loads_the_project_is_never_remembered_as_read(project: Path) -> None:
    rig(project, "plan")
    assert answer(project, "plan")[1] is False
    (project / "helper.py").write_text('GREETING = "hello"  # the same greeting, other bytes\n')
    (project / "edit-now").write_text("")
    result, loaded = answer(project, "--json", "plan")
    assert loaded and statuses(result)["build"] == "cached"  # it imported the helper before the edit
    assert (project / "helper.py").read_text() == 'GREETING = "edited"\n'
    result, loaded = answer(project, "--json", "plan")
    assert loaded, "the plan of the helper as it was before the edit answered for the edited one"
    assert statuses(result)["build"] == "pending"


@pytest.mark.parametrize("change", ["apply", "invalidate", "clear"])
def test_a_changed_run_journal_makes_plan_load_the_config_and_answer_right(project: Path, change: str) -> None:
    rig(project, "plan")
    assert answer(project, "plan")[1] is False
    if change == "apply":
        rig(project, "apply")
    elif change == "invalidate":
        rig(project, "cache", "invalidate", "build")
    else:
        rig(project, "cache", "clear", "--yes")
    result, loaded = answer(project, "--json", "plan")
    assert loaded
    expected = {"apply": "cached", "invalidate": "pending", "clear": "pending"}[change]
    assert statuses(result)["build"] == expected


def test_a_cache_ttl_that_runs_out_makes_plan_load_the_config(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", ttl="4")
    rig(project, "apply", "--only", "build")
    ran = time.monotonic()
    rig(project, "plan")
    result, loaded = answer(project, "--json", "plan")
    if time.monotonic() - ran < 3:  # still within the ttl (a slow machine may be past it)
        assert not loaded and statuses(result)["build"] == "cached"
    time.sleep(max(0.0, 4.5 - (time.monotonic() - ran)))
    result, loaded = answer(project, "--json", "plan")
    assert loaded
    assert statuses(result)["build"] == "pending"


def test_a_plan_while_another_rig_runs_a_task_is_made_the_full_way(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", workflows="[main, other]")
    rig(project, "apply", "--workflow", "main")  # a state to plan against
    rig(project, "plan", "--workflow", "other")
    assert answer(project, "plan", "--workflow", "other")[1] is False
    env = {**os.environ, "RIG_RENDER": "0"}
    runner = subprocess.Popen(
        [str(Path(sys.executable).with_name("rig")), "apply", "--workflow", "other"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: (project / "slow.started").exists(), "the slow task to start", timeout=60)
        result, loaded = answer(project, "--json", "plan", "--workflow", "other")
        assert loaded
        node = json.loads(result.stdout)["nodes"][0]
        assert node["reason"]["code"] == "running-elsewhere", node
    finally:
        (project / "slow.go").write_text("go")
        assert runner.wait(timeout=60) == 0


def test_a_memo_of_one_workflow_never_answers_for_another(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", workflows="[main, other]")
    rig(project, "apply", "--workflow", "main")  # a state to plan against
    rig(project, "plan", "--workflow", "main")
    assert answer(project, "plan", "--workflow", "main")[1] is False
    result, loaded = answer(project, "--json", "plan", "--workflow", "other")
    assert loaded and json.loads(result.stdout)["workflow"] == "other"
    # Without --workflow a project of two workflows asks which (or says to name one): the full way.
    assert answer(project, "--json", "plan", "--workflow", "other")[1] is False
    assert answer(project, "--json", "plan", code=2)[1] is True


def test_plan_and_ls_keep_each_others_memo(project: Path) -> None:
    rig(project, "ls")
    rig(project, "plan")
    assert answer(project, "ls")[1] is False
    assert answer(project, "plan")[1] is False
    rig(project, "logs", "build")  # another full load keeps both while the files read the same
    assert answer(project, "ls")[1] is False
    assert answer(project, "plan")[1] is False


SECRET_CONFIG = """
from pathlib import Path

from rigcli import define_provider, secret, workflow

with open(Path(__file__).with_name("loads.txt"), "a") as loads:
    loads.write("loaded\\n")

app = workflow("vaulted", providers={"box": define_provider("local", env={"TOKEN": secret("RIG_TEST_TOKEN")})})


def build(step, box):
    return None


workflows = app.sequence("main").task("build", build)
"""


def test_a_project_with_a_secret_plans_the_full_way_every_time(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", SECRET_CONFIG)
    env = {"RIG_TEST_TOKEN": "hunter2-lean-plan"}
    rig(project, "apply", **env)
    rig(project, "plan", **env)
    result, loaded = answer(project, "plan", **env)
    assert loaded
    assert result.stdout.startswith("vaulted  1/1 cached") and "hunter2" not in result.stdout + result.stderr


def test_json_stream_plans_the_full_way(project: Path) -> None:
    rig(project, "plan")
    result, loaded = answer(project, "--json-stream", "plan")
    assert loaded
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["workflow"] == "main" and len(lines) > 1
