"""Global options may sit anywhere on the command line; move them in front of the command."""

from __future__ import annotations

from dataclasses import dataclass, field

# Option spelling -> destination. Every global option is also declared on the root command.
VALUE_OPTIONS = {"-C": "chdir", "--chdir": "chdir", "--config": "config", "--state": "state", "--workflow": "workflow"}
FLAG_OPTIONS = {"--json": "json", "--no-wait": "no_wait", "--version": "version", "-V": "version"}


@dataclass
class Hoisted:
    """The command line split into global options (in front) and everything else (in order)."""

    globals: list[str] = field(default_factory=list)
    rest: list[str] = field(default_factory=list)
    values: dict[str, str | bool] = field(default_factory=dict)

    @property
    def argv(self) -> list[str]:
        return [*self.globals, *self.rest]


def hoist(argv: list[str]) -> Hoisted:
    """Lift global options out of ``argv``; nothing after ``--`` is touched.

    A value option with its value missing at the very end is left in place so the parser
    reports it the usual way.
    """
    result = Hoisted()
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            result.rest.extend(argv[index:])
            break
        name, eq, inline = token.partition("=")
        if token in FLAG_OPTIONS:
            result.globals.append(token)
            result.values[FLAG_OPTIONS[token]] = True
        elif name in VALUE_OPTIONS and eq:
            result.globals.append(token)
            result.values[VALUE_OPTIONS[name]] = inline
        elif token in VALUE_OPTIONS and index + 1 < len(argv):
            result.globals.extend([token, argv[index + 1]])
            result.values[VALUE_OPTIONS[token]] = argv[index + 1]
            index += 1
        elif token.startswith("-C") and len(token) > 2 and not token.startswith("--"):
            result.globals.append(token)
            result.values["chdir"] = token[2:]
        else:
            result.rest.append(token)
        index += 1
    return result


__all__ = ["FLAG_OPTIONS", "VALUE_OPTIONS", "Hoisted", "hoist"]
