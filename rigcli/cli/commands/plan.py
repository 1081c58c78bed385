"""rig plan: most often answered without loading the config (``lean_plan.py``), else planned the full way."""

from __future__ import annotations

from rigcli.cli.spec import GlobalOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rigcli.cli.session import Session


def plan(opts: GlobalOptions, *, detailed_exitcode: bool = False) -> int:
    if not opts.json_stream:
        from rigcli.cli.commands.lean_plan import plan_lean

        code = plan_lean(opts, detailed_exitcode=detailed_exitcode)
        if code is not None:
            return code
    from rigcli.cli.invoke import the_full_way

    def plan_fully(session: Session) -> int:
        from rigcli.cli.commands.workflow import plan as planned

        return planned(session, detailed_exitcode=detailed_exitcode)

    return the_full_way(opts, plan_fully)


__all__ = ["plan"]
