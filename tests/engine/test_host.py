"""The default host: local.open prints the URL and opens a browser unless RIG_NO_BROWSER=1."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rigcli.host import TerminalHost


@pytest.fixture
def fake_opener(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ``xdg-open`` on PATH that records what it was asked to open."""
    marker = tmp_path / "opened.txt"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    opener = bin_dir / "xdg-open"
    # Written aside and renamed, so the marker never exists half-written: `>` creates the
    # file before printf fills it, and a test polling for it could read it empty.
    opener.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {marker}.part && mv {marker}.part {marker}\n')
    opener.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return marker


def test_open_prints_the_url_and_spawns_nothing_with_rig_no_browser(
    fake_opener: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RIG_NO_BROWSER", "1")
    TerminalHost(interactive=False).open("https://example.invalid/login")
    assert capfd.readouterr().err == "Open https://example.invalid/login\n"
    time.sleep(0.3)  # give a wrongly spawned opener time to write its marker
    assert not fake_opener.exists()


def test_open_uses_the_platform_opener_otherwise(
    fake_opener: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("RIG_NO_BROWSER", raising=False)
    TerminalHost(interactive=False).open("https://example.invalid/login")
    assert capfd.readouterr().err == "Open https://example.invalid/login\n"
    deadline = time.monotonic() + 10
    while not fake_opener.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake_opener.read_text() == "https://example.invalid/login"


def test_an_embedding_host_that_cannot_capture_falls_back_to_the_default_for_capture(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rigcli.engine.hostadapter import adapt_local

    ran: list[list[str]] = []

    def run(argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None) -> int:
        ran.append(list(argv))
        return 7

    monkeypatch.setenv("RIG_TRUST_HOST_COMMANDS", "1")
    host = adapt_local({"run": run, "request_capability": lambda capability_id, params: (capability_id, params)})
    assert host.run(["true"]) == 7 and ran == [["true"]]  # the embedding host's own run
    captured = host.run(["sh", "-c", "echo hi; exit 2"], capture=True)  # its run cannot capture: the default can
    assert captured == {"exit_code": 2, "stdout": "hi\n", "stderr": ""} and ran == [["true"]]
    assert host.request_capability("x", {"a": 1}) == ("x", {"a": 1})  # the embedding host answers itself


def test_a_host_capability_without_a_definition_is_an_error() -> None:
    from rigcli.errors import RigError

    with pytest.raises(RigError) as raised:
        TerminalHost(interactive=False).request_capability("nobody.defined.this")
    assert str(raised.value) == 'Host capability "nobody.defined.this" is not registered'
    assert raised.value.exit_code == 1
