"""When the cyclic garbage collector runs: not while a command only loads, not at exit, always under project code.

A command allocates, before it runs anything, only what lives until it ends: modules, the config,
the compiled graph, the plan. Collections in that phase free nothing and each walks the whole
young heap; the interpreter's collections at shutdown walk everything rig imported. So:

- ``paused_while_loading()`` (the entry point) turns collection off until the command either
  ends or hands over to project code, and gives an embedding host collection back afterwards,
  with nothing left frozen and without the full collection that turning it on would start;
- ``resume_collection()`` (the engine's runner, right before a handler, hook or operation runs) first
  freezes what loading made, so the collections to come never walk it, then turns collection
  back on: a long apply's cyclic garbage is always collected;
- ``freeze_at_exit()`` freezes the whole heap as the interpreter exits, so its final
  collections skip it.

Only this module calls ``gc`` (tests/test_architecture.py holds every other module to that).
"""

from __future__ import annotations

import atexit
import gc

_at_exit: list[bool] = []  # registered already (a host may call main() many times)


def freeze_at_exit() -> None:
    """Freeze the heap when the interpreter exits (harmless in a host: it is exiting too)."""
    if not _at_exit:
        _at_exit.append(True)
        atexit.register(gc.freeze)


class paused_while_loading:
    """No collection inside the block unless ``resume_collection`` turns it on; restored after.

    A class, not ``contextlib.contextmanager``: every command enters it, and contextlib's import
    alone costs ``rig logs TASK`` answered from the cache more than finding the project does.
    """

    def __enter__(self) -> None:
        self.collecting = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self.collecting:
            # Whatever loading made has lived through the whole command: it goes to the oldest
            # generation (with what resume_collection froze: a host that calls us again gets it
            # all back unfrozen), and freezing first resets the young count. Enabled as it was,
            # the next allocation would otherwise start a full collection of every object the
            # command made, at its very end (~35 ms after `rig exec` or `rig ls`, for nothing).
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def resume_collection() -> None:
    """Project code is about to run: set aside what loading made, then collect as usual.

    Only the first call freezes: later, the heap also holds what handlers made, which must stay
    collectable.
    """
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


__all__ = ["freeze_at_exit", "paused_while_loading", "resume_collection"]
