"""httpx, loaded on the first request that needs it, with its optional imports rig never uses hidden.

Live status, ``rig shell``/``rig exec`` and the plan's check speak to the daemon on connections
of rig's own (``rawhttp``) and never need httpx; importing it (and httpcore) costs more than
those requests together, so nothing in the provider imports it at module level: the client,
the swarm's registry and the ssh transport call ``load_httpx()`` before their own ``import httpx``.
"""

from __future__ import annotations

import sys

from rigcli.speed.imports import import_hiding, mark_absent


def load_httpx() -> None:
    """Import httpx, the first time with its command-line client and trio hidden; an ``import httpx``
    after this call finds it loaded."""
    if "httpx" in sys.modules:
        return
    # httpx's package imports its command-line client (and with it Rich, Click and Pygments)
    # whenever those are installed, as they are beside rig. rig never runs that client, and
    # importing it costs more than all of a fork's requests; marked absent, httpx skips it.
    mark_absent("httpx._main")
    # httpcore (httpx's transport) imports trio whenever it is installed, for its async API under
    # trio; rig's client is synchronous, and that import costs a third of a fork. trio is hidden
    # only while httpcore loads, so a handler can still import and use it.
    import_hiding("httpcore", hidden=("trio",))
    import httpx  # noqa: F401


__all__ = ["load_httpx"]
