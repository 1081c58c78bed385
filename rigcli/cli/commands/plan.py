"""rig plan: most often answered without loading the config (``lean_plan.py``), else planned the full way."""

from __future__ import annotations

from rigcli.cli.spec import GlobalOptions


def plan(opts: GlobalOptions, *, detailed_exitcode: bool = False) -> int:
    if not opts.json_stream:
        from rigcli.cli.commands.lean_plan import plan_lean

        code = plan_lean(opts, detailed_exitcode=detailed_exitcode)
        if code is not None:
            return code
    from rigcli.speed.imports import import_for_the_full_way

    import_for_the_full_way()  # before the full way imports the records and paths (cli/invoke.py)
    from rigcli.cli.commands.workflow import plan as plan_fully
    from rigcli.cli.session import Session

    with Session(opts) as session:
        return plan_fully(session, detailed_exitcode=detailed_exitcode)


__all__ = ["plan"]
