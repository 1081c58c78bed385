"""Host storage: one private JSON file per provider that outlives project state; and rig's per-user dirs."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rigcli.errors import StateError
from rigcli.provider_api import KeyValueStore
from rigcli.state import HostStorage, default_host_storage_dir, fragments_dir, logs_dir, rig_home
from rigcli.state.host_storage import host_storage_file_name


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_file_name_is_a_slug_plus_a_hash() -> None:
    digest = hashlib.sha256(b"acme/cloud provider").hexdigest()[:12]
    assert host_storage_file_name("acme/cloud provider") == f"acme-cloud-provider-{digest}.json"
    assert host_storage_file_name("--x--") == f"x-{hashlib.sha256(b'--x--').hexdigest()[:12]}.json"
    assert host_storage_file_name("a b") != host_storage_file_name("a/b")


def test_records_live_in_one_private_file(tmp_path: Path) -> None:
    directory = tmp_path / "host" / "providers"
    storage: KeyValueStore = HostStorage("test", directory)
    storage.set("token", {"value": "secret"})

    assert os.listdir(directory) == [host_storage_file_name("test")]
    assert _mode(directory) == 0o700
    file = directory / host_storage_file_name("test")
    assert _mode(file) == 0o600
    document = json.loads(file.read_text())
    assert document["provider_id"] == "test"
    assert document["records"]["token"]["value"] == {"value": "secret"}
    assert set(document["records"]["token"]) == {"value", "created_at", "updated_at"}

    fresh = HostStorage("test", directory)  # another process reading the same file
    record = fresh.get("token")
    assert record is not None
    assert (record["provider_id"], record["key"], record["value"]) == ("test", "token", {"value": "secret"})


def test_set_keeps_created_at_and_leaves_no_temp_files(tmp_path: Path) -> None:
    storage = HostStorage("test", tmp_path / "providers")
    storage.set("token", "one")
    first = storage.get("token")
    for index in range(5):
        storage.set("token", f"v{index}")
    last = storage.get("token")
    assert first is not None and last is not None
    assert last["value"] == "v4"
    assert last["created_at"] == first["created_at"]
    assert last["updated_at"] > first["updated_at"]
    assert os.listdir(storage.directory) == [storage.path.name]


def test_entries_delete_and_clear(tmp_path: Path) -> None:
    storage = HostStorage("test", tmp_path)
    assert storage.entries() == [] and storage.clear() == 0
    for key in ["b:2", "a:1", "b:1"]:
        storage.set(key, key)
    assert [r["key"] for r in storage.entries()] == ["a:1", "b:1", "b:2"]
    assert [r["key"] for r in storage.entries("b:")] == ["b:1", "b:2"]
    assert storage.delete("a:1") is True
    assert storage.delete("a:1") is False
    assert storage.clear() == 2
    assert not storage.path.exists()
    assert storage.get("b:1") is None


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"provider_id": "test"}',
        '{"provider_id": "test", "records": {"k": "no value field"}}',
        '{"provider_id": "somebody-else", "records": {}}',
    ],
)
def test_malformed_file_is_an_error_and_is_left_alone(tmp_path: Path, content: str) -> None:
    storage = HostStorage("test", tmp_path)
    storage.path.write_text(content)
    with pytest.raises(StateError, match=f"^Invalid rig provider host storage at {storage.path}$"):
        storage.get("k")
    with pytest.raises(StateError, match="Invalid rig provider host storage"):
        storage.set("k", 1)
    assert storage.path.read_text() == content


def test_writes_from_many_processes_are_not_lost(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom rigcli.state import HostStorage\n"
        "s = HostStorage('test', sys.argv[1])\n"
        "for i in range(10): s.set(f'{sys.argv[2]}-{i}', i)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), f"p{n}"]) for n in range(4)]
    assert [proc.wait(timeout=60) for proc in procs] == [0, 0, 0, 0]
    assert len(HostStorage("test", tmp_path).entries()) == 40


def test_per_user_directories_follow_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIG_HOME", str(tmp_path / "home"))
    assert rig_home() == tmp_path / "home"
    assert fragments_dir() == tmp_path / "home" / "fragments"
    assert logs_dir() == tmp_path / "home" / "logs"
    assert default_host_storage_dir() == tmp_path / "home" / "providers"
    assert HostStorage("x").directory == tmp_path / "home" / "providers"
    monkeypatch.setenv("RIG_HOST_STORAGE_DIR", str(tmp_path / "creds"))
    assert default_host_storage_dir() == tmp_path / "creds"

    monkeypatch.delenv("RIG_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert rig_home() != tmp_path / "home"
    if sys.platform.startswith("linux"):
        assert rig_home() == tmp_path / "xdg" / "rig"
