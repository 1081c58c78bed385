"""Run the terminal provider the way rig does, in whatever terminal this process was given.

usage: terminal_driver.py PROJECT_DIR TITLE COMMAND [PROVIDER MACHINE_ID]
Prints the events and then ``RESULT <json>`` or ``ERROR <message>`` (exit 1).
"""

from __future__ import annotations

import json
import sys

from providers.terminal import plugin
from rigcli.errors import RigError
from rigcli.host import TerminalHost, operation_consent
from rigcli.provider_api import Cancellation, EventData, ProviderSetup, RuntimeContext
from rigcli.state import HostStorage, create_state_store


def main(argv: list[str]) -> int:
    project, title, command = argv[:3]
    store = create_state_store(project_dir=project)
    store.sync_schema()
    host = TerminalHost()
    events: list[EventData] = []

    def setup(provider_id: str, config: dict[str, str]) -> ProviderSetup:
        return ProviderSetup(
            provider_id=provider_id,
            config=config,
            storage=store.provider_storage(provider_id),
            host_storage=HostStorage(provider_id, f"{project}/.host"),
            local=host,
            project_dir=project,
            state_dir=f"{project}/.rig",
        )

    context = RuntimeContext(
        provider_name="terminal",
        node_path="login",
        workflow="web",
        emit=events.append,
        interaction=None,  # type: ignore[arg-type]
        local=host,
        cancellation=Cancellation(),
    )
    machine = None
    if len(argv) > 3:
        provider, machine_id = argv[3:5]
        module = __import__(f"providers.{provider}", fromlist=["plugin"])
        machine = module.plugin.create_provider(setup(provider, {})).runtime(context).from_id(machine_id)
    terminal = plugin.create_provider(setup("terminal", {})).runtime(context)
    try:
        with operation_consent():  # as under `rig op`: the user asked for this command
            result = terminal.open(title, command, machine=machine, instructions="Say hello")
    except RigError as exc:
        outcome, code = f"ERROR {exc}", 1
    else:
        outcome, code = f"RESULT {json.dumps(result)}", 0
    print()  # the command may not have ended its last line
    for event in events:
        print(f"EVENT {json.dumps(event)}")
    print(outcome)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
