"""What a docker runtime offers handlers for images made or fetched on purpose (``builds.py`` does the work)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from providers.docker.builds import ImageHost, build_image, ensure_image, image_inspect
from providers.docker.images import image_id_of

if TYPE_CHECKING:
    from rigcli.provider_api import RuntimeContext


class _Images(Protocol):
    """What the image methods ask of the runtime they are mixed into."""

    @property
    def controller(self) -> ImageHost: ...
    @property
    def context(self) -> RuntimeContext: ...


def _quiet(line: str) -> None:
    """Output nobody asked to hear."""


class ImageMethods:
    """``DockerRuntime``'s image methods: inspect, pull when absent, build."""

    def image_info(self: _Images, name: object) -> dict[str, Any] | None:
        """The daemon's inspect of an image (a name, an id, or an image ref); None when it has none."""
        return image_inspect(self.controller, name if isinstance(name, str) else image_id_of(name))

    def ensure_image(self: _Images, name: str, *, say: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Image ``name`` as the daemon has it: pulled only when it has none (``say`` hears the pull's lines)."""
        return ensure_image(self.controller, name, say or _quiet)

    def build_image(
        self: _Images,
        context: bytes,
        *,
        dockerfile: str,
        args: Mapping[str, str] | None = None,
        target: str | None = None,
        say: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """Build a tar ``context`` with its ``dockerfile`` (``say`` hears each line of the build's output):
        a snapshot image's artifact ref, journaled as a commit's is."""
        return build_image(
            self.controller,
            self.context.effects,
            context,
            dockerfile=dockerfile,
            args=args or {},
            target=target,
            say=say or _quiet,
        )


__all__ = ["ImageMethods"]
