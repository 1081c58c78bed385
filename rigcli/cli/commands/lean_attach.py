"""``rig shell WS`` and ``rig exec WS -- CMD`` without the config or the engine: straight to the provider.

The full way (``attach.py``) loads the config to learn whether the project has its own
``shell``/``exec`` operation and how its providers are configured, opens the store (schema sync,
reaping) and probes the machine before it asks the provider to attach: ~150 ms before a
``docker exec``'s two requests. Here the project and its state are found by the same rules
(``discovery``, ``state_location``); what the config says comes from what the last full load
remembered (``speed/attach_memo.py``, valid while the project's files are unchanged); the
workspace and its effects are read from the file (``state/workspace_file.py``); and the
provider's plugin attaches from the definition's config alone (``SupportsDirectAttach``).

Only the plain case is taken: SQLite state, no workspace due to expire, one ready workspace of
that name with one live effect, a workflow without its own ``shell``/``exec`` operation, one
definition of that provider (or none: its defaults), and a plugin that can attach directly and
did. Anything else — including a machine that is stopped or gone — returns None before the
program starts, and the full way answers as always (with ``--start``, it starts the machine).
"""

from __future__ import annotations

import os

from rigcli.cli.spec import GlobalOptions

# Not typing.TYPE_CHECKING: this path imports no typing of its own (rigcli/__init__.py).
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from rigcli.speed.attach_memo import Remembered


def attach_lean(opts: GlobalOptions, name: str, argv: Sequence[str] | None, operation: str) -> int | None:
    """Run the program in workspace ``name`` and return its exit code, or start nothing and return None."""
    if opts.json or opts.json_stream:
        return None
    from rigcli._version import __version__
    from rigcli.cli.commands.lean_start import lean_start
    from rigcli.speed.attach_memo import ATTACH_SECTION, workflow_entry
    from rigcli.speed.task_names import recall_section

    start = lean_start(opts)
    if start is None:
        return None
    section = recall_section(
        start.cache_dir, version=__version__, config_path=start.config_path, section=ATTACH_SECTION
    )
    if section is None:
        return None
    from rigcli.state.workspace_file import WorkspaceFile

    opened = WorkspaceFile.open(start.state_path)
    if opened is None:
        return None
    try:
        if opened.expiry_due():
            return None
        found = [item for item in opened.named(name) if opts.workflow in (None, item.workflow)]
        if len(found) != 1 or found[0].status != "ready":
            return None
        effects = opened.live_effects(found[0].id)
    finally:
        opened.close()
    remembered = workflow_entry(section, found[0].workflow)
    if remembered is None or operation in remembered.operations or effects is None or len(effects) != 1:
        return None
    return _attach(remembered, effects[0], argv)


def _attach(remembered: Remembered, effect: dict[str, object], argv: Sequence[str] | None) -> int | None:
    """The one machine's provider attaches, from its one definition's config (or its defaults)."""
    from rigcli.speed.attach_memo import Unresolvable, resolve

    provider_id = str(effect.pop("provider_id"))
    configs = remembered.configs_for(provider_id)
    if configs is None or len(configs) > 1:
        return None
    attach = _direct_attach(provider_id)
    if attach is None:
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
    tty = os.isatty(0) and (argv is None or os.isatty(1))
    env: Mapping[str, str] = {"TERM": os.environ.get("TERM") or "xterm"} if tty else {}
    code = attach(config, effect, list(argv) if argv is not None else None, tty=tty, env=env)
    return None if code is None else int(code)


def _direct_attach(provider_id: str) -> Callable[..., int | None] | None:
    """The installed plugin's ``attach_directly`` (``SupportsDirectAttach``), or None."""
    from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values, load
    from rigcli.state.paths import plugin_index_path

    try:
        value = entry_point_values(PROVIDERS_GROUP, plugin_index_path()).get(provider_id)
        plugin = None if value is None else load(value)
    except Exception:  # a plugin that fails to load: the full way says so, in its words
        return None
    attach = getattr(plugin, "attach_directly", None)
    return attach if callable(attach) else None


__all__ = ["attach_lean"]
