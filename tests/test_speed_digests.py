"""``speed.digests.sha256`` is SHA-256: every hash rig stored before it keeps matching."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from rigcli.jsonutil import tagged_hash
from rigcli.speed.digests import sha256


@pytest.mark.parametrize("data", [b"", b"abc", "é ü 漢字".encode(), bytes(range(256)) * 1000])
def test_the_same_digests_as_hashlib(data: bytes) -> None:
    ours, theirs = sha256(data), hashlib.sha256(data)
    assert ours.hexdigest() == theirs.hexdigest() and ours.digest() == theirs.digest()
    ours.update(b"more")
    theirs.update(b"more")
    assert ours.hexdigest() == theirs.hexdigest()


def test_a_tagged_hash_is_what_it_always_was() -> None:
    # Fixed value: a cache key computed by any earlier rig must still match.
    assert tagged_hash("rig.test/1", {"b": [1, "x"], "a": None}) == (
        "sha256-" + hashlib.sha256(b'{"tag":"rig.test/1","value":{"a":null,"b":[1,"x"]}}').hexdigest()
    )


def test_a_cached_plan_does_not_import_hashlib() -> None:
    code = "import sys; import rigcli.jsonutil, rigcli.fingerprint.parts; print('hashlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "False"
