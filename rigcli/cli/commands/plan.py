"""rig plan: which tasks of a workflow are cached or pending, and why (the plan may be remembered: rigcli/cache/)."""

from __future__ import annotations

from rigcli.cli.output import emit_json
from rigcli.render.tables import print_message, print_plan

TYPE_CHECKING = False  # not typing's: a remembered plan's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli.cache.answers import PlanAnswer
    from rigcli.cli.session import Session


def plan_hint(answer: PlanAnswer) -> str:
    """The line under a plan with something pending."""
    flag = "" if answer.sole else f" --workflow {answer.workflow}"
    return f"For cache details, run: rig cache explain{flag}"


def plan(session: Session, *, detailed_exitcode: bool = False) -> int:
    answer = session.answers.plan()  # with --detailed-exitcode, any error exits 1 (the table's error_code)
    if session.opts.json:
        emit_json(answer.document)
    else:
        print_plan(answer.document)
        if answer.pending:
            print_message(plan_hint(answer), style="dim", err=False)
    return 2 if detailed_exitcode and answer.pending else 0


__all__ = ["plan", "plan_hint"]
