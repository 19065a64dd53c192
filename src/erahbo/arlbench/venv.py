"""The dedicated ARLBench virtual environment: where it lives, how to create and check it.

ARLBench 0.1.3 pins an old JAX stack (jax 0.4.26, numpy 1.26) that cannot share our
environment, so it lives in its own venv (default ``$XDG_CACHE_HOME/erahbo/arlbench-venv``
or ``~/.cache/erahbo/arlbench-venv``; override with ``ERAHBO_ARLBENCH_VENV``).  Our package
never imports ARLBench: it talks to :mod:`erahbo.arlbench.worker` running in that venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "ARLBENCH_REQUIREMENTS",
    "constraints_file",
    "default_venv_path",
    "setup_venv",
    "venv_python",
    "venv_status",
    "worker_script",
]

#: What is installed into the venv (gymnasium is imported by arlbench but not declared).
ARLBENCH_REQUIREMENTS = ("arlbench==0.1.3", "gymnasium==0.29.1")

_HERE = Path(__file__).resolve().parent


def default_venv_path() -> Path:
    """``$ERAHBO_ARLBENCH_VENV``, else ``<user cache>/erahbo/arlbench-venv``."""
    env = os.environ.get("ERAHBO_ARLBENCH_VENV")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "erahbo" / "arlbench-venv"


def venv_python(venv: str | Path | None = None) -> Path:
    """Path of the venv's Python interpreter (it may not exist)."""
    venv = Path(venv) if venv is not None else default_venv_path()
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def worker_script() -> Path:
    """Path of the worker script shipped with the package."""
    return _HERE / "worker.py"


def constraints_file(lock: bool = True) -> Path:
    """The pip constraints shipped with the package (full freeze if ``lock``)."""
    return _HERE / ("constraints-lock.txt" if lock else "constraints.txt")


_CHECK = (
    "import json, importlib.metadata as m, warnings; warnings.filterwarnings('ignore');"
    "import arlbench, jax;"
    "from arlbench.core.algorithms import DQN, PPO, SAC;"
    "print(json.dumps({k: m.version(k) for k in ('arlbench','jax','jaxlib','gymnax','numpy')}))"
)


def venv_status(venv: str | Path | None = None, timeout: float = 300.0) -> dict[str, object]:
    """Check the venv: ``{"path", "python", "exists", "ok", "versions", "error"}``."""
    py = venv_python(venv)
    out: dict[str, object] = {
        "path": str(py.parent.parent),
        "python": str(py),
        "exists": py.exists(),
        "ok": False,
        "versions": {},
        "error": None,
    }
    if not py.exists():
        out["error"] = f"no interpreter at {py}; run `erahbo arlbench setup`"
        return out
    try:
        proc = subprocess.run(
            [str(py), "-c", _CHECK], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        out["error"] = f"importing arlbench took more than {timeout:.0f} s"
        return out
    if proc.returncode != 0:
        out["error"] = (proc.stderr.strip().splitlines() or ["import failed"])[-1]
        return out
    try:
        out["versions"] = json.loads(proc.stdout.strip().splitlines()[-1])
        out["ok"] = True
    except (ValueError, IndexError):
        out["error"] = f"unexpected output of the import check: {proc.stdout[-200:]!r}"
    return out


def setup_venv(
    venv: str | Path | None = None,
    *,
    lock: bool = True,
    python: str | None = None,
    quiet: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, object]:
    """Create the ARLBench venv if needed (idempotent) and verify the import.

    Parameters
    ----------
    venv : path, optional
        Where the venv lives (default :func:`default_venv_path`).
    lock : bool
        Install from the full lock file (reproducible datasets); if that fails, falls
        back to the short constraints file.
    python : str, optional
        Interpreter used to create the venv (default: ``python3.11`` if found, else the
        current one).  ARLBench 0.1.3 was tested with CPython 3.11.
    quiet : bool
        Pass ``-q`` to pip.
    progress : callable, optional
        Called with a short line before each step (the checks and the install take up to a
        minute each).

    Returns
    -------
    dict
        :func:`venv_status` of the venv after setup, plus ``"created"`` (bool).
    """
    import shutil

    say = progress if progress is not None else (lambda line: None)
    venv = Path(venv) if venv is not None else default_venv_path()
    say("checking the venv (imports arlbench and jax: up to a minute)")
    status = venv_status(venv)
    if status["ok"]:
        status["created"] = False
        return status
    py = venv_python(venv)
    if not py.exists():
        base = python or shutil.which("python3.11") or sys.executable
        venv.parent.mkdir(parents=True, exist_ok=True)
        say(f"creating the venv with {base}")
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    pip = [str(py), "-m", "pip", "install", *(["-q"] if quiet else [])]
    last_err = ""
    for use_lock in [True, False] if lock else [False]:
        cmd = [*pip, *ARLBENCH_REQUIREMENTS, "-c", str(constraints_file(use_lock))]
        say(f"installing arlbench 0.1.3 ({'full lock file' if use_lock else 'constraints'}; "
            "a few minutes the first time)")
        proc = subprocess.run(cmd, capture_output=quiet, text=True, check=False)
        if proc.returncode == 0:
            break
        last_err = (proc.stderr or "").strip()[-500:]
    say("verifying the import")
    status = venv_status(venv)
    status["created"] = True
    if not status["ok"] and last_err:
        status["error"] = f"{status['error']}; pip said: {last_err}"
    return status
