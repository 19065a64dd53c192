"""``python SCRIPT ARGS`` for the tests' study scripts and Hydra apps, without a new interpreter.

A new ``python`` spends seconds importing Hydra, erahbo, pandas and SciPy before the script's
first line; the sweeper and fault tests start dozens of them. :func:`run_script` (and
:func:`start_script`, a ``Popen``-like handle to poll, signal and wait for) runs the script
instead in a fresh process forked from a server that imported those modules once
(multiprocessing's ``forkserver``, one per test process). The child is a real, separate
process as before: the script runs as ``__main__`` (``runpy``) with its folder first on
``sys.path``, ``sys.argv``, the working folder and the environment of the command line, its
own stdout and stderr (file descriptors 1 and 2, returned as text), and the exit code of the
script (``sys.exit``, an uncaught exception: 1, ``os._exit``); at its end the interpreter's
exit steps run (threads joined, ``atexit`` handlers). Only a script for the Python running
the tests can run this way: a script for another interpreter (the real hypersweeper's venv)
still starts its own ``python``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# what the sweeper apps import before their first job (imported once, by the server)
PRELOAD = ["numpy", "pandas", "scipy.stats", "scipy.optimize", "yaml", "omegaconf",
           "hydra", "hydra.main", "hydra._internal.utils", "hydra._internal.hydra",
           "hydra._internal.config_loader_impl", "hydra.core.plugins",
           "hydra._internal.core_plugins.basic_launcher", "hydra.utils",
           "erahbo", "erahbo.optimizer.core", "erahbo.study", "erahbo.runtime.journal",
           "hydra_plugins.erahbo_sweeper.erahbo_sweeper", "hydra_plugins.erahbo_sweeper._impl",
           "hydra_plugins.erahbo_sweeper._outputs", "hydra_plugins.erahbo_sweeper._hypersweeper",
           # and the fault tests' study script (tests/fault_injection.py)
           "erahbo.runtime.executors", "erahbo.runtime.replay", "erahbo.study.run", "erahbo.cli",
           "fake_study", "fault_injection"]

_ctx = None


def _context():
    global _ctx
    if _ctx is None:
        _ctx = multiprocessing.get_context("forkserver")
        _ctx.set_forkserver_preload(PRELOAD)
    return _ctx


def _main(script: str, args: list[str], cwd: str, env: dict[str, str], out: str,
          err: str, fsize: int | None = None) -> None:
    """The child: ``python script *args`` (``script`` ``-m NAME``: ``python -m NAME *args``)
    in ``cwd`` with ``env``, stdout/stderr to files; ``fsize``: RLIMIT_FSIZE (bytes)."""
    import atexit
    import os
    import resource
    import runpy
    import threading
    import traceback

    if fsize is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, out), (2, err)):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(f, fd)
        os.close(f)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    module = script[3:] if script.startswith("-m ") else None
    sys.argv = [script if module is None else "-m", *args]
    sys.path.insert(0, cwd if module else str(Path(cwd, script).resolve().parent))
    code: int | str | None = 0
    try:
        if module:  # sets sys.argv[0] to the module's file, as python -m does
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # what the interpreter does at its exit, in its order
    atexit._run_exitfuncs()
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


class Forked:
    """A script running in a forked process: the parts of ``subprocess.Popen`` the tests use
    (``pid``, ``poll``, ``wait``, ``send_signal``, ``kill``, ``communicate``, ``returncode``:
    minus the signal number for a process killed by one)."""

    def __init__(self, script: str, args: list[str], cwd: Path, env: dict[str, str],
                 fsize: int | None = None) -> None:
        self.args = [sys.executable, *script.split(" ", 1), *args]
        self._tmp = tempfile.TemporaryDirectory()
        self._out, self._err = Path(self._tmp.name, "stdout"), Path(self._tmp.name, "stderr")
        self._p = _context().Process(target=_main, args=(script, list(args), str(cwd),
                                                         dict(env), str(self._out),
                                                         str(self._err), fsize))
        self._p.start()
        self.pid = self._p.pid

    @property
    def returncode(self) -> int | None:
        return self._p.exitcode

    def poll(self) -> int | None:
        return self._p.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._p.join(timeout)
        if self._p.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self._p.exitcode

    def send_signal(self, sig: int) -> None:
        if self._p.exitcode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.wait(timeout)
        out, err = self._out.read_text(), self._err.read_text()
        self._tmp.cleanup()
        return out, err


def start_script(script: str, *args: str, cwd: Path | str | None = None,
                 env: dict[str, str] | None = None, fsize: int | None = None) -> Forked:
    """As ``subprocess.Popen([sys.executable, script, *args], cwd=cwd, env=env, stdout=PIPE,
    stderr=PIPE, text=True)``, in a process forked from the preloaded server. ``script``
    ``"-m NAME"`` runs the module NAME (``python -m NAME``); ``fsize``: a file-size limit
    (RLIMIT_FSIZE, bytes) set in the process before the script starts."""
    return Forked(script, list(args), Path(cwd or os.getcwd()),
                  dict(os.environ if env is None else env), fsize)


def run_script(script: str, *args: str, cwd: Path | str | None = None,
               env: dict[str, str] | None = None, timeout: float,
               fsize: int | None = None) -> subprocess.CompletedProcess:
    """As ``subprocess.run([sys.executable, script, *args], cwd=cwd, env=env,
    capture_output=True, text=True, timeout=timeout)``, in a process forked from the
    preloaded server (``script``, ``fsize``: as for :func:`start_script`)."""
    p = start_script(script, *args, cwd=cwd, env=env, fsize=fsize)
    try:
        out, err = p.communicate(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)
