"""Command bodies: plain functions that take a Session (or options) and return an exit code."""
