"""rig's command line, spelled once: global options, commands, their arguments, options and aliases.

Built from it: the Typer app and every ``--help`` (``app.py``), the fast path for hot commands
(``argv.py``, ``fast.py``), completion (``complete.py``), ``rig help --json`` and the command
reference in docs/commands.md. A new command is a row in the section it belongs to (``workflow``,
``workspaces``, ``history``, ``admin``, ``connect``, or a new module of this package), named in ``COMMANDS``
below, plus its body. Import-cheap on purpose: it is read on every command line.
"""

from __future__ import annotations

from rigcli.cli.spec import GlobalOptions, Table
from rigcli.cli.table.admin import COMPLETION, DOCTOR, GC, HELP, PROJECTS, PROVIDERS, STATE, VERSION
from rigcli.cli.table.connect import CP, FORWARD, OPEN, SSH, SSH_CONFIG, SSH_PROXY
from rigcli.cli.table.history import CACHE, GRAPH, LOGS, RUNS
from rigcli.cli.table.options import GLOBAL_OPTIONS
from rigcli.cli.table.workflow import APPLY, FORK, INIT, OP, PLAN
from rigcli.cli.table.workspaces import DIFF, EXEC, LS, REAP, RM, SHELL, START, STOP

# In the order `rig --help` lists them.
COMMANDS = (
    INIT,
    PLAN,
    APPLY,
    FORK,
    OP,
    RM,
    LS,
    SHELL,
    EXEC,
    STOP,
    START,
    DIFF,
    REAP,
    CACHE,
    GRAPH,
    RUNS,
    GC,
    STATE,
    SSH_CONFIG,
    SSH,
    SSH_PROXY,
    CP,
    FORWARD,
    OPEN,
    PROVIDERS,
    PROJECTS,
    DOCTOR,
    COMPLETION,
    VERSION,
    LOGS,
    HELP,
)

TABLE = Table(
    "rig",
    "Provision dev machines from a cached workflow of setup tasks, then fork workspaces from it.",
    GLOBAL_OPTIONS,
    COMMANDS,
    GlobalOptions,
)

__all__ = ["COMMANDS", "GLOBAL_OPTIONS", "TABLE"]
