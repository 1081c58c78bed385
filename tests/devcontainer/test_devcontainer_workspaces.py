"""A dev container configuration through the installed rig on the test daemon: what runs once per
prepared snapshot and what runs per workspace, per start and per shell; users, environment, folder."""

from __future__ import annotations

from tests.devcontainer.conftest import MakeProject
from tests.devcontainer.dc_support import IMAGE

# The test image's busybox has no adduser: the user's lines written as adduser would.
ADD_USER = (
    'RUN echo "dev:x:$UID:$UID::/home/dev:/bin/sh" >> /etc/passwd && echo "dev:x:$UID:" >> /etc/group '
    "&& mkdir -p /home/dev && chown $UID:$UID /home/dev"
)
HOOKS = {
    "image": IMAGE,
    "containerEnv": {"GREETING": "hello", "PORT": 3000},
    "remoteEnv": {"FROM_CONTAINER": "${containerEnv:GREETING}-remote", "PLAIN": "yes"},
    "onCreateCommand": "cat /proc/sys/kernel/random/uuid > /tmp/prepared && echo onCreate >> /tmp/order",
    "updateContentCommand": ["sh", "-c", "echo updateContent >> /tmp/order"],
    "postCreateCommand": "echo postCreate >> /tmp/order",
    "postStartCommand": {
        "one": "echo postStart-one >> /tmp/order",
        "two": ["sh", "-c", "echo postStart-two >> /tmp/order"],
    },
    "postAttachCommand": "echo postAttach >> /tmp/order",
}


def test_prepared_once_then_hooks_per_workspace_start_and_shell(make_project: MakeProject) -> None:
    rig = make_project(HOOKS, {"README.md": "the project\n"})
    applied = rig.json("apply")
    assert [node["path"] for node in applied["plan"]["nodes"]] == [
        "initialize", "image", "source", "onCreate", "updateContent",
    ]  # fmt: skip
    rig.run("fork", "a")
    rig.run("fork", "b")
    for name in ("a", "b"):
        order = rig.exec(name, "cat /tmp/order").split()
        assert order[:3] == ["onCreate", "updateContent", "postCreate"]
        assert sorted(order[3:]) == ["postStart-one", "postStart-two"]  # the object form: at once
    # onCreate ran once, in the prepared snapshot both workspaces were made from.
    assert rig.exec("a", "cat /tmp/prepared") == rig.exec("b", "cat /tmp/prepared")
    rig.run("exec", "a", "--", "true")  # rig exec is no attach: postAttachCommand does not run
    assert "postAttach" not in rig.exec("a", "cat /tmp/order")
    shown = rig.run("shell", "a", stdin="tail -n 1 /tmp/order\n").stdout
    assert shown.split() == ["postAttach"]
    rig.run("stop", "a")
    rig.run("start", "a")
    after = rig.exec("a", "cat /tmp/order").split()
    assert sorted(after[-2:]) == ["postStart-one", "postStart-two"] and len(after) == 8
    assert len(rig.exec("b", "cat /tmp/order").split()) == 5  # b was neither started again nor attached


def test_user_environment_and_folder_of_exec(make_project: MakeProject) -> None:
    config = {
        **{key: value for key, value in HOOKS.items() if key != "image"},
        "build": {"dockerfile": "Dockerfile", "args": {"UID": "1234"}},
        "workspaceFolder": "/srv/${localWorkspaceFolderBasename}",
        "remoteUser": "dev",
        "postCreateCommand": "id -un > /tmp/post-create-user; pwd > /tmp/post-create-dir",
    }
    dockerfile = f"FROM {IMAGE}\nARG UID\n{ADD_USER}\n"
    rig = make_project(config, {"src/main.txt": "code\n", ".devcontainer/Dockerfile": dockerfile}, name="folder")
    rig.run("fork", "dev")
    seen = rig.exec("dev", 'id -un; pwd; echo "$GREETING $PORT $FROM_CONTAINER $PLAIN"; cat src/main.txt; ls -ln src')
    lines = seen.splitlines()
    assert lines[:4] == ["dev", "/srv/folder", "hello 3000 hello-remote yes", "code"]
    assert " 1234 " in lines[-1]  # the copied source belongs to the remote user
    assert rig.exec("dev", "cat /tmp/post-create-user /tmp/post-create-dir").split() == ["dev", "/srv/folder"]
    shown = rig.run("shell", "dev", stdin='id -un; echo "$FROM_CONTAINER"\n').stdout.split()
    assert shown == ["dev", "hello-remote"]


def test_a_failing_hook_names_its_key_and_command(make_project: MakeProject) -> None:
    rig = make_project({"image": IMAGE, "onCreateCommand": "echo broken; exit 3"})
    failed = rig.run("apply", check=False)
    assert failed.returncode == 1
    assert "onCreateCommand `echo broken; exit 3` failed with exit code 3" in failed.stderr
    rig = make_project({"image": IMAGE, "postCreateCommand": {"ok": "true", "bad": ["false"]}}, name="fork-fails")
    failed = rig.run("fork", "w", check=False)
    assert failed.returncode == 1
    assert "postCreateCommand (bad) `false` failed with exit code 1" in failed.stderr
    assert "Traceback" not in failed.stderr


def test_updatecontent_is_there_and_does_nothing_without_its_key(make_project: MakeProject) -> None:
    rig = make_project({"image": IMAGE})
    applied = rig.json("apply")
    assert "updateContent" in [node["path"] for node in applied["plan"]["nodes"]]
    assert applied["context"]["image"] == rig.json("plan")["final_context"]["image"]
    rig.run("fork", "w")
    assert rig.exec("w", "pwd").strip() == "/workspaces/proj"


def test_host_requirements_are_a_warning_at_apply_and_fork(make_project: MakeProject) -> None:
    rig = make_project({"image": IMAGE, "hostRequirements": {"cpus": 4096, "memory": "64tb"}})
    applied = rig.run("apply")
    assert "hostRequirements not met: this configuration asks for 4096 CPUs" in applied.stderr
    assert "64tb of memory" in applied.stderr
    forked = rig.run("fork", "w")  # a warning, never a refusal
    assert "hostRequirements not met" in forked.stderr
