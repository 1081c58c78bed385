"""Reading a dev container configuration: JSONC errors placed, variables, refusals, runArgs, mounts,
.dockerignore, the features' install order and options, the declared ports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rigcli.devcontainer.config import load_devcontainer, workflow_name
from rigcli.devcontainer.feature_order import install_order
from rigcli.devcontainer.features import options_env, safe_id
from rigcli.devcontainer.files import context_files, project_files
from rigcli.devcontainer.jsonc import parse_jsonc
from rigcli.devcontainer.locations import config_paths, named_workflow, starter_config
from rigcli.devcontainer.run_options import parse_mount, parse_run_args
from rigcli.devcontainer.variables import devcontainer_id
from rigcli.devcontainer.workflow import declared_ports
from rigcli.errors import ConfigError


def write(project: Path, text: str, where: str = ".devcontainer/devcontainer.json") -> Path:
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_jsonc_takes_comments_and_trailing_commas() -> None:
    text = '{\n  // a comment\n  "image": "x", /* another */\n  "features": {"a": true,},\n}'
    assert parse_jsonc(text, "F") == {"image": "x", "features": {"a": True}}


@pytest.mark.parametrize(
    ("text", "place"),
    [('{\n  "image": "x"\n  "name": "y"\n}', "3:3"), ('{\n "a": 1,\n  "b": }', "3:8"), ('{"a": ', "1:7")],
)
def test_a_syntax_error_says_file_line_and_column(text: str, place: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_jsonc(text, "/p/.devcontainer/devcontainer.json")
    assert str(raised.value).startswith(f"/p/.devcontainer/devcontainer.json:{place}: JSONC syntax error")


def test_locations_and_workflow_names(tmp_path: Path) -> None:
    write(tmp_path, "{}", ".devcontainer.json")
    write(tmp_path, "{}", ".devcontainer/web/devcontainer.json")
    write(tmp_path, "{}", ".devcontainer/api/devcontainer.json")
    assert config_paths(str(tmp_path)) == [
        ".devcontainer.json",
        ".devcontainer/api/devcontainer.json",
        ".devcontainer/web/devcontainer.json",
    ]
    assert named_workflow(".devcontainer/web/devcontainer.json") == "web"
    assert named_workflow(".devcontainer/devcontainer.json") is None
    assert workflow_name("My Project (dev)") == "My-Project-dev"
    assert workflow_name(None) == workflow_name("  ") == "devcontainer"
    assert starter_config([".devcontainer/devcontainer.json"]) == (
        "from rigcli.devcontainer import devcontainer_workflow\n\n"
        'workflows = devcontainer_workflow(".devcontainer/devcontainer.json")\n'
    )


def test_variables_outside_the_container(tmp_path: Path) -> None:
    document = {
        "image": "img",
        "workspaceFolder": "/work/${localWorkspaceFolderBasename}",
        "containerEnv": {
            "HOME_WAS": "${localEnv:HOME_FOR_TEST}",
            "DEFAULTED": "${localEnv:UNSET_FOR_TEST:fallback}",
            "OLD": "${env:HOME_FOR_TEST}",
            "EMPTY": "${localEnv:UNSET_FOR_TEST}",
            "FOLDER": "${localWorkspaceFolder}",
            "INSIDE": "${containerWorkspaceFolder}|${containerWorkspaceFolderBasename}",
            "ID": "${devcontainerId}",
            "LATER": "${containerEnv:PATH}",
        },
    }
    config = write(tmp_path, json.dumps(document))
    loaded = load_devcontainer(".devcontainer/devcontainer.json", str(tmp_path), {"HOME_FOR_TEST": "/home/me"})
    env = loaded.keys.container_env
    assert env["HOME_WAS"] == env["OLD"] == "/home/me"
    assert env["DEFAULTED"] == "fallback" and env["EMPTY"] == ""
    assert env["FOLDER"] == str(tmp_path)
    assert env["INSIDE"] == f"/work/{tmp_path.name}|{tmp_path.name}"
    assert env["ID"] == devcontainer_id(str(tmp_path), str(config)) and len(env["ID"]) == 52
    assert env["LATER"] == "${containerEnv:PATH}"  # read in the container, later
    assert loaded.workspace_folder == f"/work/{tmp_path.name}"


def test_the_reference_devcontainer_id() -> None:
    # What @devcontainers/cli computes for these two labels (its devcontainerIdForLabels).
    found = devcontainer_id("/tmp/x", "/tmp/x/.devcontainer/devcontainer.json")
    assert found == "0lvtagu0jfi6715f9gr5538rphasi4c2q3pd63mntefdbur53b19"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"dockerComposeFile": "compose.yml", "service": "app"}, "Docker Compose dev containers are not supported yet"),
        ({"image": "x", "runArgs": ["--gpus", "all"]}, "runArgs option '--gpus' is not supported"),
        ({"image": "x", "runArgs": ["--cap-add"]}, "runArgs option --cap-add needs a value"),
        ({"name": "nothing"}, "neither image nor build.dockerfile is set"),
        ({"image": "x", "containerEnv": ["A=1"]}, "containerEnv: should be an object"),
        ({"image": "x", "hostRequirements": {"memory": "lots"}}, "'lots' is not a size"),
        ({"image": "x", "mounts": ["type=nfs,target=/x"]}, "mount type 'nfs' is not supported"),
    ],
)
def test_refusals_name_what_is_wrong(tmp_path: Path, document: dict[str, object], message: str) -> None:
    config = write(tmp_path, json.dumps(document))
    with pytest.raises(ConfigError) as raised:
        load_devcontainer(".devcontainer/devcontainer.json", str(tmp_path), {})
    assert str(raised.value).startswith(f"{config}: ")
    assert message in str(raised.value)


def test_run_args_and_mounts() -> None:
    options = parse_run_args(
        ["--cap-add=SYS_PTRACE", "--security-opt", "seccomp=unconfined", "-e", "A=1", "--env=B=2", "--label", "k=v",
         "--init", "--privileged", "--add-host", "db:127.0.0.1", "--network=host", "--memory", "512m", "--cpus", "1.5"],
        "F",
    )  # fmt: skip
    assert options == {
        "cap_add": ["SYS_PTRACE"],
        "security_opt": ["seccomp=unconfined"],
        "env": {"A": "1", "B": "2"},
        "labels": {"k": "v"},
        "init": True,
        "privileged": True,
        "extra_hosts": ["db:127.0.0.1"],
        "network": "host",
        "memory": 512 * 1024**2,
        "nano_cpus": 1_500_000_000,
    }
    assert parse_mount("type=bind,source=/a,target=/b,readonly", "F") == {
        "Type": "bind", "Source": "/a", "Target": "/b", "ReadOnly": True,
    }  # fmt: skip
    assert parse_mount("source=cache,target=/cache", "F")["Type"] == "volume"
    assert parse_mount({"type": "tmpfs", "target": "/t"}, "F") == {"Type": "tmpfs", "Target": "/t", "ReadOnly": False}


def test_dockerignore_and_project_files(tmp_path: Path) -> None:
    for name in ("Dockerfile", "keep.txt", "a.log", "logs/x.log", "build/out", "build/keep.me", ".rig/state.sqlite"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    (tmp_path / ".dockerignore").write_text("# comment\n*.log\n**/*.log\nbuild\n!build/keep.me\n")
    assert context_files(str(tmp_path)) == [".dockerignore", "Dockerfile", "build/keep.me", "keep.txt"]
    assert ".rig/state.sqlite" not in project_files(str(tmp_path))  # rig's own state never goes in


def test_feature_options_as_the_spec_says() -> None:
    metadata = {"options": {"greeting": {"default": "hi"}, "with-dash": {"default": True}, "version": {"default": "1"}}}
    assert options_env(metadata, {"greeting": "hello"}, "k", "F") == [
        'GREETING="hello"', 'WITH_DASH="true"', 'VERSION="1"',
    ]  # fmt: skip
    assert options_env(metadata, "2.0", "k", "F")[-1] == 'VERSION="2.0"'
    assert safe_id("9lives.x") == "_LIVES_X"


def _feature(key: str, *, after: list[str] | None = None, needs: list[str] | None = None) -> dict[str, object]:
    return {"key": key, "kind": "local", "folder": key, "installs_after": after or [], "depends_on": needs or []}


def test_install_order_by_rounds() -> None:
    features = [
        _feature("./c", after=["./a"]),
        _feature("./b"),
        _feature("./a", needs=["./b"]),
        _feature("./d", after=["./gone"]),
    ]
    assert [item["key"] for item in install_order(features, [], "F")] == ["./b", "./d", "./a", "./c"]
    override = [_feature("./x"), _feature("./y")]
    assert [item["key"] for item in install_order(override, ["./y"], "F")] == ["./y", "./x"]
    with pytest.raises(ConfigError, match="cycle"):
        install_order([_feature("./p", needs=["./q"]), _feature("./q", needs=["./p"])], [], "F")


def test_forward_ports_as_rig_ports(tmp_path: Path) -> None:
    write(tmp_path, json.dumps({
        "image": "x", "forwardPorts": [3000, "db:5432", 8080],
        "portsAttributes": {"3000": {"label": "web"}, "8080": {"label": "api", "protocol": "https"}},
    }))  # fmt: skip
    loaded = load_devcontainer(".devcontainer/devcontainer.json", str(tmp_path), {})
    assert declared_ports(loaded) == [
        {"port": 3000, "label": "web", "protocol": "http"},
        {"port": 5432, "label": "", "protocol": "http"},
        {"port": 8080, "label": "api", "protocol": "https"},
    ]
