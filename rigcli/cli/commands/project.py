"""Commands that need no loaded project: init, projects, version and providers PROVIDER clear."""

from __future__ import annotations

import os
from pathlib import Path

from rigcli._version import __version__
from rigcli.cli.output import emit_json
from rigcli.cli.session import GlobalOptions
from rigcli.cli.starter import GITIGNORE_RULE, STARTER_CONFIG
from rigcli.discovery import base_dir, scan_projects
from rigcli.errors import RigError, UsageError
from rigcli.layout import CONFIG_FILE

_IGNORE_SPELLINGS = frozenset({".rig", ".rig/", "/.rig", "/.rig/", ".rig/*", "/.rig/*"})


def version(opts: GlobalOptions) -> int:
    if opts.json:
        emit_json({"version": __version__})
    else:
        print(__version__)
    return 0


def init(opts: GlobalOptions) -> int:
    base = Path.cwd() / opts.chdir if opts.chdir else Path.cwd()
    # Absolute but not resolved: a symlinked rig_config.py must not send the write elsewhere.
    config_path = Path(os.path.abspath(base / (opts.config or CONFIG_FILE)))
    if config_path.exists():
        raise RigError(f"{config_path} already exists.")
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
    project_dir.mkdir(parents=True, exist_ok=True)
    try:
        with config_path.open("x", encoding="utf-8") as handle:
            handle.write(STARTER_CONFIG)
    except FileExistsError:
        raise RigError(f"{config_path} already exists.") from None
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
    from rigcli.render.lines import glyphs
    from rigcli.render.tables import print_message, print_next_steps

    print_message(f"{glyphs().ok} wrote {config_path}", style="green", err=False)
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
    found = [item.to_json() for item in scan_projects(base_dir(opts.chdir))]
    if opts.json:
        emit_json({"projects": found})
        return 0
    from rigcli.render.tables import print_table

    print_table(
        ["project", "config"],
        [[item["project_dir"], item["config_path"]] for item in found],
        empty="no rig projects found",
    )
    return 0


def providers(opts: GlobalOptions, provider_id: str, action: str) -> int:
    """Forget a provider's per-user records (credentials) without loading any project."""
    from rigcli.state import HostStorage

    if action != "clear":
        raise UsageError(f"Unknown providers action {action}. Expected clear.")
    storage = HostStorage(provider_id)
    deleted = storage.clear()
    if opts.json:
        emit_json({"provider_id": provider_id, "deleted": deleted, "storage_path": str(storage.path)})
        return 0
    from rigcli.render.tables import print_message

    if deleted:
        noun = "entry" if deleted == 1 else "entries"
        print_message(f"Cleared {deleted} {provider_id} provider {noun}.", err=False)
    else:
        print_message(f"No {provider_id} provider state to clear.", err=False)
    return 0


__all__ = ["init", "projects", "providers", "version"]
