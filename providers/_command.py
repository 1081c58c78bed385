"""Command plumbing for the built-in providers, re-exported from ``rigcli.provider_kit.commands``."""

from __future__ import annotations

from rigcli.provider_kit.commands import *  # noqa: F403
from rigcli.provider_kit.commands import __all__ as __all__
