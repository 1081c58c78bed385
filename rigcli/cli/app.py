"""The Typer app, built from the command table: every --help, and the command lines the fast path leaves.

Each command of the table becomes a generated function whose ``__signature__`` carries Typer's
``Annotated`` parameters; called by Typer, it hands a ``Call`` to ``invoke`` (which runs it). No
command is written here: add one to ``table.py``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Literal, Optional

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from rigcli._version import __version__
from rigcli.cli import signalled
from rigcli.cli.argv import Hoisted, hoist, line_error_code
from rigcli.cli.error_handler import error_exit, finish, print_error, report_internal_error
from rigcli.cli.invoke import run_call
from rigcli.cli.spec import Argument, Call, Command, Option, Table
from rigcli.cli.table import TABLE
from rigcli.errors import RigError, UsageError

if TYPE_CHECKING:  # click, as vendored inside Typer: the types its help methods take
    from typer._click import Context as ClickContext
    from typer._click import HelpFormatter

Invoke = Callable[[Call], int]
CONTEXT: dict[str, object] = {"help_option_names": ["-h", "--help"]}
# The body reads every word itself, --help included (``rig op``: the inputs are the project's).
PASS_THROUGH: dict[str, object] = {
    "ignore_unknown_options": True,
    "allow_extra_args": True,
    "allow_interspersed_args": False,
    "help_option_names": [],
}
ROOT_EPILOG = "Global options are accepted anywhere on the line, also after the command."
GLOBALS_TITLE = "Global options (accepted anywhere on the line)"


def build_app(table: Table = TABLE, invoke: Invoke = run_call) -> typer.Typer:
    """The Typer app for ``table``; its commands hand their ``Call`` to ``invoke``."""
    command_class, group_class = _classes(table)
    app = typer.Typer(
        name=table.name,
        add_completion=False,
        context_settings=CONTEXT,
        rich_markup_mode=None,
        help=table.help,
        epilog=ROOT_EPILOG,
        cls=group_class,
    )
    app.callback()(_root_callback(table))
    _add_commands(app, table.commands, (), invoke, command_class, group_class)
    return app


@functools.lru_cache(maxsize=4)  # a test parses thousands of lines with one app
def build_command(table: Table = TABLE, invoke: Invoke = run_call) -> TyperGroup:
    """The click command Typer makes of the app, its commands listed in the table's order."""
    command = typer.main.get_command(build_app(table, invoke))
    assert isinstance(command, TyperGroup)
    _order(command, table.root)
    return command


def _order(group: TyperGroup, spec: Command) -> None:
    order = [name for item in spec.commands for name in item.names]
    group.commands = {name: group.commands[name] for name in sorted(group.commands, key=order.index)}
    for item in spec.commands:
        sub = group.commands[item.name]
        if item.commands and isinstance(sub, TyperGroup):
            _order(sub, item)


def _add_commands(
    parent: typer.Typer,
    commands: tuple[Command, ...],
    path: tuple[str, ...],
    invoke: Invoke,
    command_class: type[TyperCommand],
    group_class: type[TyperGroup],
) -> None:
    for command in commands:
        where = (*path, command.name)
        if command.commands:
            group = typer.Typer(context_settings=CONTEXT, rich_markup_mode=None, no_args_is_help=True, cls=group_class)
            _add_commands(group, command.commands, where, invoke, command_class, group_class)
            parent.add_typer(group, name=command.name, help=command.summary, short_help=command.summary)
            continue
        callback = _command_callback(where, command, invoke)
        settings = PASS_THROUGH if command.pass_through else CONTEXT
        long_help = command.summary
        if command.examples:
            long_help += "\n\n\b\n" + command.examples_text()  # \b: click keeps the block's lines as they are
        parent.command(
            command.name,
            help=long_help,
            short_help=command.summary,  # shown whole in lists (wrapped, never cut)
            hidden=command.hidden,
            context_settings=settings,
            cls=command_class,
        )(callback)
        for alias in command.aliases:  # the same command under another name; only the name is listed
            parent.command(alias, help=long_help, hidden=True, context_settings=settings, cls=command_class)(callback)


def _command_callback(path: tuple[str, ...], command: Command, invoke: Invoke) -> Callable[..., int]:
    many = {item.dest for item in command.arguments if item.variadic} | {
        item.dest for item in command.options if item.repeat
    }

    def callback(ctx: typer.Context, **kwargs: object) -> int:
        opts = ctx.find_root().obj
        values = {name: _tuple(value) if name in many else value for name, value in kwargs.items()}
        return invoke(Call(path, command.body, command.needs, values, opts, command.cache, command.error_code(values)))

    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    params = [_argument(item) for item in command.arguments] + [_option(item) for item in command.options]
    callback.__signature__ = inspect.Signature([context, *params])  # type: ignore[attr-defined]
    return callback


def _root_callback(table: Table) -> Callable[..., None]:
    eager = {item.dest for item in table.options if item.eager}

    def root(ctx: typer.Context, **kwargs: object) -> None:
        ctx.obj = table.options_type(**{name: value for name, value in kwargs.items() if name not in eager})

    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    root.__signature__ = inspect.Signature([context, *(_option(item) for item in table.options)])  # type: ignore[attr-defined]
    return root


def _tuple(value: object) -> tuple[object, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def _scalar(choices: tuple[str, ...]) -> object:
    # An int option is read as text and converted by its callback (``_integer``), which says what
    # is wrong in rig's words, as the fast path's conversion does.
    return Literal[choices] if choices else str


def _integer(option: Option) -> Callable[[object], object]:
    def convert(value: object) -> object:
        try:
            if isinstance(value, str):
                return option.integer(value)
            if isinstance(value, (list, tuple)):
                return type(value)(option.integer(item) for item in value)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        return value

    return convert


def _option(option: Option) -> inspect.Parameter:
    if option.eager:
        info = typer.Option(*option.spellings, help=option.help, is_eager=True, callback=_show_version)
        return _keyword(option.dest, bool, info, False)
    if option.flag:
        return _keyword(
            option.dest, bool, typer.Option(*option.spellings, help=option.help, hidden=option.hidden), False
        )
    value = _scalar(option.choices)
    if option.arity > 1:
        value = tuple.__class_getitem__((value,) * option.arity)
    if option.repeat:
        value = list.__class_getitem__(value)
    metavar = option.metavar or "|".join(option.choices)
    info = typer.Option(
        *option.spellings,
        help=option.help,
        metavar=metavar,
        hidden=option.hidden,
        show_default=False,
        callback=_integer(option) if option.kind == "int" else None,
    )
    if option.required:
        return _keyword(option.dest, value, info, inspect.Parameter.empty)
    return _keyword(option.dest, Optional[value], info, None if option.repeat else option.default)  # noqa: UP045


def _argument(argument: Argument) -> inspect.Parameter:
    info = typer.Argument(metavar=argument.metavar, help=argument.help, hidden=argument.hidden, show_default=False)
    value: object = list[str] if argument.variadic else str
    if argument.required:
        return _keyword(argument.dest, value, info, inspect.Parameter.empty)
    return _keyword(argument.dest, Optional[value], info, None)  # noqa: UP045


def _keyword(name: str, value: object, info: object, default: object) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[value, info])


def _show_version(value: bool) -> None:
    if value:
        print(__version__)
        raise typer.Exit()


def _classes(table: Table) -> tuple[type[TyperCommand], type[TyperGroup]]:
    """Command and group classes whose help ends with the table's global options."""
    rows = [(item.shown, item.help) for item in table.options if not item.hidden and not item.eager]

    def globals_section(ctx: ClickContext, formatter: HelpFormatter) -> None:
        if ctx.parent is None:  # the root lists them among its own options
            return
        with formatter.section(GLOBALS_TITLE):
            formatter.write_dl(rows)

    class RigCommand(TyperCommand):
        def format_options(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
            params = self.get_params(ctx)
            arguments = [_argument_row(item) for item in params if isinstance(item, TyperArgument)]
            options = [item.get_help_record(ctx) for item in params if item.param_type_name == "option"]
            for title, rows in (("Arguments", arguments), ("Options", options)):
                shown = [row for row in rows if row is not None]
                if shown:
                    with formatter.section(title):
                        formatter.write_dl(shown)

        def collect_usage_pieces(self, ctx: ClickContext) -> list[str]:
            pieces = [self.options_metavar] if self.options_metavar else []
            return pieces + [_argument_usage(item) for item in self.get_params(ctx) if isinstance(item, TyperArgument)]

        def format_epilog(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
            globals_section(ctx, formatter)

    class RigGroup(TyperGroup):
        def format_epilog(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
            super().format_epilog(ctx, formatter)
            globals_section(ctx, formatter)

    return RigCommand, RigGroup


def _argument_row(param: TyperArgument) -> tuple[str, str] | None:
    """An argument as help shows it: its metavar (no type: every argument is text) and its help."""
    if param.hidden:
        return None
    return _repeated(str(param.metavar), param.nargs), (param.help or "") + ("  [required]" if param.required else "")


def _argument_usage(param: TyperArgument) -> str:
    """NAME, [NAME], NAME... or [NAME]...: the usual spelling (Typer's own writes {NAME} for required)."""
    name = str(param.metavar) if param.required else f"[{param.metavar}]"
    return _repeated(name, param.nargs)


def _repeated(name: str, nargs: int) -> str:
    """A variadic argument's name says so, unless its metavar already does (``CMD [ARG...]``)."""
    return name if nargs == 1 or "..." in name else name + "..."


def run(argv: list[str], *, table: Table = TABLE, invoke: Invoke = run_call) -> int:
    """Parse and run one command line; every failure becomes an exit code and one stderr line."""
    hoisted = hoist(argv, table)
    args = hoisted.argv
    if not args:
        args = ["--help"]
    command = build_command(table, invoke)
    try:
        # click turns a KeyboardInterrupt into its own Abort: while it parses, a signal is only noted,
        # and raised as the command's body starts (invoke.py); one after the body is main()'s to map.
        with signalled.deferred():
            result: object = command.main(args=args, prog_name="rig", standalone_mode=False)
    except Exception as exc:
        if signalled.first() is not None:
            raise  # whatever it became, main() ends the command as interrupted
        return _failed(exc, argv, hoisted, table)
    return finish(result if isinstance(result, int) else 0)


def _failed(exc: Exception, argv: list[str], hoisted: Hoisted, table: Table) -> int:
    """A line that could not be read (usage, an option's own check), or an internal error's code."""
    if isinstance(exc, typer.TyperException):  # click usage errors, vendored by Typer
        if type(exc).__name__ == "NoArgsIsHelpError":  # `rig cache` alone: its help, not an error
            print(exc.format_message())
            return 0
        return _refused(hoisted, exc.format_message(), int(getattr(exc, "exit_code", 2)), table)
    if isinstance(exc, typer.Abort):
        print_error("Cancelled")
        return 1
    if isinstance(exc, RigError):  # an option's own check (``_integer``), while the line is read
        return _refused(hoisted, str(exc), exc.exit_code, table)
    return error_exit(report_internal_error(exc, argv=argv), line_error_code(hoisted.rest, table))


def _refused(hoisted: Hoisted, message: str, code: int, table: Table) -> int:
    """A line that could not be read: one error line, and with --json-stream its summary."""
    code = error_exit(code, line_error_code(hoisted.rest, table))
    print_error(message)
    if hoisted.values.get("json_stream"):  # the stream still ends with its summary
        from rigcli.cli.json_output import error_summary

        error_summary(message, code)
    return code


__all__ = ["build_app", "build_command", "run"]
