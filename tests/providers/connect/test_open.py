"""`rig open` on a local and a docker workspace: the VS Code and Cursor Remote-SSH URLs, `--print` changing
nothing, the ssh config installed before a URL is handed to `$BROWSER` (a script that records what it
was given), the browser URL of a running `rig forward`; and `rig ls --json`'s `ssh` and `ports`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.providers.connect.conftest import Reached
from tests.providers.connect.test_forward import Forwarding, free_port


def _workdir(reached: Reached) -> str:
    return reached.rig("exec", "dev", "--", "pwd").stdout.strip()


def test_print_gives_the_editor_urls_and_changes_nothing(reached: Reached) -> None:
    workdir = _workdir(reached)
    cases = [
        ([], f"vscode://vscode-remote/ssh-remote+dev.proj.rig{workdir}"),
        (["--editor", "code", "src"], f"vscode://vscode-remote/ssh-remote+dev.proj.rig{workdir}/src"),
        (["--editor", "cursor"], f"cursor://vscode-remote/ssh-remote+dev.proj.rig{workdir}"),
        (["/etc", "--editor", "cursor"], "cursor://vscode-remote/ssh-remote+dev.proj.rig/etc"),
    ]
    for args, url in cases:
        done = reached.rig("open", "dev", *args, "--print")
        assert done.returncode == 0, done.stderr
        assert done.stdout == url + "\n"
    as_json = reached.rig("open", "dev", "--print", "--json")
    assert json.loads(as_json.stdout) == {"workspace": "dev", "editor": "code", "url": cases[0][1], "opened": False}
    assert not (reached.home / ".ssh").exists()


def _fake_browser(tmp_path: Path) -> tuple[dict[str, str], Path]:
    record = tmp_path / "opened.txt"
    script = tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {record}\n')
    script.chmod(0o755)
    return {"BROWSER": str(script)}, record


def test_the_url_goes_to_browser_after_the_ssh_config_is_installed(reached: Reached, tmp_path: Path) -> None:
    extra, record = _fake_browser(tmp_path)
    env = {**reached.env, **extra}
    user_config = reached.home / ".ssh" / "config"
    try:
        done = reached.rig("open", "dev", "--editor", "cursor", env=env)
        assert done.returncode == 0, done.stderr
        url = f"cursor://vscode-remote/ssh-remote+dev.proj.rig{_workdir(reached)}"
        assert record.read_text() == url + "\n"
        assert "installed this project's ssh hosts" in done.stderr
        include = [line for line in user_config.read_text().splitlines() if line.startswith("Include ")]
        assert len(include) == 1
        installed = Path(include[0].split(" ", 1)[1].strip('"'))
        assert "Host dev.proj.rig" in installed.read_text()
        again = reached.rig("open", "dev", env=env)
        assert again.returncode == 0, again.stderr
        assert "installed" not in again.stderr  # already there: nothing changed
        assert record.read_text().splitlines()[-1].startswith("vscode://vscode-remote/ssh-remote+dev.proj.rig/")
    finally:
        reached.rig("ssh-config", "--uninstall")


def test_browser_opens_the_first_declared_port_of_a_running_forward(reached: Reached, tmp_path: Path) -> None:
    extra, record = _fake_browser(tmp_path)
    env = {**reached.env, **extra}
    none = reached.rig("open", "dev", "--editor", "browser", env=env)
    assert none.returncode == 1
    assert none.stderr.strip() == (
        f"error: No rig forward is running for workspace dev's port {reached.declared}; start one: rig forward dev"
    )
    assert not record.exists()
    local = free_port()
    forwarding = Forwarding(reached, f"{local}:{reached.declared}")
    try:
        forwarding.lines(1)
        printed = reached.rig("open", "dev", "--editor", "browser", "--print")
        assert printed.stdout == f"http://127.0.0.1:{local}\n", printed.stderr
        opened = reached.rig("open", "dev", "status", "--editor", "browser", env=env)
        assert opened.returncode == 0, opened.stderr
        assert record.read_text() == f"http://127.0.0.1:{local}/status\n"
    finally:
        forwarding.stop()
    gone = reached.rig("open", "dev", "--editor", "browser", "--print")
    assert gone.returncode == 1 and "start one" in gone.stderr


def test_an_unknown_workspace_or_editor(reached: Reached) -> None:
    unknown = reached.rig("open", "nosuch", "--print")
    assert unknown.returncode == 1 and unknown.stderr.strip() == 'error: Unknown workspace "nosuch"'
    editor = reached.rig("open", "dev", "--editor", "vim", "--print")
    assert editor.returncode == 2


def test_ls_json_gives_each_workspace_its_ssh_alias_and_ports(reached: Reached) -> None:
    for _ in range(2):  # the first rig ls loads the config; the next answers from what it remembered
        done = reached.rig("ls", "--json")
        assert done.returncode == 0, done.stderr
        (workspace,) = json.loads(done.stdout)["workflows"][0]["workspaces"]
        assert workspace["ssh"] == "dev.proj.rig"
        assert workspace["ports"] == [{"port": reached.declared, "label": "", "protocol": "http"}]
