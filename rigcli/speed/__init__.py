"""The speed room: every start-up and hot-path technique rig uses, in one place, each with why it exists.

The budget (DESIGN §9; the table of docs/performance.md, measured by ``python -m benchmarks``
against a regular install — a wheel in a venv of its own, whose ``python -c pass`` is the
Python baseline):

- ``rig --version`` ≤ 2× ``python -c pass`` (DESIGN allows 4×);
- no-op ``rig plan`` of 200 cached tasks ≤ 6× ``python -c pass``;
- no-op ``rig apply`` of 200 cached tasks ≤ 0.5× a no-op ``terraform apply`` of 200
  ``terraform_data``; ``rig apply`` of 200 pending trivial tasks ≤ 0.5× terraform creating them;
- plan cost linear in nodes (20,000 vs 2,000 cached tasks ≤ 10×); a human plan of 20,000 nodes,
  piped, ≤ 2× the same with ``--json``; the machine rows (exec output, forks, PostgreSQL) as
  docs/performance.md lists them.

Where a cached plan's time goes: the interpreter's own start (the baseline), then imports — about
two thirds of the rest — then loading the config, fingerprinting and one query per store. So the
rule everywhere is: import a heavy module (Typer, Rich, pydantic, asyncio, httpx, sqlalchemy,
psycopg) only in the function that needs it, and keep per-class import work small: a
``@dataclass`` generates its methods with ``exec`` at import. Counted in instructions (``python
-c pass`` is ~38M), a two-field frozen dataclass costs ~3.1M, a plain one ~1.6M, one with
``eq=False, repr=False`` ~0.9M, a ``NamedTuple`` ~0.6M, a plain class with ``__slots__`` ~0.1M.
Every rig dataclass is a ``records.lazy_dataclass``: of the ~100 rig defines, a cached plan
makes (and pays for) only the ~30 it uses.

The techniques, what each is for, and what it saves (each switched off on its own, interleaved
runs of a regular install; CPU milliseconds of the whole command, measured on 2 cores shared with
other work — load average ~12, so absolute figures are 2–3× a quiet machine's; the shares hold):

``gc_policy``
    No cyclic collection while a command only loads (it would free nothing), none over the
    heap at exit; before project code runs, what loading made is frozen and collection resumes.
    Cached plan: −18 ms (−11 %), of which freezing at exit −15; an apply that runs one task:
    −49 ms (−21 %), of which the freeze before resuming −15.
``coroutines``
    The engine's coroutines are driven by hand until they await ``need_event_loop()``: a cached
    plan or a no-op apply never imports asyncio nor makes a loop (nor arms the child guard).
    Cached plan: −23 ms (−14 %). A sync hook awaited while driven by hand (``Blocking``: a
    fork's create hook, an operation) runs on a thread while the runner waits, so a ``rig fork``
    of one workspace needs no loop either: a docker fork 405 M instructions → 340 M (−16 %).
``awaitables``
    ``isawaitable``/``iscoroutinefunction`` as ``inspect`` answers them, read off the value (a
    plain function's code flags) without importing ``inspect`` (~35 M instructions with ``dis``,
    ``tokenize`` and ``linecache``), which the plan's provider checks, live status and every
    handler call asked it: a docker fork 340 M → 326 M, a no-op apply of one docker task 278 M →
    258 M, a cached plan of it 263 M → 244 M.
``entry_points``
    The ``rig.providers`` entry points are remembered in ``$RIG_HOME`` keyed by what ``sys.path``
    holds, instead of importlib.metadata reading every installed distribution. Plan of a
    project with a provider: −19 ms (−12 %).
``tables``
    One description of a view (styled lines and tables); off a terminal it is written without
    Rich. Human ``rig plan`` of 2,000 nodes, piped: 253 ms instead of 1,135 (4.5× less).
``records``
    ``@lazy_dataclass`` leaves a class as written until its first instance is made or its fields
    are asked for, then hands it to ``dataclasses.dataclass`` with the same options (for mypy it is
    that decorator). Cached plan: 98 dataclasses made at import before, 29 after; −52 ms CPU of
    292 (−18 %, editable install, load ~4). ``evolve`` (``replace`` without ``__init__``) and
    ``positional_maker`` (a state row's record without the generated frozen ``__init__``) serve
    the per-task hot paths of classes whose ``__init__`` only sets fields: −9 M instructions of a
    cached plan of 200 tasks. ``field_names`` reads a pending class's fields off its annotations,
    so a table whose query finds nothing leaves its record unmade (a cached plan's expiring
    workspaces: −1.5 M).
``compiled_methods``
    What ``dataclasses`` compiles for a record (its ``__init__``, ``__repr__``, ``__eq__``…, as
    source text) is kept as code objects in ``$RIG_HOME/cache/dataclass-code/``, keyed by that
    exact text, and read back instead of compiled again (as Python keeps a module's ``.pyc``).
    Cached plan of 200 tasks: 373 M instructions instead of 429 (−13 %; compiling the ~100
    methods of its 23 records was ~75 M, reading them back ~2 M).
``digests``
    SHA-256 from the interpreter's own module (``_sha2``/``_sha256``) instead of ``hashlib``,
    whose import asks OpenSSL for every digest it has: cached plan −11 M instructions (−3 %).
``immutable``
    ``WriteOnce``: immutable events without ``frozen=True``. Executing ``events.py`` (28 event
    classes): 5.1 ms instead of 12.7.
``imports``
    Lazy package attributes (``from rigcli import workflow`` imports only the authoring DSL;
    made eager, ``rig --version`` would cost +249 ms, pydantic included); ``mark_absent`` keeps
    httpx from importing its command-line client (Rich, Click, Pygments where Click is installed;
    ~0.3 ms here, where it is not); ``import_hiding`` keeps httpcore from importing trio while it
    loads (not installed here, so not re-measured; a third of a docker fork where it was); and the
    config loader's fresh imports. The only writes to ``sys.modules`` in rig.
``imports`` (``import_deferring``, its tables in ``deferred``) and ``parameters``
    ``dataclasses`` imports ``inspect`` (with ``dis``, ``linecache``, ``importlib.machinery``) to
    write the docstring of a class without one, and ``copy`` for ``asdict``; ``pathlib`` imports
    ``urllib.parse`` (and ``ipaddress``) for ``as_uri`` and ``ntpath`` for Windows paths. A
    command that loads a project imports both with those left for first use. Loading a config
    checks each handler's parameters; a plain ``def``'s are read off its code object (anything
    else still asks ``inspect``), and rig's other uses of ``inspect`` are imported where a handler
    or provider runs. Cached plan of 200 tasks: 326.8 M instructions → 314.1 (``inspect``,
    ``copy``) → 293.0 after ``file_facts`` (``pathlib``'s: −11 M). The PostgreSQL backend imports
    psycopg without importlib.metadata (its version read off the ``.dist-info`` directory name),
    ctypes.util and ssl, and with only the parts of asyncio it reads (``IN_PARTS``): no-op apply of
    200 tasks on PostgreSQL 846.5 M → 804.8 → 791.0 → 775.8 → 758.1.
``file_facts``
    What fingerprinting works out from a handler's source file (its ``def`` found in the parsed
    file, digested, the names it reads) is kept across runs while the file keeps its ``stat``:
    an unchanged config is not parsed, and ``ast`` and ``tokenize`` are not imported. Cached plan
    of 200 tasks: 304.0 M instructions instead of 314.1 (−3 %).
``signals``
    Signal numbers and ``signal``/``set_wakeup_fd`` from ``_signal``: ``import signal`` builds three
    enums from its namespace, and a command only installs three handlers (−2.5 M). (Beside it,
    the output relay, ``streams.py``, waits on its pipes with ``select.poll`` rather than import
    ``selectors``: −2.2 M.)
``lazy_modules``
    ``lazy_module("asyncio")``: a heavy module a module needs in only some of its functions is named
    at its top and imported on the first read of one of its attributes (contextlib ~13 M
    instructions, json ~31 M, typing ~41 M, pathlib ~43 M on top of ``python -c pass``'s ~38 M),
    instead of an import inside each of those functions. The stand-in is never put into
    ``sys.modules``.
``pipes``
    ``widen_pipe``: stored output goes to a pipe widened from 64 KiB to 1 MiB, so a reader of 50 MB
    wakes ~50 times instead of ~760. ``rig logs TASK`` of a 50 MB run, piped: ~10 % less time. A
    local command's output pipes are widened too (and read a MiB at a time, gathering when a bulk
    writer is caught mid-stream), and so is stderr once a command's output is written to it: 1 GB
    with ``--json``, ~17,000 -> ~1,800 context switches in rig.

Smaller ones live beside the code they serve, saying so: ``rigcli/__init__.py`` spells
``TYPE_CHECKING = False`` rather than importing typing (``rig --version`` then imports only what
the console script itself does: −5.8 ms, over a third of what rig added to ``python -c pass``); the
config loader's meta path finder does not subclass ``importlib.abc.MetaPathFinder`` (that import
pulls in importlib.resources, tempfile and shutil); the state is opened through ``_sqlite3``
(``state/state_file.py``: −1.3 M a cached plan); and the clock (``records.py``) stamps now as
text, with ``datetime`` imported only where a timestamp is read or a cache TTL judged (−3.6 M).

This package sits below every room (tests/test_architecture.py): it imports nothing of rig's
outside itself, and it alone calls ``gc`` or writes ``sys.modules``. Import its modules directly
(``from rigcli.speed.coroutines import drive``); this file imports nothing.
"""
