"""The docker provider's container options: checked by name, laid over the create request (rig's own
labels kept), and the exec defaults journaled with the container for rig exec and rig shell."""

from __future__ import annotations

import pytest

from providers.docker.attach import journaled_exec
from providers.docker.container_options import apply_options, asked, checked
from rigcli.errors import ProviderError


def test_an_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(ProviderError, match="docker container option 'gpus' is not one rig knows"):
        checked({"env": {}, "gpus": "all"})
    with pytest.raises(ProviderError, match="env must be a mapping"):
        checked({"env": ["A=1"]})


def test_options_over_the_create_request() -> None:
    body: dict[str, object] = {
        "Image": "x",
        "Entrypoint": ["sleep"],
        "Cmd": ["1"],
        "Labels": {"rig.effect": "rig-1"},
        "HostConfig": {"NetworkMode": "none", "Init": True},
    }
    wanted, defaults = asked(
        {
            "env": {"A": "1"},
            "user": "dev",
            "labels": {"rig.effect": "forged", "team": "web"},
            "mounts": [{"Type": "volume", "Source": "v", "Target": "/v"}],
            "cap_add": ["NET_ADMIN"],
            "init": False,
            "network": "default",
            "workdir": "/src",
            "exec_user": "dev",
            "exec_env": {"B": 2},
        }
    )
    apply_options(body, wanted)
    assert body["Env"] == ["A=1"] and body["User"] == "dev" and body["WorkingDir"] == "/src"
    assert body["Labels"] == {"rig.effect": "rig-1", "team": "web"}  # rig's own label is never replaced
    assert body["Entrypoint"] == ["sleep"]  # rig's idle process unless entrypoint is asked for
    assert body["HostConfig"] == {
        "NetworkMode": "default",
        "Init": False,
        "Mounts": [{"Type": "volume", "Source": "v", "Target": "/v"}],
        "CapAdd": ["NET_ADMIN"],
    }
    assert defaults == {"user": "dev", "env": {"B": "2"}}
    assert journaled_exec({"exec": {**defaults, "workdir": "/src"}}) == ("dev", {"B": "2"}, "/src")
    assert journaled_exec({"machine_id": "rig-1"}) == (None, {}, None)
