"""Secrets end to end: a secret() value never reaches stdout, stderr, the state database, $RIG_HOME or a crash log."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.cli.cli_support import Result, run_rig, write_project

SECRET_CONFIG = r"""
import logging

from rigcli import define_provider, define_config, secret, sequence


class Runtime:
    def __init__(self, setup):
        self.token = setup.config["token"]
        self.minted = "minted-" + self.token[::-1]
        setup.mark_secret(self.minted)  # a value the provider learns itself


class Plugin:
    provider_id = "vault"

    def create_provider(self, setup):
        runtime = Runtime(setup)

        class Controller:
            provider_id = "vault"

            def runtime(self, context):
                return runtime

        return Controller()


def leak(step, vault, log):
    token = vault.token
    print("token=" + token)
    print(token[:5], end="")  # one secret split across two writes
    print(token[5:])
    logging.getLogger("project").warning("logging %s", token)
    log.info("the log parameter: %s", token)
    print("minted " + vault.minted)
    return {"ctx": {"token": token, "header": f"Bearer {token}!", "minted": vault.minted}}


# A command that writes the secret across two reads: a 64 KiB line cut just inside it.
SPLIT = (
    "python3 -c \"import os, sys, time; t = os.environ['RIG_TEST_TOKEN']; "
    "sys.stdout.write('x' * 65531 + t[:10]); sys.stdout.flush(); time.sleep(0.3); print(t[10:])\""
)


def command(step, box):
    machine = box.create_machine()
    machine.exec(SPLIT, name="split")
    machine.exec('echo "$RIG_TEST_TOKEN" >&2; exit 3', name="fails", check=False)
    return {"ctx": {**step.ctx, "machine": machine.id}}


def boom(step, vault):
    raise RuntimeError(f"cannot reach the vault with {vault.token}")


def create(workflow, workspace, vault):
    print("creating with " + vault.token)
    return {"token": vault.token}


def show(workspace, vault):
    return {"token": vault.token, "text": f"token={vault.token}"}


def status(workflow, vault):
    return f"status {vault.token}"


providers = {
    "vault": define_provider("vault", plugin=Plugin(), token=secret("RIG_TEST_TOKEN")),
    "box": define_provider("local"),
}
good = (
    sequence("good")
    .task("leak", leak)
    .task("command", command)
    .workspace(create=create)
    .workspace_operation("show", run=show)
    .operation("status", run=status)
)
def brittle_create(workflow, workspace, vault):
    raise RuntimeError(f"create refused {vault.token}")


bad = sequence("bad").task("boom", boom)
brittle = sequence("brittle").task("fine", lambda step: None).workspace(create=brittle_create)
workflows = define_config(workflows=[good, bad, brittle], providers=providers)
"""


def _files_under(*roots: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for root in roots if root.exists() for path in root.rglob("*") if path.is_file()}


@pytest.fixture
def secret_value() -> str:
    return f"tok-{uuid.uuid4().hex}"


def test_a_secret_is_masked_in_every_output_and_stored_row(
    tmp_path: Path, secret_value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = write_project(tmp_path / "project", SECRET_CONFIG)
    home = tmp_path / "home"
    env = {"RIG_TEST_TOKEN": secret_value, "RIG_HOME": str(home), "RIG_RENDER": "0"}

    def rig(*args: str, code: int = 0) -> Result:
        result = run_rig(*args, cwd=project, env=env, subprocess=True)
        assert result.returncode == code, result
        return result

    results = [
        rig("--workflow", "good", "apply"),
        rig("--workflow", "good", "cache", "invalidate", "leak"),
        rig("--json", "--workflow", "good", "apply"),
        rig("--workflow", "bad", "apply", code=1),
        rig("--json", "--workflow", "bad", "apply", code=1),
        rig("--workflow", "good", "fork", "dev"),
        rig("--json", "--workflow", "good", "fork", "dev2"),
        rig("op", "dev", "show"),
        rig("--json", "op", "dev", "show"),
        rig("--workflow", "good", "op", "status"),
        rig("--json", "--workflow", "good", "op", "status"),
        rig("--json", "ls"),
        rig("--json", "--workflow", "good", "plan"),
        rig("--json", "--workflow", "good", "cache", "ls"),
        rig("--json", "rm", "dev", "--yes"),
        rig("--workflow", "brittle", "fork", "broken", code=1),  # a failed record keeps its error, masked
    ]
    listed = rig("--json", "--workflow", "brittle", "ls")
    results.append(listed)
    # A crash: an unexpected error whose message holds the secret, with and without RIG_DEBUG.
    import rigcli.cli.commands.listing as listing

    def crash(session: object, target: object) -> int:
        session.workflow_names()  # type: ignore[attr-defined]  # loads the project: the secret is known
        raise RuntimeError(f"unexpected {secret_value}")

    monkeypatch.setattr(listing, "ls", crash)
    for extra in ({}, {"RIG_DEBUG": "1"}):
        crashed = run_rig("ls", cwd=project, env={**env, **extra})
        assert crashed.returncode == 3, crashed
        results.append(crashed)

    shown = "".join(result.stdout + result.stderr for result in results)
    assert "***" in shown  # the secret was there to mask
    assert "x" * 100 in shown  # the long command line was shown (masked where the secret straddles two chunks)
    assert "Bearer ***!" in shown  # inside a longer string
    assert "cannot reach the vault with ***" in shown  # in an error message
    assert "create refused ***" in listed.stdout  # the failed workspace record's error column
    assert secret_value not in shown
    minted = "minted-" + secret_value[::-1]
    assert minted not in shown  # a value the provider marked secret
    assert secret_value[::-1] not in shown

    logs = list((home / "logs").glob("rig-*.log"))
    assert logs, "the crash wrote a log"
    stored = _files_under(project / ".rig", home)
    assert any(path.name == "state.sqlite" for path in stored)
    for path, data in stored.items():
        assert secret_value.encode() not in data, f"{path} holds the secret"
        assert secret_value[::-1].encode() not in data, f"{path} holds the marked secret"


def test_a_changed_secret_still_changes_the_provider_fingerprint(tmp_path: Path, secret_value: str) -> None:
    project = write_project(tmp_path / "project", SECRET_CONFIG)
    env = {"RIG_HOME": str(tmp_path / "home")}
    applied = run_rig("--workflow", "good", "apply", cwd=project, env={**env, "RIG_TEST_TOKEN": secret_value})
    assert applied.returncode == 0, applied
    same = run_rig("--json", "--workflow", "good", "plan", cwd=project, env={**env, "RIG_TEST_TOKEN": secret_value})
    assert same.json["nodes"][0]["status"] == "cached"
    other = f"tok-{uuid.uuid4().hex}"
    changed = run_rig("--json", "--workflow", "good", "plan", cwd=project, env={**env, "RIG_TEST_TOKEN": other})
    assert changed.json["nodes"][0]["reason"]["code"] == "provider-changed"
