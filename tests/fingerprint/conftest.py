"""Fixtures for fingerprint tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fingerprint_support import Projects


@pytest.fixture
def projects(tmp_path: Path) -> Iterator[Projects]:
    factory = Projects(tmp_path)
    yield factory
    factory.forget()
