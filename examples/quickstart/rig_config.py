"""Quickstart: prepare a tiny Python project in a local machine, snapshot it, fork a workspace per task.

Fully offline, no root, no daemon. The local provider gives NO isolation: machines are
directories under .rig/ and commands run as you, on this host.
"""

from __future__ import annotations

from rigcli import define_provider, workflow

GREET_TOOL = """#!/bin/sh
# A stand-in for the tooling a real project installs (linters, CLIs, SDKs).
echo "hello, ${1:-world}"
"""

HELLO_PY = """def greet(name: str) -> str:
    return f"hello, {name}"


if __name__ == "__main__":
    print(greet("quickstart"))
"""

TEST_PY = """from hello import greet

assert greet("rig") == "hello, rig", greet("rig")
print("tests passed")
"""

app = workflow(
    "quickstart",
    providers={"box": define_provider("local")},
)


def install_tooling(box):
    """Lay down the tools every workspace needs; the snapshot is this task's cached output."""
    machine = box.create_machine()
    try:
        machine.write_text("bin/greet", GREET_TOOL)
        machine.exec("chmod +x bin/greet && bin/greet tooling", name="check greet tool")
        return {"ctx": {"tooling": machine.snapshot_ref()}}
    finally:
        machine.delete()


def install_project(step, box):
    """Start from the tooling snapshot, add the project, run its checks, snapshot the result."""
    machine = box.from_snapshot(step.ctx["tooling"])
    try:
        machine.write_text("app/hello.py", HELLO_PY)
        machine.write_text("app/test_hello.py", TEST_PY)
        machine.exec("cd app && python3 test_hello.py", name="run project checks")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create_workspace(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "path": machine.path}


def remove_workspace(workspace, box):
    # Safe to run twice: a machine that is already gone is not an error.
    box.delete_machine(workspace.ctx["machine"])


def workspace_path(workspace):
    return workspace.ctx["path"]


def workspace_status(workspace, box):
    machine = box.from_id(workspace.ctx["machine"])
    result = machine.exec('bin/greet "$(basename "$PWD")" && cd app && python3 test_hello.py', name="status")
    return {"machine": machine.id, "output": result.stdout}


workflows = (
    app.sequence("root")
    .task("tooling", install_tooling)
    .task("project", install_project)
    .workspace(create=create_workspace, remove=remove_workspace)
    .workspace_operation("path", run=workspace_path, title="Print the workspace directory")
    .workspace_operation("status", run=workspace_status, title="Run the project checks in the workspace")
)
