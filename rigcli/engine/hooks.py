"""Call a workspace hook or an operation: what fork, rm and ``rig op`` share to run project code."""

from __future__ import annotations

import contextlib

from rigcli.engine.effects import Owner
from rigcli.engine.invoke import NamedContext, build_kwargs, call_handler, freeze
from rigcli.engine.project import Project
from rigcli.engine.session import ProviderSession
from rigcli.errors import InterruptedRunError
from rigcli.graph import CompiledWorkflow, HookSpec
from rigcli.host import operation_consent
from rigcli.jsonutil import JsonValue


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
    # No need_event_loop() here: a sync hook runs in a worker thread, on the loop's if one runs,
    # else while the runner waits for it (call_handler asks for a loop when the hook is async).
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
    stopped = project.cancellation
    with operation_consent() if consented else contextlib.nullcontext():
        kwargs = await build_kwargs(hook.fn, fixed, factories)
        try:
            result = await call_handler(hook.fn, kwargs, capture.NodeConsole(node_path, project.emit))
        except Exception as exc:
            if stopped.is_set():  # its failure came from the stop (its child got the same Ctrl-C)
                raise InterruptedRunError("interrupted") from exc
            raise
    if stopped.is_set():  # however it ended, the user stopped it: never a success
        raise InterruptedRunError("interrupted")
    return result


__all__ = ["run_hook"]
