"""rigkit parity through the installed rig (DESIGN §11): ``local.run(argv, capture=True)`` and host
capabilities (``define_host_capability`` answered for a provider's ``request_capability``)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.cli_support import run_rig, write_project

CAPTURE_CONFIG = """
import os

from rigcli import define_provider, secret, sequence


def probe(step, local):
    result = local.run(
        ["sh", "-c", "echo out $API_TOKEN; printf 'caf\\\\303\\\\251\\\\n'; echo err >&2; exit 3"], capture=True
    )
    return {"ctx": {"result": result, "type": type(result).__name__}}


# A provider whose config names the secret: rig masks it from the first line on.
vault = define_provider("local", token=secret("API_TOKEN"))
workflows = sequence("w").add_provider("vault", vault).task("probe", probe)
"""


def test_local_run_with_capture_returns_the_exit_code_and_masked_output(tmp_path: Path) -> None:
    project = write_project(tmp_path / "capture", CAPTURE_CONFIG)
    env = {"RIG_TRUST_HOST_COMMANDS": "1", "API_TOKEN": "tok-very-secret-123"}
    applied = run_rig("--json", "apply", cwd=project, env=env, subprocess=True)
    assert applied.returncode == 0, applied
    assert applied.json["context"] == {
        "result": {"exit_code": 3, "stdout": "out ***\ncafé\n", "stderr": "err\n"},
        "type": "dict",
    }
    assert "tok-very-secret-123" not in applied.stdout + applied.stderr
    assert "out ***" not in applied.stderr  # captured: it never reached the terminal


def test_local_run_with_capture_keeps_the_consent_policy(tmp_path: Path) -> None:
    project = write_project(tmp_path / "capture", CAPTURE_CONFIG)
    refused = run_rig("apply", cwd=project, env={"API_TOKEN": "x" * 12}, subprocess=True)
    assert refused.returncode == 1
    assert "Host command requires confirmation in an interactive terminal" in refused.error_lines[0]


CAPABILITY_CONFIG = """
import os

from rigcli import define_host_capability, define_provider, sequence

asked = []


def give_token(params):
    asked.append(params)
    return {"token": "t-" + params["scope"], "asked": len(asked)}


if not os.environ.get("NO_CAPABILITY"):
    define_host_capability("github.token", give_token)


class Plugin:
    provider_id = "box"

    def create_provider(self, setup):
        at_setup = setup.request_capability("github.token", {"scope": "setup"})

        class Controller:
            provider_id = "box"

            def runtime(self, context):
                return {
                    "setup": at_setup,
                    "runtime": context.request_capability(os.environ.get("ASK", "github.token"), {"scope": "repo"}),
                }

        return Controller()


def use(step, box):
    return {"ctx": box}


workflows = sequence("w").add_provider("box", define_provider("box", plugin=Plugin())).task("use", use)
"""


def test_a_provider_gets_what_the_project_defined_for_a_host_capability(tmp_path: Path) -> None:
    project = write_project(tmp_path / "capability", CAPABILITY_CONFIG)
    applied = run_rig("--json", "apply", cwd=project, subprocess=True)
    assert applied.returncode == 0, applied
    assert applied.json["context"] == {
        "setup": {"token": "t-setup", "asked": 1},
        "runtime": {"token": "t-repo", "asked": 2},
    }


def test_an_unregistered_host_capability_is_an_error(tmp_path: Path) -> None:
    project = write_project(tmp_path / "capability", CAPABILITY_CONFIG)
    failed = run_rig("apply", cwd=project, env={"ASK": "aws.creds"}, subprocess=True)
    assert failed.returncode == 1, failed
    assert len(failed.error_lines) == 1
    assert 'Host capability "aws.creds" is not registered' in failed.error_lines[0]

    failed = run_rig("plan", cwd=project, env={"NO_CAPABILITY": "1"}, subprocess=True)
    assert failed.returncode == 1, failed
    assert 'Host capability "github.token" is not registered' in failed.error_lines[0]
