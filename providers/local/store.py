"""Where local machines and snapshots live: directories under .rig/ plus records in provider storage."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
from dataclasses import asdict
from pathlib import Path

from providers.local.layout import FILES, MARKER, machine_dir, snapshot_complete, snapshot_dir
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonObject, JsonValue
from rigcli.provider_api import EffectEntry, EffectJournal, KeyValueStore
from rigcli.provider_kit import now_iso
from rigcli.speed.records import lazy_dataclass

# What rig names its directories: <id>, .tmp-<id> while being written, .del-<id>-<hex> while being
# removed. The id (m-… machine, s-… snapshot) is also the effect id, so a directory left by a killed
# rig is found from the journal, and nothing else under machines/ or snapshots/ is ever taken as ours.
_OURS = re.compile(r"^(?:\.tmp-|\.del-)?(?P<id>(?P<prefix>[ms])-[0-9a-f]{12})(?:-[0-9a-f]{6})?$")
_KINDS = {"m": ("machine", "machines", "machine_id"), "s": ("snapshot", "snapshots", "snapshot_id")}


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def copy_tree(source: Path, target: Path) -> None:
    """A full, independent copy (never hardlinks): ``cp -a --reflink=auto``, else shutil."""
    if shutil.which("cp"):
        done = subprocess.run(
            ["cp", "-a", "--reflink=auto", "--", str(source), str(target)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        if done.returncode == 0:
            return
        shutil.rmtree(target, ignore_errors=True)  # BSD cp has no --reflink; start over portably
    try:
        shutil.copytree(source, target, symlinks=True)
    except (shutil.Error, OSError) as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise ProviderError(f"Cannot copy {source} to {target}: {_copy_failure(exc)}") from None


def _copy_failure(exc: BaseException) -> str:
    """The first reason of a failed copy, as one phrase ("No space left on device")."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        why = str(exc.args[0][0][-1])
        found = re.search(r"\[Errno \d+\] ([^:]+)", why)
        return found.group(1) if found else why
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _text(record: JsonObject, key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) else None


@lazy_dataclass(frozen=True)
class MachineRecord:
    """A machine as stored: its directory under the state dir and the snapshot it came from."""

    id: str
    path: str  # relative to the state dir, so a moved project keeps its machines
    created_at: str
    source_snapshot: str | None = None

    @classmethod
    def from_json(cls, value: JsonValue) -> MachineRecord | None:
        """The record stored under ``machine:<id>``; None when it is not a readable one."""
        if not isinstance(value, dict):
            return None
        machine_id, path, created_at = (_text(value, key) for key in ("id", "path", "created_at"))
        if machine_id is None or path is None or created_at is None:
            return None
        return cls(machine_id, path, created_at, _text(value, "source_snapshot"))


@lazy_dataclass(frozen=True)
class SnapshotRecord:
    """A snapshot as stored: its immutable directory and the machine it was taken of."""

    id: str
    path: str
    created_at: str
    source_machine: str | None = None

    @classmethod
    def from_json(cls, value: JsonValue) -> SnapshotRecord | None:
        """The record stored under ``snapshot:<id>``; None when it is not a readable one."""
        if not isinstance(value, dict):
            return None
        snapshot_id, path, created_at = (_text(value, key) for key in ("id", "path", "created_at"))
        if snapshot_id is None or path is None or created_at is None:
            return None
        return cls(snapshot_id, path, created_at, _text(value, "source_machine"))


class LocalStore:
    """Machine directories (``machines/<id>``) and snapshots (``snapshots/<id>/files``) under state_dir."""

    def __init__(self, state_dir: str, storage: KeyValueStore) -> None:
        self.root = Path(state_dir)
        self.storage = storage

    # -- machines -------------------------------------------------------------------------
    def machine_dir(self, record: MachineRecord) -> Path:
        return self.root / record.path

    def create_machine(self, effects: EffectJournal, snapshot_id: str | None = None) -> MachineRecord:
        machine_id = new_id("m")
        relative = f"machines/{machine_id}"
        target = self.root / relative
        # Journaled before the directory exists: a rig killed from here on leaves a findable effect.
        effects.requested("machine", {"machine_id": machine_id, "path": relative}, effect_id=machine_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        if snapshot_id is None:
            target.mkdir()
        else:
            staging = target.parent / f".tmp-{machine_id}"
            try:
                copy_tree(self.snapshot_files(snapshot_id), staging)
                os.replace(staging, target)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        record = MachineRecord(machine_id, relative, now_iso(), snapshot_id)
        self.storage.set(f"machine:{machine_id}", asdict(record))
        effects.confirmed(machine_id)
        return record

    def machine_path(self, machine_id: str) -> Path:
        """Where machine ``machine_id`` lives (or lived); ProviderError for an id rig would not make."""
        path = machine_dir(str(self.root), machine_id)
        if path is None:
            raise ProviderError(f"{machine_id!r} is not a local machine id")
        return Path(path)

    def get_machine(self, machine_id: str) -> MachineRecord | None:
        stored = self.storage.get(f"machine:{machine_id}")
        return MachineRecord.from_json(stored["value"]) if stored else None

    def delete_machine(self, record: MachineRecord, effects: EffectJournal) -> None:
        # Also what an earlier, killed delete left (.del-<id>-…): marked deleted means all gone.
        self.remove_effect(record.id)
        effects.deleted(record.id)

    def list_machines(self) -> list[MachineRecord]:
        records = [MachineRecord.from_json(item["value"]) for item in self.storage.entries("machine:")]
        return [record for record in records if record is not None]

    # -- snapshots ------------------------------------------------------------------------
    def snapshot_dir(self, snapshot_id: str) -> Path:
        path = snapshot_dir(str(self.root), snapshot_id)
        if path is None:
            raise ProviderError(f"Invalid local snapshot id {snapshot_id!r}")
        return Path(path)

    def snapshot_files(self, snapshot_id: str) -> Path:
        if not self.is_complete(snapshot_id):
            msg = (
                f"Local snapshot {snapshot_id} is missing or incomplete under {self.root / 'snapshots'}; "
                "run `rig apply` to rebuild it"
            )
            raise ProviderError(msg)
        return self.snapshot_dir(snapshot_id) / FILES

    def is_complete(self, snapshot_id: str) -> bool:
        return snapshot_complete(str(self.root), snapshot_id)

    def create_snapshot(self, source: Path, *, source_machine: str | None, effects: EffectJournal) -> SnapshotRecord:
        snapshot_id = new_id("s")
        target = self.snapshot_dir(snapshot_id)
        staging = target.parent / f".tmp-{snapshot_id}"
        resource: JsonObject = {"snapshot_id": snapshot_id, "path": f"snapshots/{snapshot_id}"}
        effects.requested("snapshot", resource, effect_id=snapshot_id)
        staging.mkdir(parents=True)
        try:
            copy_tree(source, staging / FILES)
            record = SnapshotRecord(snapshot_id, f"snapshots/{snapshot_id}", now_iso(), source_machine)
            (staging / MARKER).write_text(json.dumps(asdict(record), indent=2) + "\n", encoding="utf-8")
            os.replace(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        self.storage.set(f"snapshot:{snapshot_id}", asdict(record))
        effects.confirmed(snapshot_id)
        return record

    def delete_snapshot(self, snapshot_id: str, effects: EffectJournal) -> bool:
        self.snapshot_dir(snapshot_id)  # refuses an id that is not a snapshot's
        removed = self.remove_effect(snapshot_id)
        effects.deleted(snapshot_id)
        return removed

    def list_snapshots(self) -> list[SnapshotRecord]:
        records = [SnapshotRecord.from_json(item["value"]) for item in self.storage.entries("snapshot:")]
        return [record for record in records if record is not None]

    # -- by effect id: what rm and gc use -------------------------------------------------------
    def remove_effect(self, effect_id: str) -> bool:
        """Remove everything under this id (the directory, a half-written or half-removed copy, the
        record); True when anything was there. An id rig would not have made is refused."""
        matched = _OURS.match(effect_id)
        if matched is None or matched["id"] != effect_id:
            raise ProviderError(f"{effect_id!r} is not a local machine or snapshot id")
        kind, folder, _ = _KINDS[matched["prefix"]]
        parent = self.root / folder
        found = False
        if parent.is_dir():
            live = parent / effect_id
            if live.exists() or live.is_symlink():
                # Rename first so a half-deleted tree never looks like a live machine or snapshot.
                os.replace(live, parent / f".del-{effect_id}-{secrets.token_hex(3)}")
            for entry in sorted(parent.iterdir()):
                named = _OURS.match(entry.name)
                if named is not None and named["id"] == effect_id:
                    found = True
                    remove_tree(entry)
        return self.storage.delete(f"{kind}:{effect_id}") or found

    def find_effects(self) -> list[EffectEntry]:
        """Every id this store can see: directories named as rig names them, and stored records."""
        ids: dict[str, None] = {}
        for folder in ("machines", "snapshots"):
            parent = self.root / folder
            names = sorted(entry.name for entry in parent.iterdir()) if parent.is_dir() else []
            ids.update((named["id"], None) for named in map(_OURS.match, names) if named is not None)
        for prefix in ("machine:", "snapshot:"):
            for item in self.storage.entries(prefix):
                named = _OURS.match(item["key"][len(prefix) :])
                if named is not None:
                    ids[named["id"]] = None
        found: list[EffectEntry] = []
        for effect_id in ids:
            kind, folder, key = _KINDS[effect_id[0]]
            found.append({"id": effect_id, "kind": kind, "resource": {key: effect_id, "path": f"{folder}/{effect_id}"}})
        return found


__all__ = ["LocalStore", "MachineRecord", "SnapshotRecord", "copy_tree", "new_id", "now_iso"]
