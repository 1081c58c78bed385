"""Which registry a provider config names (``registry=``), how rig speaks to it, and its repository names.

Shared by the ``docker`` provider (snapshots pushed for other daemons to pull) and ``swarm`` (every
image a node runs). Plain HTTP is spoken only to a registry on a loopback address, as the Docker
daemon itself allows; the swarm provider also takes an explicit ``http://`` for any host.
"""

from __future__ import annotations

import re

from rigcli.errors import ProviderError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.records import lazy_dataclass

TYPE_CHECKING = False  # not typing's: read on the way of a plan answered from the cache (mypy reads it as True)
if TYPE_CHECKING:
    import ipaddress
else:
    ipaddress = lazy_module("ipaddress")

_REGISTRY = re.compile(r"^[A-Za-z0-9.-]+(?::\d+)?$|^\[[0-9A-Fa-f:]+\](?::\d+)?$")
_NOT_IN_A_PATH = re.compile(r"[^a-z0-9]+")  # a repository path component: [a-z0-9] runs joined by "-"


@lazy_dataclass(frozen=True)
class Registry:
    """Where snapshots are pushed and images pulled from: ``name`` is what image references start with."""

    name: str  # host[:port], as in an image reference
    scheme: str  # "https", or "http" for loopback (as the Docker daemon allows) or when given as http://

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.name}"

    def names(self, image: str) -> bool:
        return image.startswith(f"{self.name}/")


def parse_registry(value: object, *, provider: str, plain_http_anywhere: bool = False) -> Registry:
    """``host[:port]`` (https, or plain http on a loopback address) or ``http(s)://host[:port]``; an
    explicit ``http://`` to another host only with ``plain_http_anywhere``."""

    def fail(why: str) -> ProviderError:
        return ProviderError(f"{provider} provider config registry={value!r} {why}")

    if not isinstance(value, str) or not value.strip():
        raise fail("must be the registry's host[:port], such as registry.internal:5000")
    text = value.strip().rstrip("/")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    elif scheme not in ("http", "https"):
        raise fail("must be host[:port], http://host[:port] or https://host[:port]")
    if not _REGISTRY.match(rest):
        raise fail("must be host[:port] (no path: images are named <registry>/rig/...)")
    if scheme == "http" and not plain_http_anywhere and not is_loopback(rest):
        raise fail("asks for plain HTTP, which rig speaks only to a registry on this machine (loopback); use https")
    return Registry(rest.lower(), scheme or ("http" if is_loopback(rest) else "https"))


def is_loopback(name: str) -> bool:
    """Whether ``host[:port]`` names this machine: ``localhost`` or a loopback address."""
    host = name.rsplit(":", 1)[0] if not name.startswith("[") else name[1:].split("]")[0]
    if host.lower() == "localhost":
        return True
    try:
        return bool(ipaddress.ip_address(host).is_loopback)
    except ValueError:
        return False


def path_component(text: str) -> str:
    """``text`` as one component of a repository path: lowercase letters and digits, other runs as ``-``."""
    return _NOT_IN_A_PATH.sub("-", text.lower()).strip("-")[:100] or "x"


__all__ = ["Registry", "is_loopback", "parse_registry", "path_component"]
