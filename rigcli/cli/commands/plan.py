"""rig plan: which tasks of a workflow are cached or pending, and why (the plan may be remembered: rigcli/cache/)."""

from __future__ import annotations

from rigcli.cli.output import emit_json
from rigcli.errors import ProviderError
from rigcli.render.tables import print_message, print_plan

TYPE_CHECKING = False  # not typing's: a remembered plan's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli.cache.answers import PlanAnswer
    from rigcli.cli.session import Session
    from rigcli.jsonutil import JsonObject


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
    failed = failed_check(answer.document)
    if failed is not None:
        raise ProviderError(failed)  # shown above in full; an error, with --detailed-exitcode too (1)
    return 2 if detailed_exitcode and answer.pending else 0


def failed_check(document: JsonObject) -> str | None:
    """The line naming the plan's provider checks that failed (``error``), or None when none did."""
    checks = document.get("provider_checks")
    failed = (
        [c for c in checks if isinstance(c, dict) and c.get("status") == "error"] if isinstance(checks, list) else []
    )
    if not failed:
        return None
    first = failed[0]
    name, label = first.get("provider_name") or first.get("provider_id"), first.get("label") or first.get("id")
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"Provider {name} check failed: {label}: {first.get('message') or 'error'}{more}"


__all__ = ["failed_check", "plan", "plan_hint"]
