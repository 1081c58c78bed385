"""The docker provider's live-status probe: one request for many containers answers as a probe of each
alone would, on every endpoint, and a daemon that does not answer fails the probe within its bound."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import Harness

from providers.docker import lifecycle, plugin, rawhttp
from providers.docker.endpoint import resolve_endpoint
from providers.docker.rawhttp import RawClient
from rigcli.errors import UnreachableError
from rigcli.provider_api import EffectEntry, LiveStatus
from rigcli.timeouts import Bound
from tests.silent_peers import Silent


def container_entry(machine_id: str, host: str, **details: Any) -> EffectEntry:
    return {"id": machine_id, "kind": "container", "resource": {"machine_id": machine_id, "host": host, **details}}


def test_one_probe_of_many_answers_as_each_alone(docker: Harness, docker_daemon: Any, make_harness: Any) -> None:
    api = docker_daemon.api
    host = docker.controller.client.host
    running, stopped, removed = (docker.runtime.create_machine() for _ in range(3))
    api.post(f"/containers/{stopped.container_id}/stop", params={"t": "0"})
    api.delete(f"/containers/{removed.container_id}", params={"force": "true"})
    entries = [
        container_entry(running.id, host, container_id=running.container_id),
        container_entry(stopped.id, host),  # before its create was confirmed: found by its name
        container_entry(removed.id, host, container_id=removed.container_id),
        container_entry("rig-elsewhere", "tcp://another-daemon:2376"),
        {"id": "img-1", "kind": "image", "resource": {"tag": "rig-snapshot:x", "host": host}},
    ]
    together = docker.controller.probe(entries)
    alone: dict[str, LiveStatus] = {}
    for entry in entries:
        alone.update(make_harness(plugin, {"image": docker_daemon.image}).controller.probe([entry]))
    # The same states, and the same details but for the daemon's ages ("Up 2 seconds", "… 1 second ago").
    assert {key: status.state for key, status in together.items()} == {key: s.state for key, s in alone.items()}
    assert together[removed.id] == alone[removed.id] and together["rig-elsewhere"] == alone["rig-elsewhere"]
    assert together[stopped.id].detail.split(")")[0] == alone[stopped.id].detail.split(")")[0]  # "Exited (137"
    assert together[running.id].state == "running"
    assert together[stopped.id].state == "stopped"
    assert together[removed.id] == LiveStatus("missing", f"container {removed.container_id[:12]} is gone")
    assert together["rig-elsewhere"].state == "unknown"
    assert "another-daemon" in together["rig-elsewhere"].detail
    assert "img-1" not in together  # an image is not a machine: it has no live state


def test_a_container_labelled_for_another_project_path_is_still_found(
    docker: Harness, docker_daemon: Any, tmp_path: Path
) -> None:
    # A moved project: its containers carry the old path in rig.project, so the list misses them.
    machine = docker.runtime.create_machine()
    entry = container_entry(machine.id, docker.controller.client.host, container_id=machine.container_id)
    raw = RawClient(docker.controller.endpoint)
    try:
        answers = lifecycle.probe(raw, str(tmp_path / "moved"), [entry])
    finally:
        raw.close()
    assert answers[machine.id].state == "running"
    assert docker.controller.probe([entry])[machine.id].state == "running"  # as through the label list


@pytest.fixture
def silent_daemon(tmp_path: Path) -> Iterator[str]:
    """A unix socket that accepts connections and never answers."""
    path = str(tmp_path / "silent.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"unix://{path}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def test_a_daemon_that_never_answers_fails_the_probe_within_its_bound(silent_daemon: str) -> None:
    raw = RawClient(resolve_endpoint({"host": silent_daemon}))
    entry = container_entry("rig-silent", silent_daemon)
    started = time.monotonic()
    try:
        expected = rf"^Cannot reach the Docker daemon at {silent_daemon}: no answer to GET /containers/json within 2s"
        with pytest.raises(UnreachableError, match=expected + r" \(RIG_CHECK_TIMEOUT\)$"):
            lifecycle.probe(raw, "/nowhere", [entry])
    finally:
        raw.close()
    assert time.monotonic() - started < lifecycle.PROBE_TIMEOUT + 5  # bounded, never asked twice


def test_a_daemon_that_did_not_answer_is_not_asked_again_for_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within SILENCE_STANDS, anything it would have as long or less to answer gets the first answer at once."""
    with Silent.unix(tmp_path / "docker.sock") as peer:
        raw = RawClient(resolve_endpoint({"host": f"unix://{tmp_path / 'docker.sock'}"}))
        try:
            with pytest.raises(UnreachableError) as first:
                raw.request("GET", "/_ping", bound=Bound(0.3, "RIG_CHECK_TIMEOUT"))
            asked = peer.accepted
            for seconds in (0.3, 0.1):
                with pytest.raises(UnreachableError) as again:
                    raw.request("GET", "/containers/json", bound=Bound(seconds, "RIG_CHECK_TIMEOUT"))
                assert again.value is first.value and peer.accepted == asked  # not even connected
            monkeypatch.setattr(rawhttp, "SILENCE_STANDS", 0.0)  # from now on, what is remembered stands no time
            with pytest.raises(UnreachableError, match=r"no answer to GET /info within 0\.5s \(RIG_READ_TIMEOUT\)"):
                raw.request("GET", "/info", bound=Bound(0.5, "RIG_READ_TIMEOUT"))  # a longer bound: asked
            assert peer.accepted == asked + 1
            with pytest.raises(UnreachableError, match=r"no answer to GET /_ping within 0\.1s"):
                raw.request("GET", "/_ping", bound=Bound(0.1, "RIG_CHECK_TIMEOUT"))  # what stood has expired
            assert peer.accepted == asked + 2
        finally:
            raw.close()
