"""What makes each task of a dev container workflow pending, and what never does; refusals at load;
zero config, rig init --devcontainer and named configurations; a local feature with options."""

from __future__ import annotations

import json

from tests.devcontainer.conftest import MakeProject
from tests.devcontainer.dc_support import IMAGE

BUILT = {
    "build": {"dockerfile": "Dockerfile", "context": "..", "args": {"FLAVOUR": "plain"}},
    "onCreateCommand": "cat /flavour > /tmp/seen",
    "postCreateCommand": "true",
}
FILES = {
    ".devcontainer/Dockerfile": f"FROM {IMAGE}\nARG FLAVOUR\nCOPY tool.txt /tool.txt\nRUN echo $FLAVOUR > /flavour\n",
    ".dockerignore": "*.log\n",
    "tool.txt": "v1\n",
    "src/app.txt": "app\n",
}


def pending(rig) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {path: reason for path, (status, reason) in rig.plan().items() if status == "pending"}


def test_what_makes_each_task_pending(make_project: MakeProject) -> None:
    rig = make_project(BUILT, FILES)
    rig.run("apply")
    assert pending(rig) == {}
    config = rig.project / ".devcontainer/devcontainer.json"

    (rig.project / "debug.log").write_text("noise\n")  # ignored by .dockerignore, but part of the source
    assert pending(rig) == {
        "source": "task-changed",
        "onCreate": "upstream-pending",
        "updateContent": "upstream-pending",
    }
    rig.run("apply")

    (rig.project / "tool.txt").write_text("v2\n")  # in the build context
    assert list(pending(rig)) == ["image", "source", "onCreate", "updateContent"]
    assert pending(rig)["image"] == "task-changed"
    rig.run("apply")

    (rig.project / ".devcontainer/Dockerfile").write_text(FILES[".devcontainer/Dockerfile"] + "RUN true\n")
    assert pending(rig)["image"] == "task-changed"
    rig.run("apply")

    config.write_text(json.dumps({**BUILT, "build": {**BUILT["build"], "args": {"FLAVOUR": "spicy"}}}))
    assert pending(rig)["image"] == "task-changed"
    rig.run("apply")
    rig.run("fork", "w")
    assert rig.exec("w", "cat /tmp/seen /tool.txt").split() == ["spicy", "v2"]

    config.write_text(
        json.dumps({**BUILT, "build": {**BUILT["build"], "args": {"FLAVOUR": "spicy"}}, "onCreateCommand": "true"})
    )
    assert pending(rig) == {"onCreate": "task-changed", "updateContent": "upstream-pending"}
    rig.run("apply")

    # What runs per workspace is no task: changing it leaves every task cached.
    spicy = {**BUILT, "build": {**BUILT["build"], "args": {"FLAVOUR": "spicy"}}, "onCreateCommand": "true"}
    config.write_text(json.dumps({**spicy, "postCreateCommand": "echo changed", "postStartCommand": "true"}))
    assert pending(rig) == {}
    rig.run("fork", "again")
    # remoteEnv is what onCreateCommand runs with: it is part of that task.
    config.write_text(json.dumps({**spicy, "remoteEnv": {"A": "1"}}))
    assert pending(rig) == {"onCreate": "task-changed", "updateContent": "upstream-pending"}


def test_a_removed_image_makes_the_task_that_made_it_pending(make_project: MakeProject, daemon) -> None:  # type: ignore[no-untyped-def]
    rig = make_project(BUILT, FILES)
    applied = rig.json("apply")
    daemon.delete(f"/images/{applied['context']['image']['image_id']}", params={"force": "true"})
    assert pending(rig)["onCreate"] == "artifact-invalid"  # the last image: onCreate's commit
    rig.run("fork", "w")  # made again on the way
    assert rig.exec("w", "cat /tmp/seen").strip() == "plain"


def test_refusals_when_the_config_loads(make_project: MakeProject) -> None:
    rig = make_project({"dockerComposeFile": "docker-compose.yml", "service": "app"})
    for command in (["plan"], ["apply"], ["fork", "w"]):
        done = rig.run(*command, check=False)
        assert done.returncode == 1, command
        assert "Docker Compose dev containers are not supported yet" in done.stderr
        assert "Traceback" not in done.stderr
    rig = make_project({"image": IMAGE, "runArgs": ["--device", "/dev/fuse"]}, name="runargs")
    done = rig.run("plan", check=False)
    assert done.returncode == 1 and "runArgs option '--device' is not supported" in done.stderr
    rig = make_project('{\n  "image": "x",\n  "name": oops\n}', name="syntax")
    done = rig.run("plan", check=False)
    config = rig.project / ".devcontainer/devcontainer.json"
    assert done.returncode == 1 and f"{config}:3:11: JSONC syntax error" in done.stderr


def test_zero_config_init_and_named_configurations(make_project: MakeProject) -> None:
    rig = make_project({"name": "Web App", "image": IMAGE, "postCreateCommand": "echo hi > /tmp/hi"})
    (rig.project / "deeper/down").mkdir(parents=True)
    plan = rig.json("plan")
    assert plan["workflow"] == "Web-App" and plan["node_count"] == 5
    rig.run("fork", "w")
    assert rig.exec("w", "cat /tmp/hi").strip() == "hi"
    rig.run("init", "--devcontainer")
    assert (rig.project / "rig_config.py").read_text() == (
        "from rigcli.devcontainer import devcontainer_workflow\n\n"
        'workflows = devcontainer_workflow(".devcontainer/devcontainer.json")\n'
    )
    assert rig.json("plan")["workflow"] == "Web-App"  # the same workflow, now from the file

    named = make_project({"name": "ignored", "image": IMAGE}, name="named")
    (named.project / ".devcontainer/devcontainer.json").unlink()
    for name in ("api", "web"):
        folder = named.project / ".devcontainer" / name
        folder.mkdir()
        (folder / "devcontainer.json").write_text(json.dumps({"name": "whatever", "image": IMAGE}))
    assert sorted(item["name"] for item in named.json("ls")["workflows"]) == ["api", "web"]
    named.run("fork", "w", "--workflow", "web")


def test_a_local_feature_with_options(make_project: MakeProject) -> None:
    feature = {
        "id": "greeter",
        "version": "1.0.0",
        "options": {"greeting": {"type": "string", "default": "hello"}, "loud": {"type": "boolean", "default": False}},
        "containerEnv": {"GREETER_HOME": "/opt/greeter"},
        "postCreateCommand": "echo feature-postCreate >> /tmp/order",
    }
    install = (
        '#!/bin/sh\nset -e\nmkdir -p "$GREETER_HOME"\necho "$GREETING $LOUD $_REMOTE_USER" > "$GREETER_HOME/said"\n'
    )
    config = {
        "image": IMAGE,
        "features": {"./greeter": {"greeting": "howdy"}},
        "postCreateCommand": "echo postCreate >> /tmp/order",
    }
    rig = make_project(
        config,
        {
            ".devcontainer/greeter/devcontainer-feature.json": json.dumps(feature),
            ".devcontainer/greeter/install.sh": install,
        },
    )
    assert [path for path in rig.plan()] == [
        "initialize", "image", "feature:greeter", "source", "onCreate", "updateContent",
    ]  # fmt: skip
    rig.run("fork", "w")
    assert rig.exec("w", 'cat /opt/greeter/said; echo "$GREETER_HOME"; cat /tmp/order').split() == [
        "howdy", "false", "root", "/opt/greeter", "feature-postCreate", "postCreate",
    ]  # fmt: skip
    (rig.project / ".devcontainer/greeter/install.sh").write_text(install + "true\n")
    assert pending(rig)["feature:greeter"] == "task-changed"


def test_source_is_what_git_would_add_and_rm_and_gc_clean_up(make_project: MakeProject, daemon) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    rig = make_project(BUILT, {**FILES, ".gitignore": "secret.txt\n", "secret.txt": "no\n", "tracked.txt": "t\n"})
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=rig.project, check=True)
    subprocess.run([*git, "add", "tracked.txt", ".gitignore"], cwd=rig.project, check=True)
    subprocess.run([*git, "commit", "-qm", "t"], cwd=rig.project, check=True)
    (rig.project / "untracked.txt").write_text("u\n")
    first = rig.json("apply")["context"]["image"]["image_id"]
    rig.run("fork", "w")
    listed = rig.exec("w", "ls -a").split()
    assert {"tracked.txt", "untracked.txt", ".gitignore", "tool.txt"} <= set(listed)
    assert "secret.txt" not in listed and ".rig" not in listed and ".git" not in listed

    labels = json.dumps({"label": [f"rig.project={rig.project}"]})
    rig.run("rm", "w", "--yes")
    assert daemon.get("/containers/json", params={"all": "true", "filters": labels}).json() == []
    (rig.project / "tool.txt").write_text("v2\n")
    rig.run("apply")
    assert daemon.get(f"/images/{first}/json").status_code == 200
    rig.run("gc")
    assert daemon.get(f"/images/{first}/json").status_code == 404  # nothing refers to it any more
