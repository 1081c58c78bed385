"""People's own tools inside a workspace: the SSH server side (``rig ssh-proxy``), ssh config, ``rig
forward``, ``rig cp`` and ``rig open``. asyncssh is imported only here, and only by these commands."""

from __future__ import annotations

import warnings

# asyncssh's import warns about algorithms it still supports: quiet before any module here imports it.
warnings.filterwarnings("ignore", module="asyncssh")
warnings.filterwarnings("ignore", message=".*(DSA|TripleDES|Blowfish|CAST5).*")
