"""Through `rig` on a real daemon: gc removes a snapshot of a snapshot before the one under it, prints
its JSON report even when a removal fails, and can forget what no daemon can be asked about."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import Result, run_rig, write_project

CONFIG = """
from rigcli import define_provider, env, workflow

IMAGE = env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
app = workflow("box", providers={"box": define_provider("docker", image=IMAGE)})


def first(step, box):
    machine = box.create_machine()
    try:
        machine.exec("echo one > /workspace/one", name="one")
        return {"ctx": {"first": machine.snapshot_ref()}}
    finally:
        machine.delete()


def second(step, box):
    machine = box.from_snapshot(step.ctx["first"])  # a snapshot of a snapshot: the daemon's child image
    try:
        machine.exec("echo two > /workspace/two", name="two")
        return {"ctx": {**step.ctx, "second": machine.snapshot_ref()}}
    finally:
        machine.delete()


workflows = app.sequence("box").task("first", first).task("second", second)
"""


@pytest.fixture
def project(tmp_path: Path, docker_daemon: Any) -> Iterator[Path]:
    path = write_project(tmp_path / "project", CONFIG)
    yield path
    api = docker_daemon.api
    labels = json.dumps({"label": [f"rig.project={path}"]})
    for container in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{container['Id']}", params={"force": "true"})
    for image in sorted(api.get("/images/json", params={"filters": labels}).json(), key=lambda i: -i["Created"]):
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


def _rig(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_rig(*args, cwd=project, env=env)


def _images(api: Any, project: Path) -> list[str]:
    labels = json.dumps({"label": [f"rig.project={project}"]})
    return [image["Id"] for image in api.get("/images/json", params={"filters": labels}).json()]


@pytest.mark.docker
def test_gc_removes_a_snapshot_of_a_snapshot_before_the_one_under_it(project: Path, docker_daemon: Any) -> None:
    assert _rig(project, "apply").returncode == 0
    assert len(_images(docker_daemon.api, project)) == 2
    assert _rig(project, "cache", "clear", "--yes").returncode == 0

    collected = _rig(project, "--json", "gc")

    assert collected.returncode == 0, collected  # one gc: no "image has dependent child images"
    assert collected.json["failed"] == []
    assert sorted(item["kind"] for item in collected.json["removed"]) == ["image", "image"]
    assert _images(docker_daemon.api, project) == []


def _apply_against_a_daemon_that_never_existed(project: Path) -> None:
    failed = _rig(project, "apply", env={"DOCKER_HOST": "unix:///nope.sock"})
    assert failed.returncode == 1, failed
    with contextlib.closing(sqlite3.connect(project / ".rig" / "state.sqlite")) as db:
        [(host,)] = db.execute("SELECT json_extract(resource_json, '$.host') FROM effects").fetchall()
    assert host == "unix:///nope.sock"  # journaled before the call that could not be made


@pytest.mark.docker
def test_json_gc_prints_its_report_when_a_removal_fails(project: Path) -> None:
    _apply_against_a_daemon_that_never_existed(project)

    collected = _rig(project, "--json", "gc")

    assert collected.returncode == 1, collected
    report = collected.json  # the one document, failure or not
    assert set(report) >= {"dry_run", "removed", "kept", "failed", "unreachable"}
    [failed] = report["failed"]
    assert "unix:///nope.sock" in failed["reason"]
    [line] = collected.error_lines
    assert "unix:///nope.sock" in line


@pytest.mark.docker
def test_forget_unreachable_unsticks_gc_and_journals_why(project: Path) -> None:
    _apply_against_a_daemon_that_never_existed(project)
    assert _rig(project, "gc").returncode == 1  # stuck: every gc names that daemon
    assert _rig(project, "gc").returncode == 1

    forgot = _rig(project, "--json", "gc", "--forget-unreachable")

    assert forgot.returncode == 0, forgot
    [item] = forgot.json["forgotten"]
    assert "unix:///nope.sock" in item["reason"]
    assert forgot.json["failed"] == []
    with contextlib.closing(sqlite3.connect(project / ".rig" / "state.sqlite")) as db:
        [(status, error)] = db.execute("SELECT status, error FROM effects").fetchall()
    assert status == "forgotten" and "unix:///nope.sock" in error  # kept as a record, not deleted silently
    listed = _rig(project, "--json", "gc", "--dry-run")
    assert listed.returncode == 0 and listed.json["removed"] == [], listed
    assert _rig(project, "gc").returncode == 0
