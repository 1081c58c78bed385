"""rig's command line, spelled once: global options, commands, their arguments, options and aliases.

Built from it: the Typer app and every ``--help`` (``app.py``), the fast path for hot commands
(``argv.py``, ``fast.py``), completion (``complete.py``) and ``rig help --json``. A new command
is a row here plus its body. Import-cheap on purpose: it is read on every command line.
"""

from __future__ import annotations

from rigcli.cli.spec import Argument, Command, GlobalOptions, Option, Table

GLOBAL_OPTIONS = (
    Option(("--chdir", "-C"), "chdir", "Use DIR/rig_config.py (no upward search).", metavar="DIR", complete="dirs"),
    Option(("--config",), "config", "Use this config file.", metavar="FILE", complete="files"),
    Option(
        ("--state",),
        "state",
        "Use this state: a SQLite file or a postgresql:// URL.",
        metavar="FILE|URL",
        complete="files",
    ),
    Option(("--json",), "json", "Print one JSON document on stdout."),
    Option(("--workflow",), "workflow", "Select a workflow.", metavar="W", complete="workflows"),
    Option(("--no-wait",), "no_wait", "Exit with code 4 if the state is locked."),
    # -- run history and output (DESIGN §11) --
    Option(
        ("--progress",),
        "progress",
        "How runs are shown: tty (the live view), plain (every line as it comes, prefixed by its task) "
        "or auto (tty on a terminal).",
        choices=("auto", "tty", "plain"),
        default="auto",
    ),
    Option(
        ("--json-stream",),
        "json_stream",
        "Print one JSON object per event on stdout as it happens; the last is the --json document.",
    ),
    # --
    Option(("--version", "-V"), "version", "Print the version.", eager=True),
)

YES = Option(("--yes", "-y"), "yes", "Do not ask for confirmation.")
GC = Option(
    ("--gc",),
    "collect",
    "Then delete the machines and snapshots nothing refers to any more (rig gc); a terminal is asked.",
)
TASK = Argument("task", "TASK", "Task path or name.", complete="tasks")
WORKSPACE = Argument("name", "NAME", "Workspace name.")
WORKSPACES = Argument("names", "WS...", "Workspace names.", variadic=True, complete="workspaces")
START = Option(("--start",), "start", "Start the workspace first if it is stopped.")

CACHE = Command(
    "cache",
    "Inspect, invalidate and clear the task cache.",
    commands=(
        Command("ls", "List cache entries.", "rigcli.cli.commands.cache:cache_ls"),
        Command(
            "explain",
            "Explain why tasks are cached or pending.",
            "rigcli.cli.commands.cache:explain",
            arguments=(TASK,),
        ),
        Command(
            "invalidate",
            "Mark a task's cached run (and runs built on it) stale, or every task with --all.",
            "rigcli.cli.commands.cache:invalidate",
            arguments=(TASK.replace(complete="valid-tasks"),),
            options=(Option(("--all",), "all_", "Invalidate every task of the workflow."), YES, GC),
        ),
        Command(
            "clear",
            "Delete cached runs: local and global, or only one of them.",
            "rigcli.cli.commands.cache:clear",
            options=(
                Option(("--local",), "local", "Only this project's cache."),
                Option(("--global",), "global_", "Only global fragment caches."),
                YES,
                GC,
            ),
        ),
    ),
)

STATE = Command(
    "state",
    "Move the project's state between SQLite and PostgreSQL; check and recover a damaged state file.",
    commands=(
        Command(
            "copy",
            "Copy the project's state (runs, workspaces, provider storage, effects, metadata) into an empty "
            "SQLite file or PostgreSQL schema; the source is only read.",
            "rigcli.cli.commands.state:copy",
            needs="options",
            options=(
                Option(
                    ("--to",),
                    "to",
                    "The target: a SQLite file or a postgresql:// URL.",
                    metavar="URL_OR_PATH",
                    required=True,
                    complete="files",
                ),
            ),
        ),
        Command(
            "check",
            "Run SQLite's integrity check on the project's state file; exit 1 if it is damaged.",
            "rigcli.cli.commands.state:check",
            needs="options",
        ),
        Command(
            "recover",
            "Salvage a damaged state file into a new one that the project then uses; the damaged one is kept "
            "beside it.",
            "rigcli.cli.commands.state:recover",
            needs="options",
        ),
    ),
)

# -- pictures: rig graph ------------------------------------------------------------------------
GRAPH = Command(
    "graph",
    "Show the workflow as a graph: a tree of its tasks with their cache status, or Graphviz DOT or Mermaid.",
    "rigcli.cli.commands.pictures:graph",
    options=(
        Option(
            ("--format",),
            "format",
            "tree (default), dot (Graphviz) or mermaid (renders in Markdown).",
            choices=("tree", "dot", "mermaid"),
        ),
    ),
    needs="options",
    hot=True,
    examples=(
        ("rig graph", "the tree, with each task's cache status and reason"),
        ("rig graph --format dot | dot -Tsvg > graph.svg", "a picture with Graphviz"),
        ("rig graph --format mermaid", "a flowchart to paste into a README or a pull request"),
        ("rig --json graph", "nodes and edges as JSON"),
    ),
)
RUNS = Command(
    "runs",
    "Show the history of applies, one apply's tasks, where its time went (--timeline) or how each task "
    "fares across applies (--stats).",
    "rigcli.cli.commands.history:runs",
    arguments=(Argument("run", "RUN", "The apply (its id or the short id rig shows); default: the last."),),
    options=(
        Option(("--timeline",), "timeline", "The apply as a timeline: a bar per task, the critical path marked."),
        Option(("--stats",), "stats", "Per task: runs, cache hit rate, median and p95 duration."),
        Option(
            ("--format",),
            "format",
            "Write the timeline to FILE as a standalone SVG picture.",
            metavar="svg FILE",
            arity=2,
            complete="files",
        ),
        Option(("--last",), "last", "How many applies --stats covers.", metavar="N", kind="int", default=20),
        # -- the history (no --timeline/--stats) --
        Option(("--limit", "-n"), "limit", "How many applies the history shows.", metavar="N", kind="int", default=20),
    ),
    hot=True,
    examples=(
        ("rig runs --timeline", "the last apply: a bar per task on one time axis"),
        ("rig runs --timeline 1f2e3d4c --format svg apply.svg", "that apply as an SVG picture"),
        ("rig runs --stats --last 50", "runs, cache hits, median and p95 per task"),
    ),
)
# -- end of pictures ---------------------------------------------------------------------------

COMMANDS = (
    Command(
        "init",
        "Write a starter rig_config.py (local provider) and ignore .rig/ in git.",
        "rigcli.cli.commands.project:init",
        needs="options",
        # -- newcomer warts (issue 19, item 8) --
        options=(
            Option(
                ("--template",),
                "template",
                "local: machines are directories (no isolation); docker: containers from a local image, never pulled.",
                choices=("local", "docker"),
                default="local",
            ),
        ),
    ),
    Command(
        "plan",
        "Show which tasks are cached or pending, and why.",
        "rigcli.cli.commands.plan:plan",
        # -- CI gates (issue 19, item 4) --
        options=(
            Option(
                ("--detailed-exitcode",),
                "detailed_exitcode",
                "Exit 0 when nothing is pending, 2 when something is, 1 on an error.",
            ),
        ),
        needs="options",
        hot=True,
    ),
    Command(
        "apply",
        "Run the pending tasks of a workflow.",
        "rigcli.cli.commands.workflow:apply",
        # -- the extra words of `--only A B` (issue 19, item 7) --
        arguments=(Argument("extra_only", "TASK", "More tasks for --only.", variadic=True, hidden=True),),
        options=(
            Option(("--dry-run",), "dry_run", "Show the plan; change nothing."),
            # -- CI gates and --only (issue 19, items 4 and 7) --
            Option(
                ("--expect-cached",),
                "expect_cached",
                "Run nothing and exit 5, naming each pending task and why, unless every task is cached.",
            ),
            Option(
                ("--only",),
                "only",
                "Run only TASK and the pending tasks upstream of it, nothing downstream (repeatable).",
                metavar="TASK",
                repeat=True,
                complete="tasks",
            ),
        ),
        hot=True,
        examples=(
            ("rig apply --only build test", "build and test, and what they need; nothing after them"),
            ("rig apply --expect-cached", "fail (exit 5) in CI when anything would run"),
        ),
    ),
    Command(
        "fork",
        "Create a workspace from the prepared workflow.",
        "rigcli.cli.commands.workflow:fork",
        arguments=(WORKSPACE,),
        options=(
            # -- day two: forks of several, of a live one, in place, with an expiry --------------------
            Option(
                ("--replace",),
                "replace",
                "Remake NAME from the current snapshot; the old machine is removed once the new one is ready.",
            ),
            Option(
                ("--from",),
                "source",
                "Fork the live workspace WS: its machine snapshotted as it is now.",
                metavar="WS",
                complete="workspaces",
            ),
            Option(("--count", "-n"), "count", "Make NAME-1 ... NAME-N at once.", metavar="N", kind="int"),
            Option(
                ("--ttl",),
                "ttl",
                'Remove the workspace that long after it is made (e.g. "8h"; overrides workspace(ttl=...)).',
                metavar="DURATION",
            ),
        ),
        aliases=("create",),
        hot=True,
    ),
    Command(
        "op",
        "Run a workspace or workflow operation.",
        "rigcli.cli.commands.operation:op",
        arguments=(Argument("args", "TARGET [INPUTS]", "", variadic=True, complete="operation", hidden=True),),
        aliases=("run",),
        hot=True,
        pass_through=True,
        examples=(
            ("rig op WORKSPACE OPERATION [INPUTS]", "a workspace operation"),
            ("rig op WORKSPACE/OPERATION [INPUTS]", "the same, unambiguous"),
            ("rig op OPERATION [INPUTS]", "a workflow-level operation"),
            ("rig op WORKSPACE --help", "the workspace's operations"),
            ("rig op WORKSPACE OPERATION --help", "the operation's inputs"),
        ),
    ),
    Command(
        "rm",
        "Remove a workspace (its remove hook runs first), or every workspace with --all.",
        "rigcli.cli.commands.workspace:rm",
        arguments=(WORKSPACE.replace(complete="workspaces"),),
        options=(
            Option(("--all",), "all_", "Remove every workspace."),
            YES,
            Option(
                ("--force",), "force", "Forget the workspace even if its remove hook fails; leftovers go to rig gc."
            ),
            Option(("--missing-ok",), "missing_ok", "A workspace that does not exist is not an error."),
        ),
        hot=True,
    ),
    Command(
        "ls",
        "List workflows and workspaces, snapshots, or the project's configuration.",
        "rigcli.cli.commands.listing:ls",
        needs="options",
        arguments=(
            Argument(
                "target",
                "TARGET",
                "workspaces (default), snapshots or config.",
                suggest=(
                    ("workspaces", "workflows and their workspaces"),
                    ("snapshots", "recorded snapshots"),
                    ("config", "the project's configuration"),
                ),
            ),
        ),
        options=(
            Option(
                ("--no-probe",),
                "no_probe",
                "Do not ask providers for each workspace's live status (live is null in --json).",
            ),
        ),
        hot=True,
    ),
    # -- a workspace's life after fork (DESIGN §11) ----------------------------------------------
    Command(
        "shell",
        "Open a shell inside a workspace, on this terminal; rig exits with the shell's exit code "
        "(a project's own shell operation runs instead, when it defines one).",
        "rigcli.cli.commands.attach:shell",
        needs="options",
        arguments=(WORKSPACE.replace(required=True, complete="workspaces"),),
        options=(START,),
        hot=True,
    ),
    Command(
        "exec",
        "Run a command inside a workspace (rig exec WS -- CMD ARGS) with this terminal or these "
        "streams, and exit with its exit code (a project's own exec operation runs instead, when it defines one).",
        "rigcli.cli.commands.attach:exec_",
        needs="options",
        arguments=(
            WORKSPACE.replace(required=True, complete="workspaces"),
            Argument("argv", "CMD [ARG...]", "The program and its arguments, after --.", required=True, variadic=True),
        ),
        options=(START,),
        hot=True,
    ),
    Command(
        "stop",
        "Stop workspaces' machines, keeping their files (rig start runs them again); --all stops every workspace.",
        "rigcli.cli.commands.power:stop",
        arguments=(WORKSPACES,),
        options=(Option(("--all",), "all_", "Stop every workspace."),),
        hot=True,
    ),
    Command(
        "start",
        "Start stopped workspaces' machines again; --all starts every workspace.",
        "rigcli.cli.commands.power:start",
        arguments=(WORKSPACES,),
        options=(Option(("--all",), "all_", "Start every workspace."),),
        hot=True,
    ),
    # -- day two: outdated workspaces and expiry ---------------------------------------------------------
    Command(
        "diff",
        "Say why a workspace is outdated: the tasks the workflow would now run differently, and why.",
        "rigcli.cli.commands.drift:diff",
        arguments=(WORKSPACE.replace(required=True, complete="workspaces"),),
        hot=True,
    ),
    Command(
        "reap",
        "Remove expired workspaces and stop idle ones now (every rig command also does, cheaply).",
        "rigcli.cli.commands.drift:reap",
        options=(Option(("--dry-run",), "dry_run", "List what would be removed or stopped; change nothing."),),
    ),
    CACHE,
    GRAPH,
    RUNS,
    Command(
        "gc",
        "Delete machines, snapshots, containers and images that nothing refers to (no confirmation).",
        "rigcli.cli.commands.gc:gc",
        options=(
            Option(("--dry-run",), "dry_run", "List what would be deleted; delete nothing."),
            Option(
                ("--forget-unreachable",),
                "forget_unreachable",
                "Mark what no daemon can be asked about (gone, or not the one that made it) forgotten, "
                "with the reason, instead of failing.",
            ),
        ),
    ),
    STATE,
    # -- connect: a person's own tools inside a workspace (rigcli/cli/commands/connect*.py) -----------
    Command(
        "ssh-config",
        "Print OpenSSH Host blocks for the workspaces (alias WS.PROJECT.rig); --install puts them in "
        "~/.ssh/config through one Include line, --uninstall takes them out.",
        "rigcli.cli.commands.connect:ssh_config",
        needs="options",
        arguments=(WORKSPACES,),
        options=(
            Option(("--install",), "install", "Install the blocks (one Include line atop ~/.ssh/config)."),
            Option(("--uninstall",), "uninstall", "Take this project's blocks out again."),
        ),
    ),
    Command(
        "ssh",
        "Run the system ssh to a workspace (rig ssh WS [SSH OPTIONS] [-- CMD ARGS]); its exit code.",
        "rigcli.cli.commands.connect:ssh",
        needs="options",
        arguments=(Argument("args", "WS [SSH-OPTION...] [-- CMD...]", "", variadic=True, complete="workspaces"),),
        pass_through=True,
        hot=True,
    ),
    Command(
        "ssh-proxy",
        "Speak SSH on stdin and stdout for a workspace (what ssh runs as ProxyCommand).",
        "rigcli.cli.commands.connect:ssh_proxy",
        needs="options",
        arguments=(WORKSPACE.replace(required=True, complete="workspaces"),),
        hot=True,
    ),
    Command(
        "cp",
        "Copy files between the host and a workspace, like docker cp (rig cp SRC WS:DEST, rig cp WS:SRC DEST; "
        "'-' is a tar stream on stdin or stdout).",
        "rigcli.cli.commands.copy:cp",
        needs="options",
        arguments=(
            Argument("source", "SRC", "A host path, WS:PATH, or - (a tar stream on stdin).", required=True),
            Argument("destination", "DEST", "A host path, WS:PATH, or - (a tar stream on stdout).", required=True),
        ),
        hot=True,
    ),
    Command(
        "forward",
        "Forward local ports to a workspace's ports until Ctrl-C (rig forward WS [LOCAL:]REMOTE, any number "
        "of them; none named: the ports its workspace() declares).",
        "rigcli.cli.commands.forward:forward",
        needs="options",
        arguments=(
            WORKSPACE.replace(required=True, complete="workspaces"),
            Argument(
                "specs",
                "[LOCAL:]REMOTE...",
                "Ports inside the workspace, each on LOCAL (0: any free port).",
                variadic=True,
            ),
        ),
        options=(
            Option(
                ("--address",), "address", "The local address to listen on.", metavar="ADDRESS", default="127.0.0.1"
            ),
        ),
        hot=True,
    ),
    Command(
        "open",
        "Open a workspace in VS Code or Cursor over Remote-SSH, or its first declared port in a browser through a "
        "running rig forward; --print only prints the URL.",
        "rigcli.cli.commands.open:open_",
        needs="options",
        arguments=(
            WORKSPACE.replace(required=True, complete="workspaces"),
            Argument("path", "PATH", "The folder to open (default: the workspace's working directory)."),
        ),
        options=(
            Option(("--editor",), "editor", "Where to open it.", choices=("code", "cursor", "browser"), default="code"),
            Option(("--print",), "print_only", "Print the URL; open nothing and change nothing."),
        ),
    ),
    Command(
        "providers",
        "Manage a provider's per-user state: rig providers PROVIDER clear.",
        "rigcli.cli.commands.project:providers",
        needs="options",
        arguments=(
            Argument(
                "provider_id", "PROVIDER", "Provider id, e.g. local or docker.", required=True, complete="providers"
            ),
            Argument(
                "action",
                "ACTION",
                "clear: forget the provider's host storage.",
                required=True,
                suggest=(("clear", "forget this provider's host storage"),),
            ),
        ),
    ),
    Command(
        "projects",
        "Find rig projects at or below the current directory.",
        "rigcli.cli.commands.project:projects",
        needs="options",
    ),
    Command(
        "doctor",
        "Show versions, paths, the project, its state backend and lock, and Docker reachability.",
        "rigcli.cli.commands.doctor:doctor",
        needs="options",
    ),
    Command(
        "completion",
        "Print a shell completion script, or install it (bash, zsh or fish; default from $SHELL).",
        "rigcli.cli.complete_scripts:completion",
        needs="options",
        arguments=(
            Argument(
                "shell",
                "SHELL|install",
                "bash, zsh or fish; or install, to install the script where the shell finds it.",
                suggest=(
                    ("bash", "shell"),
                    ("zsh", "shell"),
                    ("fish", "shell"),
                    ("install", "install the script for $SHELL (or the shell named next)"),
                ),
            ),
            # -- rig completion install [SHELL] (issue 19, item 8) --
            Argument("target", "SHELL", "With install: the shell (default from $SHELL).", hidden=True),
        ),
        examples=(
            ("rig completion install", "install completion for the shell you use ($SHELL)"),
            ("rig completion zsh > _rig", "write the zsh script yourself"),
        ),
    ),
    Command("version", "Print the version.", "rigcli.cli.commands.project:version", needs="options", hot=True),
    # -- run history and stored output (DESIGN §11) --
    Command(
        "logs",
        "Show the stored output of a task's last run, or of every run of the last apply.",
        "rigcli.cli.commands.history:logs",
        needs="options",  # it opens the Session itself, only when the state alone cannot answer
        arguments=(TASK,),
        options=(
            Option(
                ("--run",),
                "run",
                "A run's or an apply's id (the 8 characters rig shows are enough).",
                metavar="ID",
            ),
            Option(("--follow", "-f"), "follow", "Keep printing a run in progress until it ends."),
        ),
        hot=True,
    ),
    # --
    Command(
        "help",
        "Show help for rig or one of its commands (--json: the commands as JSON).",
        "rigcli.cli.commands.help:help_command",
        needs="options",
        arguments=(Argument("command", "COMMAND", "Command.", variadic=True, complete="commands"),),
        hot=True,
    ),
)

TABLE = Table(
    "rig",
    "Provision dev machines from a cached workflow of setup tasks, then fork workspaces from it.",
    GLOBAL_OPTIONS,
    COMMANDS,
    GlobalOptions,
)

__all__ = ["COMMANDS", "GLOBAL_OPTIONS", "TABLE"]
