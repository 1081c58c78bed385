"""``rig logs TASK`` without the config or the engine: a finished run's stored output copied straight out.

The full way (``history.py:_logs``) loads the config to learn which runs TASK means, opens the
store (schema sync, metadata, reaping) and builds the engine: ~0.3 s before the first byte,
several times what copying 50 MB of stored output to a pipe costs. Here the project and its
state are found by the same rule (``discovery``, ``state_location``); the task is named by what
the last full load remembered (``speed/task_names.py``, valid while the project's files are
unchanged); the file is read by ``state/output_file.py``. Only the plain case is taken: SQLite
state, a task that names one task of the workflow the command means, and its newest run
succeeded, and no workspace is due to expire. Anything else — a running, failed or missing run,
a changed config, PostgreSQL, a fragment's task, an expiry to carry out — returns False before a
byte is written, and the full way answers as always.
"""

from __future__ import annotations

import sys

from rigcli.cli.spec import GlobalOptions


def copy_last_run(opts: GlobalOptions, task: str) -> bool:
    """Copy TASK's last run's stored output to stdout and return True, or do nothing and return False."""
    from rigcli._version import __version__
    from rigcli.cli.commands.lean_start import lean_start
    from rigcli.speed.task_names import match, recall

    start = lean_start(opts)
    if start is None:
        return False
    workflows = recall(start.cache_dir, version=__version__, config_path=start.config_path)
    named = None if workflows is None else match(workflows, opts.workflow, task)
    if named is None:
        return False
    workflow, (_, cache_path, _, store) = named
    if store != "local":  # a global fragment's runs live in $RIG_HOME, found through the config
        return False
    from rigcli.state.output_file import OutputFile

    opened = OutputFile.open(start.state_path)
    if opened is None:
        return False
    try:
        found = None if opened.expiry_due() else opened.last_run(workflow, cache_path)
        if found is None:
            return False
        from rigcli.render.console import no_color
        from rigcli.render.stored_bytes import StoredBytes
        from rigcli.speed.pipes import widen_pipe

        # No Session here, so no output relay: stdout is the process's own, and what was stored
        # was masked on its way in. Colour only on a terminal that wants it, as LogWriter decides.
        stdout = sys.stdout.buffer
        widen_pipe(stdout.fileno())
        writer = StoredBytes(stdout.write, colour=stdout.isatty() and not no_color())
        for data, ends_chunk in opened.pieces(found.id):
            writer.write(data, ends_chunk=ends_chunk)
        stdout.flush()
    finally:
        opened.close()
    return True


__all__ = ["copy_last_run"]
