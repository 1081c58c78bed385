"""Built-in provider plugins: local directories, Docker containers and the user's terminal."""

from __future__ import annotations
