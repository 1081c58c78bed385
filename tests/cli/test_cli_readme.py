"""The README stays true: its two opening commands and its config example.

That every command is documented is checked on docs/commands.md (tests/cli/test_cli_reference.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.cli_support import REPO_ROOT, run_rig, write_project

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_the_main_job_and_the_test_command() -> None:
    before_first_section = README.split("\n## ", 1)[0]
    commands = [body.strip() for kind, body in BLOCKS[:2]]
    assert all(block in before_first_section for block in commands)
    assert len(re.findall(r"```", before_first_section)) == 4  # exactly two blocks up there
    assert commands[0].startswith("python3 -m pip install -e . && rig -C examples/quickstart apply")
    assert commands[1] == "python3 -m pip install -e '.[test]' && python3 -m pytest -n 2"
    assert 'TEST_CMD="python3 -m pytest -n 2"' in (REPO_ROOT / ".ci" / "run").read_text()


def test_readme_config_example_loads(tmp_path: Path) -> None:
    [config] = [body for kind, body in BLOCKS if kind == "python"]
    project = write_project(tmp_path / "readme", config)
    result = run_rig("plan", "--json", cwd=project, subprocess=True)
    assert result.returncode == 0, result
    assert result.json["workflow"] == "dev"
    ops = run_rig("ls", "config", "--json", cwd=project, subprocess=True).json["workflows"][0]["workspace_operations"]
    assert ops == ["test"]  # `exec` and `shell` are rig's own commands
