"""Dev container configurations (``devcontainer.json``) as rig workflows: ``devcontainer_workflow(path)``.

The package's own import is light: discovery asks ``locations`` on every command's way up from
the working directory; the workflow builder (and pydantic, json5, the docker runtime's use) loads
with the first ``devcontainer_workflow`` call.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: discovery imports this package (locations.py) on every command's way,
# commands answered from the cache included, which import no typing; mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rigcli.authoring.nodes import SequenceNode


def devcontainer_workflow(path: str = ".devcontainer/devcontainer.json") -> SequenceNode:
    """The workflow of the dev container configuration at ``path``, relative to the calling ``rig_config.py``."""
    from rigcli.devcontainer.workflow import devcontainer_workflow as build

    return build(path)


__all__ = ["devcontainer_workflow"]
