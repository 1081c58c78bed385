"""``rig ssh-proxy``, ``rig cp`` and ``rig forward`` without the config or the engine: straight to the machine.

An ssh connection with no master running starts a proxy, and an editor opens several: loading the
project's config, the engine and the state for each costs more than the SSH handshake. As for
``rig shell``/``rig exec`` (``lean_attach.py``), the project and its SQLite state are found by the
same rules, the workspace and its one machine are read from the file, what the config says of its
provider comes from what the last full load remembered, and the plugin hands over that machine's
primitives from the definition's config alone (``SupportsDirectConnect``: docker's
``providers/docker/primitives.py``), once it has seen the machine running.

Only that plain case is taken. Anything else (a machine that is stopped, so the full way starts it
and says so; a local workspace, whose host rig must check; a provider without the hook) returns
None having started nothing, and the full way answers as always.
"""

from __future__ import annotations

import os

from rigcli.cli.spec import GlobalOptions

# Not typing.TYPE_CHECKING: mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rigcli.engine.connect_target import ConnectTarget


class LeanReach:
    """A machine reached the lean way: the target, its project's directory, and its primitives to close."""

    __slots__ = ("project_dir", "target")

    def __init__(self, target: ConnectTarget, project_dir: str) -> None:
        self.target = target
        self.project_dir = project_dir

    def close(self) -> None:
        close = getattr(self.target.controller, "close", None)
        if callable(close):
            close()


def reach_lean(opts: GlobalOptions, name: str, primitives: Sequence[str]) -> LeanReach | None:
    """The workspace's running machine with the ``primitives`` asked, or None (nothing started)."""
    from rigcli._version import __version__
    from rigcli.cli.commands.lean_start import lean_start
    from rigcli.speed.attach_memo import ATTACH_SECTION, workflow_entry
    from rigcli.speed.task_names import recall_section
    from rigcli.state.workspace_file import WorkspaceFile

    start = lean_start(opts)
    if start is None:
        return None
    section = recall_section(
        start.cache_dir, version=__version__, config_path=start.config_path, section=ATTACH_SECTION
    )
    opened = None if section is None else WorkspaceFile.open(start.state_path)
    if opened is None:
        return None
    try:
        if opened.expiry_due():
            return None
        found = [item for item in opened.named(name) if opts.workflow in (None, item.workflow)]
        if len(found) != 1 or found[0].status != "ready":
            return None
        effects = opened.live_effects(found[0].id)
        provenance = opened.provenance(found[0].id)
    finally:
        opened.close()
    remembered = workflow_entry(section, found[0].workflow)
    if remembered is None or effects is None or len(effects) != 1:
        return None
    effect = effects[0]
    provider_id = str(effect.pop("provider_id"))
    machine = _connect_directly(provider_id, remembered.configs_for(provider_id), effect)
    if machine is None:
        return None
    from rigcli.engine.connect_target import ConnectTarget
    from rigcli.provider_kit.connect import PRIMITIVES

    if not all(isinstance(machine, PRIMITIVES[wanted]) for wanted in primitives):
        close = getattr(machine, "close", None)
        if callable(close):
            close()
        return None  # the full way names what is missing
    ports = provenance.get("ports") if isinstance(provenance, dict) else None
    declared = tuple(port for port in ports if isinstance(port, dict)) if isinstance(ports, list) else ()
    target = ConnectTarget(name, found[0].workflow, provider_id, effect, machine, False, declared)  # type: ignore[arg-type]
    return LeanReach(target, os.path.dirname(start.config_path))


def _connect_directly(provider_id: str, configs: list[object] | None, effect: dict[str, object]) -> object | None:
    """The installed plugin's ``connect_directly`` on the one definition's resolved config, or None."""
    from rigcli.speed.attach_memo import Unresolvable, resolve
    from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values, load
    from rigcli.state.paths import plugin_index_path

    if configs is None or len(configs) > 1:
        return None
    try:
        value = entry_point_values(PROVIDERS_GROUP, plugin_index_path()).get(provider_id)
        plugin = None if value is None else load(value)
    except Exception:  # a plugin that fails to load: the full way says so, in its words
        return None
    connect = getattr(plugin, "connect_directly", None)
    if not callable(connect):
        return None
    secrets: list[str] = []
    try:
        config = resolve(configs[0], os.environ, secrets) if configs else {}
    except Unresolvable:
        return None
    if not isinstance(config, dict):
        return None
    if secrets:
        from rigcli import masking

        masking.register(*secrets)
    return connect(config, effect)


__all__ = ["LeanReach", "reach_lean"]
