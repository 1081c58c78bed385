"""``rig ssh WS`` is a session as ``rig shell`` is: the workflow's ``workspace(on_attach=...)`` (a dev
container's ``postAttachCommand``) runs before each interactive one, and not before a command."""

from __future__ import annotations

from pathlib import Path

from tests.providers.connect.conftest import LOCAL, Reached, _reach


def _with_attach_hook(marks: Path) -> str:
    hook = f"""

def attached(workspace, box):
    with open({str(marks)!r}, "a") as marks:
        marks.write(workspace.name + "\\n")
    print("attach hook ran")


"""
    config = LOCAL.replace("\n\nworkflows = ", hook + "workflows = ")
    return config.replace(
        "workspace(create=create, remove=remove,", "workspace(create=create, remove=remove, on_attach=attached,"
    )


def test_rig_ssh_runs_the_attach_hook_per_session_not_per_command(tmp_path: Path) -> None:
    marks = tmp_path / "attached.txt"
    for reached in _reach(tmp_path, "local", _with_attach_hook(marks)):
        _check(reached, marks)


def _check(reached: Reached, marks: Path) -> None:
    ran = reached.rig("ssh", "dev", "-o", "BatchMode=yes", "--", "echo", "a command")
    assert ran.returncode == 0, ran.stderr
    assert "a command" in ran.stdout
    assert not marks.exists()  # a command is no session, as rig exec is none
    session = reached.rig("ssh", "dev", "-o", "BatchMode=yes", input="echo in the session; exit 5\n")
    assert session.returncode == 5, session.stderr
    assert "in the session" in session.stdout
    assert marks.read_text() == "dev\n"
    assert "attach hook ran" in session.stderr  # the hook's output is rig's, never the session's stdout
    assert "attach hook ran" not in session.stdout
