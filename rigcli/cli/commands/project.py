"""Commands that need no loaded project: init, projects, version and providers PROVIDER clear."""

from __future__ import annotations

import os
import re
from pathlib import Path

from rigcli._version import __version__
from rigcli.cli.output import emit_json
from rigcli.cli.session import GlobalOptions
from rigcli.cli.starter import GITIGNORE_RULE, TEMPLATES
from rigcli.discovery import base_dir, scan_projects
from rigcli.errors import NotFoundError, RigError, UsageError
from rigcli.layout import CONFIG_FILE, STATE_DIR
from rigcli.render.lines import glyphs
from rigcli.render.tables import print_message, print_next_steps, print_table
from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values
from rigcli.state import HostStorage
from rigcli.state.paths import plugin_index_file

_IGNORE_SPELLINGS = frozenset({".rig", ".rig/", "/.rig", "/.rig/", ".rig/*", "/.rig/*"})


def version(opts: GlobalOptions) -> int:
    if opts.json:
        emit_json({"version": __version__})
    else:
        print(__version__)
    return 0


def init(opts: GlobalOptions, *, template: str = "local", devcontainer: bool = False) -> int:
    base = Path.cwd() / opts.chdir if opts.chdir else Path.cwd()
    # Absolute but not resolved: a symlinked rig_config.py must not send the write elsewhere.
    config_path = Path(os.path.abspath(base / (opts.config or CONFIG_FILE)))
    if config_path.exists():
        raise RigError(_already_there(config_path))
    project_dir = config_path.parent
    for path in (config_path, project_dir / ".gitignore"):
        if path.is_symlink() and not path.exists():
            raise RigError(
                f"{path} is a symlink to {os.readlink(path)}, which does not exist; "
                "rig init writes nothing through it (remove the link first)"
            )
    gitignore = project_dir / ".gitignore"
    if gitignore.exists() and not gitignore.is_file():
        # Checked before anything is written: a failed init leaves the directory as it was.
        kind = "a directory" if gitignore.is_dir() else "not a regular file"
        raise RigError(f"{gitignore} is {kind}; rig init adds {GITIGNORE_RULE} to it (move it aside first)")
    text, about = TEMPLATES[template]
    if devcontainer:
        template, (text, about) = "devcontainer", _devcontainer_starter(project_dir)
    project_dir.mkdir(parents=True, exist_ok=True)
    try:
        with config_path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise RigError(_already_there(config_path)) from None
    created_ignore = not gitignore.exists()
    try:
        updated_ignore = _ensure_ignored(gitignore)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RigError(f"wrote {config_path}, but could not add {GITIGNORE_RULE} to {gitignore}: {reason}") from None
    result = {
        "project_dir": str(project_dir),
        "config_path": str(config_path),
        "created": {"config": True, "gitignore": created_ignore},
        "updated": {"gitignore": updated_ignore and not created_ignore},
    }
    if opts.json:
        emit_json(result)
        return 0

    print_message(f"{glyphs().ok} wrote {config_path}", style="green", err=False)
    print_message(f"  template {template}: {about}", style="dim", err=False)
    if updated_ignore:
        print_message(f"  added {GITIGNORE_RULE} to {gitignore}", style="dim", err=False)
    steps = [] if project_dir.resolve() == Path.cwd().resolve() else [(f"cd {os.path.relpath(project_dir)}", "")]
    steps += [
        ("rig plan", "See what apply would run"),
        ("rig apply", "Prepare the machine"),
        ("rig fork demo", "Make a workspace from it"),
    ]
    print_next_steps(steps, err=False)
    return 0


def _devcontainer_starter(project_dir: Path) -> tuple[str, str]:
    """``rig init --devcontainer``: exactly what zero config stands for, and what it is."""
    from rigcli.devcontainer.locations import config_paths, starter_config

    found = config_paths(str(project_dir))
    if not found:
        raise RigError(
            f"No dev container configuration in {project_dir} (.devcontainer/devcontainer.json, "
            ".devcontainer.json or .devcontainer/NAME/devcontainer.json)"
        )
    return starter_config(found), f"the workflow of {', '.join(found)}, to extend with tasks and operations"


def _already_there(config_path: Path) -> str:
    """A second ``rig init``: what exists, and how to start over."""
    state = config_path.parent / STATE_DIR
    kept = f" and its state in {state}" if state.exists() else ""
    remove = f"rm {config_path}" + (f"; rm -r {state}" if state.exists() else "")
    return (
        f"{config_path} already exists: this is a rig project{kept}; rig init never overwrites. "
        f"To start over: {remove}; rig init (or edit it and run rig plan)"
    )


def _ensure_ignored(gitignore: Path) -> bool:
    """Add the .rig/ rule once; True when the file was written."""
    # surrogateescape: a line in another encoding is kept byte for byte, not a reason to fail.
    text = gitignore.read_text(encoding="utf-8", errors="surrogateescape") if gitignore.exists() else ""
    if any(line.strip() in _IGNORE_SPELLINGS for line in text.splitlines()):
        return False
    separator = "" if not text or text.endswith("\n") else "\n"
    gitignore.write_text(f"{text}{separator}{GITIGNORE_RULE}\n", encoding="utf-8", errors="surrogateescape")
    return True


def projects(opts: GlobalOptions) -> int:
    base = base_dir(opts.chdir)
    located = scan_projects(base)
    if opts.json:
        emit_json({"projects": [item.to_json() for item in located]})
        return 0

    # Hundreds of projects stay readable: paths relative to where the scan began (named once,
    # in the title), in natural order (proj-2 before proj-10).
    rows = sorted(
        (
            [os.path.relpath(item.project_dir, base), os.path.relpath(item.config_path, item.project_dir)]
            for item in located
        ),
        key=lambda row: _natural(row[0]),
    )
    noun = "project" if len(rows) == 1 else "projects"
    print_table(
        ["project", "config"],
        rows,
        empty="no rig projects found",
        title=f"{len(rows)} rig {noun} at or below {base}" if rows else None,
    )
    return 0


def _natural(path: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", path) if part]


def providers(opts: GlobalOptions, provider_id: str, action: str) -> int:
    """Forget a provider's per-user records (credentials) without loading any project."""

    if action != "clear":
        raise UsageError(f"Unknown providers action {action}. Expected clear.")
    storage = HostStorage(provider_id)
    if not storage.path.exists():
        # A typo must not read as "nothing to clear": a provider rig knows of, or one that stored something.

        installed = sorted(entry_point_values(PROVIDERS_GROUP, plugin_index_file()))
        if provider_id not in installed:
            raise NotFoundError(
                f"Unknown provider {provider_id}: it is not installed and has no per-user state "
                f"(installed: {', '.join(installed) or 'none'})"
            )
    deleted = storage.clear()
    if opts.json:
        emit_json({"provider_id": provider_id, "deleted": deleted, "storage_path": str(storage.path)})
        return 0

    if deleted:
        noun = "entry" if deleted == 1 else "entries"
        print_message(f"Cleared {deleted} {provider_id} provider {noun}.", err=False)
    else:
        print_message(f"No {provider_id} provider state to clear.", err=False)
    return 0


__all__ = ["init", "projects", "providers", "version"]
