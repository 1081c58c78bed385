"""Loading rig_config.py: what it may bind, and one clear line naming file:line when it is wrong."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from rigcli import create_engine
from rigcli.errors import ConfigError, RigError


def load(project: Path, source: str) -> object:
    (project / "rig_config.py").write_text(textwrap.dedent(source).lstrip())

    async def run() -> object:
        engine = create_engine(project)
        try:
            await engine.load()
            return engine.project.summaries()
        finally:
            engine.close()

    return asyncio.run(run())


def error_of(project: Path, source: str) -> str:
    with pytest.raises(RigError) as caught:
        load(project, source)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


def test_a_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, 'from rigcli import sequence\n\nworkflows = sequence("x"\n')
    assert message.startswith(f"{tmp_path / 'rig_config.py'}:3: SyntaxError:"), message


def test_an_exception_during_import_names_file_line_and_exception(tmp_path: Path) -> None:
    message = error_of(tmp_path, 'import os\n\nvalue = {}["missing"]\n')
    assert message == f"{tmp_path / 'rig_config.py'}:3: KeyError: 'missing'"


def test_an_exception_in_a_project_helper_names_the_helper(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("def boom():\n    raise ValueError('bad helper')\n")
    message = error_of(tmp_path, "import helpers\n\nhelpers.boom()\n")
    assert message == f"{tmp_path / 'rig_config.py'}:3: ValueError: bad helper"


def test_sys_exit_in_the_config_is_a_config_error_not_an_exit(tmp_path: Path) -> None:
    message = error_of(tmp_path, "import sys\nsys.exit(5)\n")
    assert message == f"{tmp_path / 'rig_config.py'}:2: called sys.exit(5) while loading"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("value = 1\n", "must bind the name `workflows`"),
        ("workflows = 5\n", "`workflows` must be a workflow, a list of workflows or define_config(...), not int"),
        ("workflows = []\n", "`workflows` is empty"),
        ("workflows = [1]\n", "`workflows` holds a int, not a workflow sequence"),
        (
            'from rigcli import sequence\nworkflows = [sequence("a").task("t", lambda: None),'
            ' sequence("a").task("u", lambda: None)]\n',
            "Workflow names must be unique (duplicate: a)",
        ),
    ],
)
def test_what_workflows_binds_is_checked(tmp_path: Path, source: str, expected: str) -> None:
    message = error_of(tmp_path, source)
    assert message.startswith(str(tmp_path / "rig_config.py")), message
    assert expected in message


def test_a_reserved_operation_id_points_at_the_line_that_defines_it(tmp_path: Path) -> None:
    message = error_of(
        tmp_path,
        """
        from rigcli import sequence

        workflows = (
            sequence("ops")
            .task("t", lambda: None)
            .operation("plan", run=lambda: None)
        )
        """,
    )
    assert message.startswith(f"{tmp_path / 'rig_config.py'}:6: Operation id plan is reserved by rig"), message


def test_a_handler_asking_for_an_unknown_parameter_lists_what_is_available(tmp_path: Path) -> None:
    message = error_of(
        tmp_path,
        """
        from rigcli import define_provider, workflow

        app = workflow("w", providers={"box": define_provider("local")})

        def prepare(step, machine):
            return None

        workflows = app.sequence("root").task("prepare", prepare)
        """,
    )
    assert message == (
        'rig_config.py:5: Task prepare handler asks for "machine", which is not available '
        "(available: step, providers, config, local, log, box)"
    )


def test_a_callable_object_that_cannot_be_hashed_is_a_handler_too(tmp_path: Path) -> None:
    # Signatures are remembered per handler; a handler that cannot be a dict key is checked anyway.
    source = """
        from rigcli import sequence

        class Prepare:
            __hash__ = None

            def __init__(self, wanted):
                self.wanted = wanted

            def __call__(self, step, {param}):
                return None

        workflows = sequence("w").task("a", Prepare(1)).task("b", Prepare(2))
        """
    assert load(tmp_path, source.replace("{param}", "log")) is not None
    message = error_of(tmp_path, source.replace("{param}", "machine"))
    assert 'Task a handler asks for "machine", which is not available' in message


def test_dotenv_is_loaded_first_without_overriding_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RIG_TEST_FROM_DOTENV", raising=False)
    monkeypatch.setenv("RIG_TEST_ALREADY_SET", "from-environment")
    (tmp_path / ".env").write_text("RIG_TEST_FROM_DOTENV=from-dotenv\nRIG_TEST_ALREADY_SET=from-dotenv\n")
    summaries = load(
        tmp_path,
        """
        import os
        from rigcli import sequence

        name = os.environ["RIG_TEST_FROM_DOTENV"] + "-" + os.environ["RIG_TEST_ALREADY_SET"]
        workflows = sequence(name).task("t", lambda: None)
        """,
    )
    assert [item.name for item in summaries] == ["from-dotenv-from-environment"]  # type: ignore[attr-defined]


def test_define_config_and_lists_are_both_accepted(tmp_path: Path) -> None:
    summaries = load(
        tmp_path,
        """
        from rigcli import define_config, define_provider, sequence

        api = sequence("api").task("ready", lambda box: None)
        web = sequence("web").task("ready", lambda step: None)
        workflows = define_config(workflows=[api, web], providers={"box": define_provider("local")})
        """,
    )
    assert [item.name for item in summaries] == ["api", "web"]  # type: ignore[attr-defined]


def test_a_missing_config_file_says_how_to_create_one(tmp_path: Path) -> None:
    async def run() -> None:
        await create_engine(tmp_path).load()

    with pytest.raises(ConfigError, match='Run "rig init" to create one'):
        asyncio.run(run())
