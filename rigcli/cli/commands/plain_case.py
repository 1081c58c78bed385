"""The plain case ``rig shell``/``rig exec`` and the connect commands take without the engine: SQLite
state with no workspace due to expire, one ready workspace with one machine, one definition of its
provider (or none: its defaults), resolved from what the config says (the cache's ``config`` answer),
and the installed plugin's speed hook (``provider_api/direct.py``)."""

from __future__ import annotations

import os

from rigcli.cache.configs import definition_config
from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values, load
from rigcli.state.paths import plugin_index_path
from rigcli.state.workspace_file import WorkspaceFile

TYPE_CHECKING = False  # not typing's: the direct way imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from collections.abc import Callable

    from rigcli.cache.answers import ConfigAnswer
    from rigcli.cli.session import Session


class PlainMachine:
    """The workspace's one machine as the state file has it, and its provider's resolved definition."""

    __slots__ = ("config", "effect", "project_dir", "provenance", "provider_id", "state_path", "workflow")

    def __init__(
        self,
        workflow: str,
        provider_id: str,
        effect: dict[str, object],
        provenance: object,
        config: dict[str, object],
        state_path: str,
        project_dir: str,
    ) -> None:
        self.workflow = workflow
        self.provider_id = provider_id
        self.effect = effect
        self.provenance = provenance  # what it was made from (its declared ports among it)
        self.config = config
        self.state_path = state_path
        self.project_dir = project_dir

    @property
    def state_dir(self) -> str:
        return os.path.dirname(self.state_path)


def plain_machine(session: Session, answer: ConfigAnswer, name: str) -> PlainMachine | None:
    """Workspace ``name``'s machine in the plain case, or None (nothing read further, nothing started)."""
    start = session.answers.start
    if start is None or start.state_path is None:
        return None
    opened = WorkspaceFile.open(start.state_path)
    if opened is None:
        return None
    try:
        if opened.expiry_due():
            return None
        found = [item for item in opened.named(name) if session.opts.workflow in (None, item.workflow)]
        if len(found) != 1 or found[0].status != "ready" or found[0].workflow not in answer.workflows:
            return None
        effects = opened.live_effects(found[0].id)
        provenance = opened.provenance(found[0].id)
    finally:
        opened.close()
    if effects is None or len(effects) != 1:
        return None
    workflow = found[0].workflow
    effect = effects[0]
    provider_id = str(effect.pop("provider_id"))
    config = definition_config(answer.provider_configs(workflow, provider_id))
    if config is None:
        return None
    return PlainMachine(workflow, provider_id, effect, provenance, config, start.state_path, start.project_dir)


def plugin_hook(provider_id: str, hook: str) -> Callable[..., object] | None:
    """The installed plugin's ``hook`` (``attach_directly``, ``connect_directly``), or None."""
    try:
        value = entry_point_values(PROVIDERS_GROUP, plugin_index_path()).get(provider_id)
        plugin = None if value is None else load(value)
    except Exception:  # a plugin that fails to load: the engine's way says so, in its words
        return None
    found = getattr(plugin, hook, None)
    return found if callable(found) else None


__all__ = ["PlainMachine", "plain_machine", "plugin_hook"]
