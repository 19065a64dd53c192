"""Helpers of the fault tests (tests/test_faults*.py): the fake study of
tests/fault_injection.py in its own process, and what a refusal must leave behind."""

from __future__ import annotations

import os
import time

from fault_kill import count_runs
from forked_app import Forked, start_script

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "fault_injection.py")
SRC = os.path.join(os.path.dirname(HERE), "src")


def study_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ERAHBO_JOURNAL_KILL_AFTER"}
    return {**env, "PYTHONPATH": os.pathsep.join([SRC, HERE]), **extra}


def start_study(journal, *args: str, **env: str) -> Forked:
    """The fake study of fault_injection.py on ``journal``, in its own process."""
    return start_script(SCRIPT, str(journal), *args, env=study_env(**env))  # forked_app.py


def wait_for_runs(journal, n: int, proc: Forked, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while count_runs(journal) < n:
        if proc.poll() is not None:
            raise AssertionError(f"study process ended early:\n{proc.communicate()[1][-2000:]}")
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"no {n} runs in {journal} after {timeout} s")
        time.sleep(0.02)


def stop(proc: Forked) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


def leftovers(folder) -> list[str]:
    """Files a refusal must not leave behind."""
    return sorted(n for n in os.listdir(folder)
                  if n.endswith((".lock", "-wal", "-shm", "-journal")) or ".tmp-" in n)


def one_line_error(res) -> str:
    """The CLI (a CliRunner result, or a process) failed with one line, no traceback."""
    code, text = ((res.exit_code, res.output) if hasattr(res, "exit_code") else
                  (res.returncode, res.stderr))
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), text
    return lines[0]


def _study(path) -> None:
    from erahbo.objectives.synthetic import Figure1Task
    from erahbo.study import optimize

    optimize(Figure1Task(), Figure1Task().space, budget=30, seed=0, journal=path)
