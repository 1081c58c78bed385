"""The labels and the repository that mark what rig made on a daemon (``effects.py`` finds things by them).

A module of their own so that making a container (a fork) does not import what finding and
removing effects needs (the httpx client's module, exec sessions).
"""

from __future__ import annotations

SNAPSHOT_REPO = "rig/snapshot"  # snapshots are tagged so `docker image prune` leaves them alone
EFFECT_LABEL = "rig.effect"
KIND_LABEL = "rig.kind"  # "machine" on containers, "snapshot" on committed images

__all__ = ["EFFECT_LABEL", "KIND_LABEL", "SNAPSHOT_REPO"]
