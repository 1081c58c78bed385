"""The engine room: plan, apply, fork and operations; talks outward only through events,
the state store, provider controllers and the host (``local``) interface.

Names load lazily: importing ``rigcli.engine.results`` must not pull in asyncio and the rest.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: importing a pure part of the engine (``engine/outdated.py``, for rig ls
# answered from the cache) imports neither typing nor pathlib; mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from rigcli.engine.api import Engine
    from rigcli.engine.hostadapter import SuppliedHost
    from rigcli.engine.providers import ProviderFactory
    from rigcli.engine.stores import FragmentLocator
    from rigcli.provider_api import ProviderPlugin
    from rigcli.state.api import StateStore
    from rigcli.state.factory import StateFactory
    from rigcli.state_location import StateGiven, StateLocation


def create_engine(
    project_dir: str | Path,
    *,
    config_path: str | Path | None = None,
    state_path: StateLocation | StateGiven | str | Path | None = None,
    providers: Iterable[ProviderPlugin] = (),
    provider_factory: ProviderFactory | None = None,
    local: SuppliedHost | None = None,
    interaction: object = None,
    host_storage_dir: str | Path | None = None,
    fragment_state_locator: FragmentLocator | None = None,
    state: StateStore | None = None,
    state_factory: StateFactory | None = None,
    lock_wait: bool = True,
) -> Engine:
    """An engine for the project in ``project_dir``; call ``await engine.load()`` before use.

    :param config_path: the config file (default ``<project_dir>/rig_config.py``).
    :param state_path: the project's state: a path, a ``postgresql://`` URL or a resolved location
        (default: ``$RIG_STATE_URL``, else ``<project_dir>/.rig/state.sqlite``).
    :param providers: provider plugins to use before the ``rig.providers`` entry points.
    :param provider_factory: ``factory(setup) -> controller`` for provider ids no plugin claims.
    :param local: the host's capabilities (prompts, ``open``, attached ``run``): a LocalHost, or an
        object or mapping with some of its methods (the rest come from the terminal host).
    :param interaction: an object or mapping with ``present(request)``, shown each interaction
        (browser logins) instead of the terminal host's default; it must not block.
    :param host_storage_dir: where providers' per-user storage lives (default ``$RIG_HOME/providers``).
    :param fragment_state_locator: ``locator(fragment) -> path`` for global fragment caches
        (default ``$RIG_HOME/fragments/<hash>/state.sqlite``).
    :param state: an already-made state store to use instead of opening one.
    :param state_factory: ``factory(project_dir=, config_path=, state_path=) -> store``.
    :param lock_wait: when another writer holds the state lock, wait (True) or raise
        StateLockedError at once (False, exit code 4).
    """
    from rigcli.engine.facade import ProjectEngine
    from rigcli.engine.project import Project

    project = Project(
        project_dir,
        config_path=config_path,
        state_path=state_path,
        providers=providers,
        provider_factory=provider_factory,
        local=local,
        interaction=interaction,
        host_storage_dir=host_storage_dir,
        fragment_state_locator=fragment_state_locator,
        state=state,
        state_factory=state_factory,
        lock_wait=lock_wait,
    )
    return ProjectEngine(project)


__all__ = ["create_engine"]
