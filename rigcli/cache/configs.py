"""Provider configs as written, kept in the memo and resolved again from the environment as a load would.

A config is kept as written, never resolved: ``env()`` and ``secret()`` stay references
(``["env", name, default, is_secret]``), read from the environment when an answer is used, as a
load reads them, so no secret reaches the file and a changed variable is honoured; literals are
``["v", value]``, mappings ``["map", [[key, value], ...]]``, lists ``["list", [...]]``. A
definition whose config holds anything else (a resolver function) or brings its plugin inline
cannot be kept (``encode`` gives None): only a load can use it. ``definition_config`` resolves the
one definition a plugin's speed hook (``attach_directly``, ``connect_directly``) is handed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from rigcli.speed.lazy_modules import lazy_module

TYPE_CHECKING = False  # not typing's: a cached answer's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli import masking
    from rigcli.authoring.values import ProviderDefinition
else:
    masking = lazy_module("rigcli.masking")  # only a resolved secret needs the masker


class NotPlain(Exception):
    """A config value only a load can resolve (a resolver function, an object)."""


def encoded_config(definition: ProviderDefinition) -> object:
    """The definition's config as written, or None when only a load can use it."""
    if definition.plugin is not None:
        return None
    try:
        return encode(definition.config)
    except NotPlain:
        return None


def encode(value: object) -> object:
    from rigcli.authoring.values import EnvRef  # only a load encodes, and it has the DSL already

    if isinstance(value, EnvRef):
        return ["env", value.name, value.default, bool(value.secret)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return ["v", str(value) if isinstance(value, str) else value]
    if isinstance(value, Mapping):
        return ["map", [[str(key), encode(item)] for key, item in value.items()]]
    if isinstance(value, (list, tuple)):
        return ["list", [encode(item) for item in value]]
    raise NotPlain(type(value).__name__)


class Unresolvable(Exception):
    """A remembered config that cannot be resolved here (a variable missing, a shape not ours)."""


def resolve(encoded: object, environ: Mapping[str, str], secrets: list[str]) -> object:
    """The config as a load resolves it (``ProviderDefinition.resolve_config``); each secret
    read is appended to ``secrets`` (for masking). Raises ``Unresolvable``."""
    if not isinstance(encoded, list) or not encoded:
        raise Unresolvable(encoded)
    tag = encoded[0]
    if tag == "v" and len(encoded) == 2:
        return encoded[1]
    if tag == "env" and len(encoded) == 4:
        return _variable(encoded[1], encoded[2], encoded[3], environ, secrets)
    if tag == "map" and len(encoded) == 2 and isinstance(encoded[1], list):
        resolved: dict[str, object] = {}
        for pair in encoded[1]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise Unresolvable(pair)
            resolved[str(pair[0])] = resolve(pair[1], environ, secrets)
        return resolved
    if tag == "list" and len(encoded) == 2 and isinstance(encoded[1], list):
        return [resolve(item, environ, secrets) for item in encoded[1]]
    raise Unresolvable(encoded)


def _variable(name: object, default: object, secret: object, environ: Mapping[str, str], secrets: list[str]) -> str:
    if not isinstance(name, str) or not (default is None or isinstance(default, str)):
        raise Unresolvable(name)
    value = environ.get(name)
    if value is None or value == "":
        if default is None:
            raise Unresolvable(name)  # the engine says which variable is missing
        value = default
    if secret:
        secrets.append(value)
    return value


def definition_config(configs: list[object] | None) -> dict[str, object] | None:
    """The machine's one provider definition resolved from the environment as a load would (its
    secrets registered with the masker; no definition: the provider's defaults), or None where only a
    load can use it: several definitions, one the cache could not keep, one that does not resolve."""
    if configs is None or len(configs) > 1:
        return None
    secrets: list[str] = []
    try:
        config = resolve(configs[0], os.environ, secrets) if configs else {}
    except Unresolvable:
        return None
    if not isinstance(config, dict):
        return None
    if secrets:
        masking.register(*secrets)
    return config


__all__ = ["NotPlain", "Unresolvable", "definition_config", "encode", "encoded_config", "resolve"]
