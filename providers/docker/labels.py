"""The names that mark what rig made on a daemon: the provider's id, the labels and the snapshot repository.

A module of their own so that making a container (a fork) does not import what finding and
removing effects needs (the httpx client's module, exec sessions).
"""

from __future__ import annotations

PROVIDER_ID = "docker"  # in every artifact ref and record the provider makes
SNAPSHOT_REPO = "rig/snapshot"  # snapshots are tagged so `docker image prune` leaves them alone
EFFECT_LABEL = "rig.effect"
KIND_LABEL = "rig.kind"  # "machine" on containers, "snapshot" on committed images

__all__ = ["EFFECT_LABEL", "KIND_LABEL", "PROVIDER_ID", "SNAPSHOT_REPO"]
