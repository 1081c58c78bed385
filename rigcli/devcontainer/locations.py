"""Where a project keeps its dev container configurations, and which workflow each one is.

``.devcontainer/devcontainer.json`` or ``.devcontainer.json`` (one configuration, its workflow named
after its ``name``), and ``.devcontainer/NAME/devcontainer.json`` (a workflow named NAME each). Only
plain ``os`` here: discovery asks ``has_config`` on its way up from the working directory.
"""

from __future__ import annotations

import os

CONFIG_NAME = "devcontainer.json"
FOLDER = ".devcontainer"
PLAIN_LOCATIONS = (f"{FOLDER}/{CONFIG_NAME}", f".{CONFIG_NAME}")


def has_config(directory: str) -> bool:
    """Whether ``directory`` holds a dev container configuration in any of the three places."""
    if any(os.path.isfile(os.path.join(directory, place)) for place in PLAIN_LOCATIONS):
        return True
    return bool(named_configs(directory))


def named_configs(directory: str) -> list[str]:
    """``.devcontainer/NAME/devcontainer.json`` paths (relative to ``directory``), sorted by NAME."""
    folder = os.path.join(directory, FOLDER)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        f"{FOLDER}/{name}/{CONFIG_NAME}" for name in names if os.path.isfile(os.path.join(folder, name, CONFIG_NAME))
    ]


def config_paths(directory: str) -> list[str]:
    """Every configuration of ``directory`` relative to it: the plain one first (the first of the two
    places that has one), then the named ones."""
    plain = [place for place in PLAIN_LOCATIONS if os.path.isfile(os.path.join(directory, place))][:1]
    return plain + named_configs(directory)


def named_workflow(relative: str) -> str | None:
    """NAME for ``.devcontainer/NAME/devcontainer.json``, else None (the configuration's ``name`` decides)."""
    parts = relative.replace(os.sep, "/").split("/")
    if len(parts) >= 3 and parts[-1] == CONFIG_NAME and parts[-3] == FOLDER:
        return parts[-2]
    return None


def starter_config(paths: list[str]) -> str:
    """The ``rig_config.py`` that zero config stands for, and ``rig init --devcontainer`` writes."""
    lines = ["from rigcli.devcontainer import devcontainer_workflow", ""]
    if len(paths) == 1:
        lines.append(f"workflows = devcontainer_workflow({paths[0]!r})".replace("'", '"'))
    else:
        lines.append("workflows = [")
        lines.extend(f'    devcontainer_workflow("{path}"),' for path in paths)
        lines.append("]")
    return "\n".join(lines) + "\n"


__all__ = ["CONFIG_NAME", "FOLDER", "config_paths", "has_config", "named_configs", "named_workflow", "starter_config"]
