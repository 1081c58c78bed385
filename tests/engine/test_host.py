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
    opener.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {marker}\n')
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
