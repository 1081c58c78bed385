"""The version of the state schema this rig writes, and where a database records its own.

One number per migration: ``migrations.py`` refuses to import if they disagree, so a migration
added without raising it fails at once. Its own module so a reader that only checks the
version (``output_file.py``) does not import the migrations and their dataclasses.
"""

from __future__ import annotations

SCHEMA_VERSION_KEY = "state.schemaVersion"
STATE_SCHEMA_VERSION = 8

__all__ = ["SCHEMA_VERSION_KEY", "STATE_SCHEMA_VERSION"]
