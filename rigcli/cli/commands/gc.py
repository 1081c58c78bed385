"""rig gc: delete what rig made and nothing refers to; and the offer to do so after a cache change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.engine.garbage import JOURNAL_ONLY
from rigcli.errors import RigError
from rigcli.render.prompts import confirm
from rigcli.render.tables import print_message, print_table

if TYPE_CHECKING:
    from rigcli.engine.results import GcReport


def gc(session: Session, *, dry_run: bool = False, forget_unreachable: bool = False) -> int:
    """No confirmation: it only deletes what rig made and nothing live refers to.

    With --json the report is printed whatever happened (its ``failed`` and ``unreachable`` say
    what could not be done); a failure is then also one error line on stderr, and exit 1.
    A rig_config.py that does not import leaves the journal's part of the work (one warning says what not)."""
    session.config_optional = JOURNAL_ONLY
    engine = session.engine
    report = session.run(engine.garbage.collect_garbage(dry_run=dry_run, forget_unreachable=forget_unreachable))
    warn(report)
    if session.opts.json:
        emit_json(report.to_json())
        check(report)
    else:
        check(report)  # one error line, and no table that would look like success
        show(report)
    return 0


def warn(report: GcReport) -> None:
    """One line per place that refuses deletions (a registry without deletes): said, and no failure."""
    for warning in report.warnings():
        print_message(f"warning: {warning}", style="yellow")


def check(report: GcReport) -> None:
    """One error line when something could not be removed or looked for."""
    problems = [f"{item.provider_id} {item.kind} {item.id}: {item.reason}" for item in report.failed]
    if not report.forgetting:
        problems += [f"could not list what {where}" for where in report.unreachable]
    if problems:
        more = f"; and {len(problems) - 2} more" if len(problems) > 2 else ""
        msg = (
            f"gc removed {len(report.removed)}, but {'; '.join(problems[:2])}{more}. "
            "Nothing uncertain was taken as gone; run rig gc again once that is fixed"
        )
        raise RigError(msg)


def show(report: GcReport) -> None:
    action = "would remove" if report.dry_run else "removed"
    rows = [[action, item.provider_id, item.kind, item.id] for item in report.removed]
    rows += [["forgot", item.provider_id, item.kind, item.id] for item in report.forgotten]
    print_table(["", "provider", "kind", "id"], rows, empty="nothing to collect")
    for item in report.forgotten:
        print_message(f"forgot {item.kind} {item.id} (it may still exist): {item.reason}", style="yellow")
    if report.kept:
        noun = "resource" if len(report.kept) == 1 else "resources"
        print_message(f"kept {len(report.kept)} {noun} that cache entries or workspaces refer to", style="dim")


def offer(session: Session, *, requested: bool) -> GcReport | None:
    """After a cache change: collect what it orphaned with ``--gc``; in a terminal, ask first."""
    engine = session.engine
    if requested:
        report = session.run(engine.garbage.collect_garbage())
        warn(report)
        check(report)
        return report
    if not session.opts.interactive:
        return None
    preview = session.run(engine.garbage.collect_garbage(dry_run=True))
    if not preview.removed:
        return None

    count = len(preview.removed)
    noun = "machine or snapshot" if count == 1 else "machines and snapshots"
    if not confirm(f"Also delete the {count} {noun} nothing refers to any more (rig gc)?", default=False):
        return None
    report = session.run(engine.garbage.collect_garbage())
    warn(report)
    check(report)
    return report


__all__ = ["check", "gc", "offer", "show"]
