"""Artifact refs as providers read them: the id one names, or a bare id string."""

from __future__ import annotations

from collections.abc import Mapping

from rigcli.errors import ProviderError


def ref_id(ref: object, *, provider_id: str, kind: str, key: str, what: str) -> str:
    """The id under ``key`` in this provider's ``kind`` artifact ref (or a bare id string)."""
    if isinstance(ref, str) and ref:
        return ref
    if isinstance(ref, Mapping) and ref.get("provider") == provider_id and ref.get("kind") == kind:
        value = ref.get(key)
        if isinstance(value, str) and value:
            return value
    raise ProviderError(f"Not a {what} ref: {ref!r}")


__all__ = ["ref_id"]
