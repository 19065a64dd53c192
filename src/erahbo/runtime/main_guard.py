"""A study started by a script without ``if __name__ == "__main__":``, and its worker processes.

Worker processes start with the ``spawn`` method: each one imports the script that started the
study again (as ``__mp_main__``, to find the objective), and runs its top-level code. A script
that starts its study at top level thus starts it again in every worker, where it can only
fail (the journal is locked by the real study; a process cannot start workers while it is
still starting itself). :func:`refuse_in_worker_start` stops that second study at its start:
in an erahbo worker it exits with :data:`MAIN_REIMPORT_EXIT`, which the pool
(:class:`erahbo.runtime.process.ProcessExecutor`) turns into :class:`MainGuardMissing` in the
study process; in any other child process it raises that error itself.
"""

from __future__ import annotations

import multiprocessing
import os
import sys

__all__ = ["MAIN_REIMPORT_EXIT", "WORKER_NAME", "MainGuardMissing", "importing_main",
           "main_guard_message", "refuse_in_worker_start"]

MAIN_REIMPORT_EXIT = 86
"""Exit code of an erahbo worker whose start re-ran the study of the main script."""
WORKER_NAME = "erahbo-worker"
"""Process name of the pool's workers (set before the child imports the main script)."""


class MainGuardMissing(RuntimeError):
    """Worker processes re-ran the script that starts the study (no ``__main__`` guard).

    Not a failed run: the study stops at once with this error, which says the fix.
    """

    def __init__(self, script: str | None = None) -> None:
        self.script = script
        super().__init__(main_guard_message(script))

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.script,))


def main_script() -> str | None:
    """The file of the ``__main__`` module (the user's script), None if there is none."""
    return getattr(sys.modules.get("__main__"), "__file__", None)


def main_guard_message(script: str | None = None) -> str:
    """What happened and the fix, naming ``script`` (default: this process's main file)."""
    script = script or main_script() or "the main script"
    return (
        f"worker processes re-import {script} to find the objective (multiprocessing's "
        "'spawn' start method runs its top-level code again), and there it starts the study "
        'again. Put the code that starts the study under `if __name__ == "__main__":` '
        "(the objective stays at module level), or run without worker processes "
        "(executor='serial' and no run_timeout)"
    )


def importing_main() -> bool:
    """True in a ``spawn``/``forkserver`` child while it imports the parent's main script.

    ``multiprocessing`` marks that phase with ``current_process()._inheriting`` (its own
    check that refuses to start a process then reads the same flag); ``parent_process()`` is
    not set yet at that point.
    """
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def refuse_in_worker_start() -> None:
    """Stop a study that a child process starts while it re-imports the main script.

    Called where a study starts (``erahbo.optimize``, ``erahbo.resume``, a journaled
    ``Optimizer``) and where a process pool is made. Does nothing in any other situation.
    """
    if not importing_main():
        return
    if multiprocessing.current_process().name == WORKER_NAME:
        sys.stderr.flush()
        os._exit(MAIN_REIMPORT_EXIT)  # the study process explains (MainGuardMissing)
    raise MainGuardMissing()
