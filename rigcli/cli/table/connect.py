"""Rows of the commands that bring a person's own tools into a workspace: ssh-config, ssh, ssh-proxy, cp,
forward, open."""

from __future__ import annotations

from rigcli.cli.spec import Argument, Command, Option
from rigcli.cli.table.options import WORKSPACE, WORKSPACES

SSH_CONFIG = Command(
    "ssh-config",
    "Print OpenSSH Host blocks for the workspaces (alias WS.PROJECT.rig); --install puts them in "
    "~/.ssh/config through one Include line, --uninstall takes them out.",
    "rigcli.cli.commands.connect:ssh_config",
    arguments=(WORKSPACES,),
    options=(
        Option(("--install",), "install", "Install the blocks (one Include line atop ~/.ssh/config)."),
        Option(("--uninstall",), "uninstall", "Take this project's blocks out again."),
    ),
)

SSH = Command(
    "ssh",
    "Run the system ssh to a workspace (rig ssh WS [SSH OPTIONS] [-- CMD ARGS]); its exit code.",
    "rigcli.cli.commands.connect:ssh",
    arguments=(Argument("args", "WS [SSH-OPTION...] [-- CMD...]", "", variadic=True, complete="workspaces"),),
    pass_through=True,
    hot=True,
)

# ssh-proxy, cp and forward may take what the config says of the workspace's provider from the cache
# (cli/commands/reach.py): an editor starts a proxy per connection.
SSH_PROXY = Command(
    "ssh-proxy",
    "Speak SSH on stdin and stdout for a workspace (what ssh runs as ProxyCommand).",
    "rigcli.cli.commands.connect:ssh_proxy",
    arguments=(WORKSPACE.replace(required=True, complete="workspaces"),),
    hot=True,
    cache=("config",),
)

CP = Command(
    "cp",
    "Copy files between the host and a workspace, like docker cp (rig cp SRC WS:DEST, rig cp WS:SRC DEST; "
    "'-' is a tar stream on stdin or stdout).",
    "rigcli.cli.commands.copy:cp",
    arguments=(
        Argument("source", "SRC", "A host path, WS:PATH, or - (a tar stream on stdin).", required=True),
        Argument("destination", "DEST", "A host path, WS:PATH, or - (a tar stream on stdout).", required=True),
    ),
    hot=True,
    cache=("config",),
)

FORWARD = Command(
    "forward",
    "Forward local ports to a workspace's ports until Ctrl-C (rig forward WS [LOCAL:]REMOTE, any number "
    "of them; none named: the ports its workspace() declares).",
    "rigcli.cli.commands.forward:forward",
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
        Option(("--address",), "address", "The local address to listen on.", metavar="ADDRESS", default="127.0.0.1"),
    ),
    hot=True,
    cache=("config",),
)

OPEN = Command(
    "open",
    "Open a workspace in VS Code or Cursor over Remote-SSH, or its first declared port in a browser through a "
    "running rig forward; --print only prints the URL.",
    "rigcli.cli.commands.open:open_",
    arguments=(
        WORKSPACE.replace(required=True, complete="workspaces"),
        Argument("path", "PATH", "The folder to open (default: the workspace's working directory)."),
    ),
    options=(
        Option(("--editor",), "editor", "Where to open it.", choices=("code", "cursor", "browser"), default="code"),
        Option(("--print",), "print_only", "Print the URL; open nothing and change nothing."),
    ),
)

__all__ = ["CP", "FORWARD", "OPEN", "SSH", "SSH_CONFIG", "SSH_PROXY"]
