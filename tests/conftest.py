"""Test-suite setup and the helpers tests share.

One BLAS thread (multi-threaded BLAS thrashes on small CI machines). Helpers: the budget
rule (:func:`spent_budget`), the needle scenario (challengers certain whatever the rounding),
the noisy 3-d tables, the ``failing`` fixture (the fault-injection table objective fails on
some runs) and the ``cli_options`` fixture (a CLI command's parsed options, no study run). Long
tests are marked ``slow`` (``make test-slow``; ``make test`` skips them).
"""

import os

import pytest

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")


# The tests' folders (tmp_path) in memory where the machine has a RAM file system: a journal
# is SQLite with synchronous=FULL, so every commit of every study the tests run is an fsync
# (about 3 ms on a CI machine's virtual disk, nothing on tmpfs), and the suite writes tens of
# thousands of them. What a test checks does not depend on it: the crash tests kill processes
# (SIGKILL, os._exit), whose writes the page cache keeps either way; the full-disk test sets
# RLIMIT_FSIZE; the read-only test mounts a tmpfs of its own. ERAHBO_TEST_TMP=disk (or
# PYTEST_DEBUG_TEMPROOT, pytest's own setting, or --basetemp) keeps them on the disk.
def _ram_temproot(path: str = "/dev/shm", min_free: int = 2 << 30) -> str | None:
    """``path`` when it is a writable tmpfs with ``min_free`` bytes free, else None."""
    try:
        with open("/proc/mounts") as fh:
            if not any(f[1:3] == [path, "tmpfs"] for f in (line.split() for line in fh)):
                return None
        st = os.statvfs(path)
    except OSError:
        return None
    ok = st.f_bavail * st.f_frsize >= min_free and os.access(path, os.W_OK | os.X_OK)
    return path if ok else None


if os.environ.get("ERAHBO_TEST_TMP") != "disk" and "PYTEST_DEBUG_TEMPROOT" not in os.environ:
    _root = _ram_temproot()  # read by pytest's tmp_path_factory (one per run, xdist included)
    if _root:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = _root


# Why a study may end with one run of its budget unspent. Where a new round needs 2 seeds
# (Options.min_seeds: 2 unless k_min or k_init is 1; Optimizer.ask returns None when fewer runs
# are free), when the last round closes with exactly one run left, that run is never spent.
# That happens after a round closed for any reason but the budget
# (erahbo.optimizer.replication.STOP_REASONS):
LAST_RUN_UNSPENT_AFTER = (
    "dominated", "k_max",  # ERAHBO's stopping rule (eq. 12) or k_max
    "fixed_k",  # a fixed-k round (RAHBO, GP-UCB, random search) completed its k seeds
    "random",  # a random round (random_interleave) completed its first k_min seeds
    "max_seeds",  # the configuration reached its seed cap
    "excluded", "infeasible",  # the configuration left the candidates or failed
    "initial",  # the initial design (counted in the budget) ended
)
# and never after these: a round closed for "budget" had no run left; warm rounds come before
# every counted run. tests/test_optimizer.py checks that the two lists hold every reason.
NEVER_UNSPENT_AFTER = ("budget", "warm")


def spent_budget(result, budget: int, n: int | None = None) -> bool:
    """The study ran its whole budget, or all but one run when its last round closed for a
    reason in :data:`LAST_RUN_UNSPENT_AFTER` where a new round needs 2 seeds (README); where it
    needs one (``k_min`` or ``k_init`` 1), the whole budget. ``n``: the runs to check (default
    ``result.n_evals``)."""
    n = result.n_evals if n is None else n
    from erahbo.optimizer.options import min_seeds_of  # numpy after the BLAS settings above

    st = result.settings
    need = min_seeds_of(st.get("method"), st.get("k_init"), st.get("k_min"), st.get("k"))
    if need == 1:  # one free run starts a round
        return n == budget
    return _spent(n, budget, result.rounds.stop_reason.iloc[-1])


def _spent(n: int, budget: int, last_stop: str) -> bool:
    """``n`` runs spent all of ``budget``, or all but one after a last round that closed for a
    reason in :data:`LAST_RUN_UNSPENT_AFTER` (``last_stop``: its stop reason)."""
    return n == budget or (n == budget - 1 and last_stop in LAST_RUN_UNSPENT_AFTER)


def spent_budget_cli(out, budget: int, n: int | None = None) -> int:
    """:func:`spent_budget` for a CLI study written to the directory ``out`` (its
    ``summary.json`` and ``rounds.csv``); returns ``n`` (default: the counted runs), or
    fails."""
    import json
    from pathlib import Path

    import pandas as pd

    if n is None:
        n = int(json.loads((Path(out) / "summary.json").read_text())["n_evals"])
    last = pd.read_csv(Path(out) / "rounds.csv").stop_reason.iloc[-1]
    assert _spent(n, budget, last), (n, budget, last)
    return n


# A study state built so that a challenger round has a challenger whatever the rounding
# (tests/test_challengers.py, tests/test_integration_optuna.py). On x in [0, 1]: a quiet
# region (x <= 0.3: returns 1 +- 0.1 at x = 0.1 on 10 seeds, 0.9 +- 0.1 around it on 2) and a
# noisy one (x >= 0.5: returns 1 +- 2 on 2 seeds, sample MV -3) holding three "needles" with
# 2 seeds each: 3.2, 3.1 and 3.0 (+0.01 on odd seeds), sample MV about 3. The GPs smooth the
# needles into the noisy region, so the recommendation (argmax LCB_MV) is a quiet
# configuration, by a margin of about 3 in LCB_MV; each needle's sample MV less 1.5 standard
# errors (about 3) beats a quiet configuration's sample MV (at most 1) by about 2: all three
# are challengers, the best first.
NEEDLES = {0.65: 3.2, 0.75: 3.1, 0.85: 3.0}
_QUIET = {0.1: 1.0, 0.0: 0.9, 0.2: 0.9, 0.3: 0.9}
_NOISY = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def needle_return(x: float, seed: int) -> float:
    """One run of the needle scenario at ``x`` (a point of it) with ``seed``."""
    if x in NEEDLES:
        return NEEDLES[x] + 0.01 * (seed % 2)
    if x in _QUIET:
        return _QUIET[x] + 0.1 * (-1) ** (seed % 2)
    return 1.0 + 2.0 * (-1) ** (seed % 2)


def needle_records(seeds: dict[float, int] | None = None) -> list[dict]:
    """The needle scenario's runs as warm-start records (``{"config": {"x": ...},
    "returns": [...]}``): 10 seeds at x = 0.1, 2 at every other point (``seeds``: other
    counts at some points, ``{x: n}``)."""
    n = {0.1: 10, **(seeds or {})}
    xs = [0.1, 0.0, 0.2, 0.3, *NEEDLES, *_NOISY]
    return [{"config": {"x": x}, "returns": [needle_return(x, s) for s in range(n.get(x, 2))]}
            for x in xs]


@pytest.fixture
def failing(monkeypatch):
    """``table_objective`` of tests/fault_injection.py fails on 20 % of its (config, seed)
    pairs (tests/test_resume*.py)."""
    from fault_injection import FAIL_ENV

    monkeypatch.setenv(FAIL_ENV, "0.2")


@pytest.fixture
def cli_options(monkeypatch, tmp_path):
    """``erahbo optimize`` up to its study, which then runs no trial: the command line is
    parsed, the objective and space loaded and the Optimizer built (options checked, journal
    opened) as in a real call; the loop that would ask and tell is a no-op.

    ``cli_options(*args)`` (the arguments after ``erahbo optimize``; ``--objective figure1``,
    ``--out`` and ``--no-progress`` are added unless given) returns ``(result, options)``:
    the CliRunner result and the options in force of the built optimizer
    (:func:`erahbo.study.rebuild.study_options` of its settings, as a resume rebuilds them;
    None when the command failed before building it).
    """
    from typer.testing import CliRunner

    import erahbo.study.run as loop
    from erahbo.cli import app
    from erahbo.study.rebuild import study_options

    built: list = []
    monkeypatch.setattr(loop, "drive", lambda opt, *a, **k: built.append(opt))

    def invoke(*args: str):
        given = set(args)
        extra = [] if "--objective" in given else ["--objective", "figure1"]
        extra += [] if "--out" in given else ["--out", str(tmp_path / f"o{len(built)}")]
        built.clear()
        res = CliRunner().invoke(app, ["optimize", *args, *extra, "--no-progress"])
        opts = study_options(built[0].study_settings()) if built else None
        return res, opts

    return invoke


# Noisy finite tables shared by the option tests: rows of (a, b, c) drawn uniformly, a smooth
# peak and seeded Gaussian noise whose size varies over the table (so MV and mean disagree).
def table3(n: int, seed: int):
    """``n`` rows of uniform ``a, b, c`` in [0, 1) from ``default_rng(seed)``."""
    import numpy as np
    import pandas as pd

    return pd.DataFrame(np.random.default_rng(seed).random((n, 3)), columns=["a", "b", "c"])


def corner_peak(config: dict, seed: int) -> float:
    """A peak at (0.7, 0.7, 0.7); noise 0.05 + 0.4 c (random_design, random_top)."""
    import numpy as np

    x = np.array([config["a"], config["b"], config["c"]])
    mean = float(np.exp(-5.0 * ((x - 0.7) ** 2).sum()))
    return mean + (0.05 + 0.4 * x[2]) * np.random.default_rng(seed).standard_normal()


def centre_peak(config: dict, seed: int) -> float:
    """A peak at (0.5, 0.5, 0.5); noise 0.05 + 0.3 a b (reselection, recommendation)."""
    import numpy as np

    x = np.array([config["a"], config["b"], config["c"]])
    mean = float(np.exp(-4.0 * ((x - 0.5) ** 2).sum()))
    return mean + (0.05 + 0.3 * x[0] * x[1]) * np.random.default_rng(seed).standard_normal()


def two_peaks_run(x: float, seed: int) -> float:
    """One training run: a quiet peak at 0.25 (mean 1.0) and a higher, much noisier one at
    0.75 (mean 1.3); at alpha 1 the MV optimum is the quiet one (the Optuna host tests)."""
    import math
    import random

    rng = random.Random(f"{x:.12f}/{seed}")  # string seeds: the same in every process
    mean = math.exp(-((x - 0.25) / 0.12) ** 2) + 1.3 * math.exp(-((x - 0.75) / 0.12) ** 2)
    return mean + rng.gauss(0.0, 0.05 + 1.0 * math.exp(-((x - 0.75) / 0.2) ** 2))


def cleanrl_objective_for(run):
    """CleanRL's tuner pattern on ``run(x, seed) -> return`` (``x`` in [0, 1]): the trial's
    seeds, a report per seed, ``TrialPruned`` when the pruner says so."""

    def objective(trial) -> float:
        import optuna

        from erahbo.integrations.optuna import trial_seeds

        x = trial.suggest_float("x", 0.0, 1.0)
        returns = []
        for step, seed in enumerate(trial_seeds(trial)):
            returns.append(run(x, seed))
            trial.report(returns[-1], step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return sum(returns) / len(returns)

    return objective


cleanrl_objective = cleanrl_objective_for(two_peaks_run)  # on the two-peak training run


# One local Ray instance (loopback, 2 CPUs; RayExecutor(address=None, num_cpus=2)) shared by the
# modules that use Ray through erahbo (tests/test_executors.py, test_arlbench_ray.py,
# test_faults_timeout.py) and by the Tune runs of test_integration_ray_tune.py and
# test_tune_schedulers.py: starting one costs about 10 s. Their executors and clients join it
# as they join any initialized session (and leave it running). Modules that start Ray
# themselves (ray.init in a doc example) ask for ``no_shared_ray``, which shuts it down first;
# a later ``shared_ray`` starts it again (they are therefore put after the modules that only
# join it). The Ray modules carry the xdist group "ray" and are moved to the front of the
# collection (pytest_collection_modifyitems below):
# `make test`'s `-n 2` (--dist load) hands tests out in collection order, in consecutive
# chunks, so they run one after the other in one process. (--dist loadgroup would group them
# but is broken with pytest 9 and xdist 3.8: it sets item._nodeid, which pytest 9 no longer
# reads, and then hands out single tests alternately, setting module fixtures up twice.)
class _SharedRay:
    def __init__(self):
        self.ex = None

    def get(self):
        import ray

        from erahbo.runtime.executors import RayExecutor

        if self.ex is None or not ray.is_initialized():
            self.ex = RayExecutor(address=None, num_cpus=2, init_kwargs={"log_to_driver": False})
        return self.ex

    def release(self):
        if self.ex is not None:
            import ray

            self.ex.shutdown()  # the executor that started the instance shuts it down
            self.ex = None
            assert not ray.is_initialized()


@pytest.fixture(scope="session")
def _ray_holder():
    holder = _SharedRay()
    yield holder
    holder.release()


@pytest.fixture(scope="module")
def shared_ray(_ray_holder):
    """The shared local Ray instance's RayExecutor (it owns the session)."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install erahbo[ray])")
    return _ray_holder.get()


@pytest.fixture
def no_shared_ray(_ray_holder):
    """No shared Ray instance is running (for a test that calls ray.init itself)."""
    _ray_holder.release()


_OWN_RAY = {"no_shared_ray"}  # the fixture that ends the shared instance


def pytest_collection_modifyitems(config, items):
    """The tests of the xdist group "ray" first, in their order, those of the modules that
    start Ray themselves (a test or module fixture that ends the shared instance) after the
    others (the shared instance starts once); then the other tests, in their order."""
    ray = [it for it in items if any(m.args[:1] == ("ray",)
                                     for m in it.iter_markers("xdist_group"))]
    if ray:
        own = {it.module for it in ray if _OWN_RAY & set(it.fixturenames)}
        chosen = set(map(id, ray))
        items[:] = ([it for it in ray if it.module not in own]
                    + [it for it in ray if it.module in own]
                    + [it for it in items if id(it) not in chosen])

