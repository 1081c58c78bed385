"""``setup.host_storage``: per-user provider records (credentials) in one private JSON file per provider.

It outlives project state on purpose: deleting ``.rig/state.sqlite`` must not log anyone out.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rigcli.errors import StateError
from rigcli.jsonutil import JsonValue, to_plain_json
from rigcli.provider_api import StoredRecord
from rigcli.records import utc_now
from rigcli.speed.digests import sha256
from rigcli.speed.lazy_modules import lazy_module
from rigcli.state.paths import default_host_storage_dir
from rigcli.state.provider_storage import check_storable

if TYPE_CHECKING:
    import tempfile
else:
    tempfile = lazy_module("tempfile")


_UNSAFE = r"[^a-zA-Z0-9._-]+"  # compiled on first use, by re's own cache
HostRecord = dict[str, JsonValue]  # {"value": ..., "created_at": ..., "updated_at": ...} in the file


def host_storage_file_name(provider_id: str) -> str:
    """``<slug>-<sha256(provider_id)[:12]>.json``: readable, and distinct even when slugs collide."""
    slug = re.sub(_UNSAFE, "-", provider_id).strip("-") or "provider"
    digest = sha256(provider_id.encode("utf-8")).hexdigest()[:12]
    return f"{slug}-{digest}.json"


class HostStorage:
    """A KeyValueStore over ``<directory>/<slug>-<hash>.json`` (directory 0700, file 0600)."""

    def __init__(self, provider_id: str, directory: str | os.PathLike[str] | None = None) -> None:
        self.provider_id = provider_id
        self.directory = Path(directory) if directory is not None else default_host_storage_dir()
        self.path = self.directory / host_storage_file_name(provider_id)

    def get(self, key: str) -> StoredRecord | None:
        record = self._load().get(key)
        return None if record is None else self._stored(key, record)

    def set(self, key: str, value: JsonValue) -> None:
        check_storable(self.provider_id, key, value)
        with self._locked():
            records = self._load()
            now = utc_now()
            previous = records.get(key)
            created_at = previous.get("created_at", now) if previous is not None else now
            records[key] = {"value": to_plain_json(value), "created_at": created_at, "updated_at": now}
            self._save(records)

    def delete(self, key: str) -> bool:
        with self._locked():
            records = self._load()
            if records.pop(key, None) is None:
                return False
            self._save(records)
            return True

    def entries(self, prefix: str = "") -> list[StoredRecord]:
        records = self._load()
        return [self._stored(key, records[key]) for key in sorted(records) if key.startswith(prefix)]

    def clear(self) -> int:
        """Forget every record of this provider (removing its file); return how many there were."""
        with self._locked():
            count = len(self._load())
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return count

    def _stored(self, key: str, record: HostRecord) -> StoredRecord:
        return {
            "provider_id": self.provider_id,
            "key": key,
            "value": record["value"],
            "created_at": str(record.get("created_at", "")),
            "updated_at": str(record.get("updated_at", "")),
        }

    def _invalid(self) -> StateError:
        return StateError(f"Invalid rig provider host storage at {self.path}")

    def _load(self) -> dict[str, HostRecord]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as error:
            msg = f"Cannot read rig provider host storage at {self.path}: {error.strerror}"
            raise StateError(msg) from error
        try:
            data = json.loads(text)
        except ValueError as error:
            raise self._invalid() from error
        records = data.get("records") if isinstance(data, dict) else None
        if (
            not isinstance(records, dict)
            or data.get("provider_id") != self.provider_id
            or not all(isinstance(record, dict) and "value" in record for record in records.values())
        ):
            raise self._invalid()
        return records

    def _save(self, records: dict[str, HostRecord]) -> None:

        document = {"provider_id": self.provider_id, "records": records}
        payload = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
        # A temp file in the same directory, fsynced, then renamed over: readers and crashes see
        # the old file or the new one, never half of one. mkstemp creates it 0600.
        fd, temp = tempfile.mkstemp(dir=self.directory, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Serialise read-modify-write across processes by locking the directory itself.

        Locking the directory, not a sidecar file, keeps exactly one file per provider in it.
        """
        if not self.directory.is_dir():
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.directory, 0o700)  # mkdir's mode is filtered by the umask
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock


__all__ = ["HostStorage", "default_host_storage_dir", "host_storage_file_name"]
