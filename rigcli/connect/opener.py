"""``rig open``: the URL that opens a workspace in an editor (VS Code or Cursor over Remote-SSH) or a
browser (through a running ``rig forward``), and handing a URL to the user's browser."""

from __future__ import annotations

import os
import posixpath
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

from rigcli.errors import RigError

EDITORS = ("code", "cursor", "browser")
_SCHEMES = {"code": "vscode", "cursor": "cursor"}
_OPENER_SECONDS = 10.0  # an opener that is still running by then is left to run on its own


def editor_url(editor: str, alias: str, path: str) -> str:
    """``vscode://vscode-remote/ssh-remote+ALIAS/ABS_PATH`` (``cursor://`` for Cursor)."""
    return f"{_SCHEMES[editor]}://vscode-remote/ssh-remote+{alias}{posixpath.normpath(path)}"


def browser_url(
    name: str, ports: Sequence[Mapping[str, object]], forwards: Sequence[Mapping[str, object]], path: str | None
) -> str:
    """The local URL of the first declared port, as a running ``rig forward`` serves it."""
    if not ports:
        raise RigError(f"Workspace {name} declares no ports (workspace(ports=[...]) in rig_config.py)")
    first = ports[0]["port"]
    served = [forward for forward in forwards if forward.get("remote") == first]
    if not served:
        raise RigError(f"No rig forward is running for workspace {name}'s port {first}; start one: rig forward {name}")
    url = str(served[0]["url"])
    return url if not path else f"{url.rstrip('/')}/{path.lstrip('/')}"


def _openers(environ: Mapping[str, str]) -> list[list[str]]:
    """``$BROWSER`` (a ``:``-separated list, ``%s`` standing for the URL), else the platform's opener."""
    chosen = [shlex.split(entry) for entry in environ.get("BROWSER", "").split(os.pathsep) if entry.strip()]
    if chosen:
        return chosen
    for program in ("xdg-open", "open") if sys.platform != "darwin" else ("open",):
        if shutil.which(program):
            return [[program]]
    return []


def hand_to_browser(url: str, environ: Mapping[str, str] | None = None) -> str:
    """Run the first opener that takes ``url`` (waited for a moment, then left to run); which one."""
    openers = _openers(os.environ if environ is None else environ)
    if not openers:
        raise RigError(f"Nothing to open {url} with: set $BROWSER, or install xdg-open (rig open --print prints it)")
    said = ""
    for words in openers:
        argv = [word.replace("%s", url) for word in words] if any("%s" in word for word in words) else [*words, url]
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            said = f"{argv[0]}: {exc.strerror or exc}"
            continue
        try:
            code = process.wait(_OPENER_SECONDS)
        except subprocess.TimeoutExpired:
            return argv[0]  # a browser that stays in the foreground: it has the URL
        if code == 0:
            return argv[0]
        said = f"{argv[0]} exited with {code}"
    raise RigError(f"Could not open {url} ({said})")


__all__ = ["EDITORS", "browser_url", "editor_url", "hand_to_browser"]
