"""Commands that need no engine run: version, help, discovery errors, init, projects, doctor, providers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import rigcli.cli.commands.project as project_commands
from rigcli._version import __version__
from rigcli.state import HostStorage
from tests.cli.cli_support import REPO_ROOT, RIG, env_with_rig, run_rig, write_project


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["version"], ["plan", "--version"]])
def test_version_prints_just_the_version(tmp_path: Path, args: list[str]) -> None:
    result = run_rig(*args, cwd=tmp_path, subprocess=True)  # the installed console script itself
    assert result.returncode == 0, result
    assert result.stdout == f"{__version__}\n"
    assert result.stderr == ""


def test_version_json(tmp_path: Path) -> None:
    result = run_rig("version", "--json", cwd=tmp_path)
    assert result.returncode == 0
    assert result.json == {"version": __version__}


def test_version_path_imports_no_heavy_modules(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rigcli", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env_with_rig(),
    )
    assert completed.stdout == f"{__version__}\n"
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines()}
    for heavy in ("typer", "rich", "pydantic", "sqlite3", "rigcli.engine", "asyncio"):
        assert heavy not in imported


def test_the_installed_command_starts_without_importing_re(tmp_path: Path) -> None:
    # pip's generated launcher imports re for a Windows-only argv[0] suffix: a quarter of a lean start.
    # Without site (-S) an editable install's import finder, which imports re itself, stays out of
    # the way; the checkout on PYTHONPATH stands in for it.
    completed = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", RIG, "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env_with_rig({"PYTHONPATH": str(REPO_ROOT)}),
    )
    assert completed.stdout == f"{__version__}\n", completed.stderr
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines()}
    assert "rigcli.__main__" in imported
    assert "re" not in imported


@pytest.mark.parametrize("args", [[], ["--help"], ["help"], ["-h"]])
def test_help_exits_zero(tmp_path: Path, args: list[str]) -> None:
    result = run_rig(*args, cwd=tmp_path)
    assert result.returncode == 0, result
    assert "Usage: rig" in result.stdout
    for command in (
        "init",
        "plan",
        "apply",
        "fork",
        "op",
        "rm",
        "ls",
        "cache",
        "providers",
        "projects",
        "doctor",
        "completion",
        "version",
    ):
        assert f"  {command} " in result.stdout


def test_help_for_a_command_lists_global_options(tmp_path: Path) -> None:
    result = run_rig("help", "apply", cwd=tmp_path)
    assert result.returncode == 0
    assert "--dry-run" in result.stdout
    assert "--workflow" in result.stdout


def test_unknown_command_is_a_usage_error(tmp_path: Path) -> None:
    result = run_rig("frobnicate", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "error: No such command 'frobnicate'.\n"


def test_unknown_option_is_a_usage_error(tmp_path: Path) -> None:
    result = run_rig("plan", "--frob", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: No such option: --frob")
    assert len(result.stderr.splitlines()) == 1


def test_no_config_found_upward(tmp_path: Path) -> None:
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)
    result = run_rig("plan", cwd=start)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f'error: No rig_config.py found from {start.resolve()} upward. Run "rig init" to create one.\n'
    )


def test_no_config_with_chdir_does_not_search_upward(tmp_path: Path) -> None:
    write_project(tmp_path, "workflows = []\n")
    (tmp_path / "sub").mkdir()
    result = run_rig("-C", "sub", "plan", cwd=tmp_path)
    assert result.returncode == 1
    sub = (tmp_path / "sub").resolve()
    assert result.stderr == f'error: No rig_config.py found in {sub}. Run "rig init" to create one.\n'


def test_config_found_in_a_parent_directory(dev_project: Path) -> None:
    inner = dev_project / "deep" / "er"
    inner.mkdir(parents=True)
    result = run_rig("--json", "plan", cwd=inner)
    assert result.returncode == 0, result
    assert result.json["workflow"] == "dev"


def test_config_option_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "other.py").write_text(
        'from rigcli import sequence\nworkflows = sequence("other").task("t", lambda step: None)\n'
    )
    result = run_rig("plan", "--config", "other.py", "--json", cwd=tmp_path)
    assert result.returncode == 0, result
    assert result.json["workflow"] == "other"
    missing = run_rig("--config", "nope.py", "plan", cwd=tmp_path)
    assert missing.returncode == 1
    assert "nope.py does not exist" in missing.stderr


def test_config_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    write_project(tmp_path, "from rigcli import sequence\n\nworkflows = sequence('x'\n")
    result = run_rig("plan", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    assert f"{tmp_path.resolve() / 'rig_config.py'}:3" in line or "rig_config.py:3" in line
    assert "SyntaxError" in line
    assert "Traceback" not in result.stderr


def test_config_exception_names_file_and_line(tmp_path: Path) -> None:
    write_project(tmp_path, "x = 1\nraise RuntimeError('boom')\n")
    result = run_rig("--json", "plan", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "rig_config.py:2" in result.stderr and "boom" in result.stderr


def test_init_writes_config_and_gitignore(tmp_path: Path) -> None:
    result = run_rig("--json", "init", cwd=tmp_path)
    assert result.returncode == 0, result
    config = tmp_path.resolve() / "rig_config.py"
    assert result.json == {
        "project_dir": str(tmp_path.resolve()),
        "config_path": str(config),
        "created": {"config": True, "gitignore": True},
        "updated": {"gitignore": False},
    }
    assert 'define_provider("local")' in config.read_text()
    assert (tmp_path / ".gitignore").read_text() == ".rig/\n"


def test_init_appends_to_gitignore_once(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules")
    assert run_rig("init", cwd=tmp_path).returncode == 0
    assert (tmp_path / ".gitignore").read_text() == "node_modules\n.rig/\n"
    (tmp_path / "rig_config.py").unlink()
    assert run_rig("init", cwd=tmp_path).returncode == 0
    assert (tmp_path / ".gitignore").read_text() == "node_modules\n.rig/\n"


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    config = tmp_path / "rig_config.py"
    config.write_text("# mine\n")
    result = run_rig("init", "--json", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"error: {config.resolve()} already exists: this is a rig project; rig init never overwrites. "
        f"To start over: rm {config.resolve()}; rig init (or edit it and run rig plan)\n"
    )
    assert config.read_text() == "# mine\n"


def test_init_with_chdir_creates_the_directory(tmp_path: Path) -> None:
    result = run_rig("init", "-C", "fresh", cwd=tmp_path)
    assert result.returncode == 0, result
    assert (tmp_path / "fresh" / "rig_config.py").is_file()
    assert "cd fresh" in result.stdout


def test_init_takes_no_arguments(tmp_path: Path) -> None:
    result = run_rig("init", "website", cwd=tmp_path)
    assert result.returncode == 2
    assert not (tmp_path / "rig_config.py").exists()


def test_projects_scans_down_and_skips_build_trees(tmp_path: Path) -> None:
    for place in ("api", "web/app", "node_modules/pkg", ".venv/x", "build/y", "api/nested"):
        write_project(tmp_path / place, "workflows = []\n")
    result = run_rig("projects", "--json", cwd=tmp_path)
    assert result.returncode == 0, result
    root = tmp_path.resolve()
    assert result.json == {
        "projects": [
            {"project_dir": str(root / "api"), "config_path": str(root / "api" / "rig_config.py")},
            {"project_dir": str(root / "web" / "app"), "config_path": str(root / "web" / "app" / "rig_config.py")},
        ]
    }
    human = run_rig("projects", cwd=tmp_path)
    lines = human.stdout.splitlines()
    assert lines[0] == f"2 rig projects at or below {root}"  # the base once, the projects relative to it
    assert [line.split() for line in lines[-2:]] == [["api", "rig_config.py"], ["web/app", "rig_config.py"]]
    empty = run_rig("-C", "build", "projects", cwd=tmp_path)
    assert empty.returncode == 0


def test_doctor_reports_versions_and_paths(tmp_path: Path) -> None:
    result = run_rig("doctor", "--json", cwd=tmp_path)
    assert result.returncode == 0, result
    report = result.json
    assert report["version"] == __version__
    assert report["python"]["version"]
    assert report["project"]["found"] is False
    assert set(report["docker"]) >= {"host", "reachable"}
    assert "local" in report["providers"]
    human = run_rig("doctor", cwd=tmp_path)
    assert human.returncode == 0
    assert "docker" in human.stdout and "rig home" in human.stdout


def test_doctor_inside_a_project(dev_project: Path) -> None:
    report = run_rig("doctor", "--json", cwd=dev_project).json
    assert report["project"]["found"] is True
    assert report["project"]["config_path"] == str(dev_project.resolve() / "rig_config.py")


# Providers speak for themselves in doctor (SupportsDiagnosis on the plugin); doctor names none.
DIAGNOSED_CONFIG = """
from rigcli import define_provider, workflow
from rigcli.provider_api import ProviderDiagnosis


class Controller:
    provider_id = "probe"

    def runtime(self, context):
        return None


class Probe:
    provider_id = "probe"

    def create_provider(self, setup):
        raise AssertionError("doctor makes no controller")

    def diagnose(self, config):
        if config.get("broken"):
            raise OSError("the probe's socket is gone")
        return ProviderDiagnosis(summary=f"listening on {config['port']}", ok=True, details={"port": config["port"]})


probe = Probe()
app = workflow("w", providers={"near": define_provider("probe", plugin=probe, port=7001)})
far = define_provider("probe", plugin=probe, port=7002)
broken = define_provider("probe", plugin=probe, port=0, broken=True)
workflows = app.sequence("root").task("a", lambda: None).add_provider("far", far).add_provider("bad", broken).task(
    "b", lambda: None
)
"""


def test_doctor_shows_what_each_configured_provider_says_of_itself(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", DIAGNOSED_CONFIG)
    report = run_rig("doctor", "--json", cwd=project).json
    assert report["project"]["probe_providers"] == [
        {"name": "near", "port": 7001},
        {"name": "far", "port": 7002},
        {"name": "bad", "error": "OSError: the probe's socket is gone"},
    ]
    assert not (project / ".rig").exists()  # doctor creates nothing
    human = run_rig("doctor", cwd=project)
    assert human.returncode == 0, human
    lines = [" ".join(line.split()) for line in human.stdout.splitlines()]
    assert "probe provider near listening on 7001" in lines
    assert "probe provider far listening on 7002" in lines
    assert "probe provider bad diagnosis failed: OSError: the probe's socket is gone" in lines


def test_a_config_doctor_cannot_read_is_reported_and_fails_doctor(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", "import os\n\nraise RuntimeError('half-written config')\n")
    result = run_rig("doctor", "--json", cwd=project, subprocess=True)
    assert result.returncode == 1, result  # a broken config is what doctor is there to find
    assert "half-written config" in result.json["project"]["providers_error"]
    config_error = result.json["project"]["config_error"]
    assert "rig_config.py:3" in config_error and "half-written config" in config_error, config_error
    assert result.json["project"]["state"]["exists"] is False
    assert [line for line in result.stderr.splitlines() if line.startswith("error: ")] == [f"error: {config_error}"]

    (project / "rig_config.py").write_text("from rigcli import sequence\n\nworkflows = sequence('w').task(\n")
    human = run_rig("doctor", cwd=project, subprocess=True)
    assert human.returncode == 1, human
    assert "rig_config.py:3" in human.stderr and "SyntaxError" in human.stderr, human
    assert "Traceback" not in human.stderr and "rig home" in human.stdout  # the report is still shown


def test_providers_clear_deletes_host_storage_without_a_project(tmp_path: Path) -> None:
    seed = HostStorage("local")
    seed.set("a", 1)
    seed.set("b", {"x": 2})
    storage_path = str(seed.path)
    result = run_rig("providers", "local", "clear", "--json", cwd=tmp_path)
    assert result.returncode == 0, result
    assert result.json == {"provider_id": "local", "deleted": 2, "storage_path": storage_path}
    assert not Path(storage_path).exists()
    again = run_rig("providers", "local", "clear", cwd=tmp_path)
    assert again.stdout == "No local provider state to clear.\n"


def test_providers_unknown_action(tmp_path: Path) -> None:
    result = run_rig("providers", "local", "wipe", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "error: Unknown providers action wipe. Expected clear.\n"


def test_internal_error_exits_3_with_a_log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(opts: object) -> int:
        raise ValueError("kaboom")

    monkeypatch.setattr(project_commands, "version", broken)
    completed = run_rig("version", "--json", cwd=tmp_path)
    assert completed.returncode == 3
    assert completed.stdout == ""
    [line] = completed.stderr.splitlines()
    assert line.startswith("error: unexpected internal error: ValueError: kaboom (traceback in ")
    log = Path(line.rsplit("traceback in ", 1)[1].rstrip(")"))
    text = log.read_text()
    assert "Traceback" in text and "kaboom" in text and __version__ in text


def test_internal_error_with_debug_prints_the_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(project_commands, "version", lambda opts: 1 / 0)
    completed = run_rig("version", "--json", cwd=tmp_path, env={"RIG_DEBUG": "1"})
    assert completed.returncode == 3
    assert "Traceback" in completed.stderr and "ZeroDivisionError" in completed.stderr


def test_config_calling_sys_exit_is_reported(tmp_path: Path) -> None:
    write_project(tmp_path, "import sys\nsys.exit(5)\n")
    result = run_rig("plan", "--json", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"error: {tmp_path / 'rig_config.py'}:2: called sys.exit(5) while loading\n"
