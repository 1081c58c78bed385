"""Call a workspace hook or an operation: what fork, rm and ``rig op`` share to run project code."""

from __future__ import annotations

import contextlib

from rigcli.engine.effects import Owner
from rigcli.engine.invoke import NamedContext, build_kwargs, call_handler, freeze
from rigcli.engine.project import Project
from rigcli.engine.session import ProviderSession
from rigcli.graph import CompiledWorkflow, HookSpec
from rigcli.host import operation_consent
from rigcli.jsonutil import JsonValue
from rigcli.speed.coroutines import need_event_loop


async def run_hook(
    project: Project,
    workflow: CompiledWorkflow,
    session: ProviderSession,
    hook: HookSpec,
    *,
    node_path: str,
    workflow_ctx: JsonValue,
    workspace: NamedContext | None,
    input_value: object = None,
    consented: bool = False,
    owner: Owner | None = None,
) -> object:
    """Call ``hook`` with what it names; ``consented``: an operation the user named, so its host
    commands need no asking; ``owner``: whom the effects its providers journal belong to."""
    await need_event_loop()  # hooks run in a worker thread that reports back to the loop
    from rigcli.engine import capture  # with logging, only when a hook really runs

    fixed: dict[str, object] = {
        "config": freeze({}),
        "local": project.local,
        "log": capture.handler_logger(node_path),
        "workflow": NamedContext(workflow.name, freeze(workflow_ctx)),
        "workspace": workspace,
        "input": input_value,
        "step": None,
    }
    factories = session.runtime_factories(
        hook.providers, node_path=node_path, workspace=workspace.name if workspace else None, owner=owner
    )
    # Entered here, on the loop, so the consent is in the context the handler's thread copies.
    with operation_consent() if consented else contextlib.nullcontext():
        kwargs = await build_kwargs(hook.fn, fixed, factories)
        return await call_handler(hook.fn, kwargs, capture.NodeConsole(node_path, project.emit))


__all__ = ["run_hook"]
