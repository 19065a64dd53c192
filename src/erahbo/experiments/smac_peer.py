"""The SMAC3 peer of the offline benchmark (``smac``): what a SMAC3 user runs instead.

SMAC3 2.x's :class:`~smac.HyperparameterOptimizationFacade` at its defaults (random forest,
log expected improvement, a Sobol initial design, a random configuration interleaved with
probability 0.2, and the intensifier that races a challenger against the incumbent on up to
``max_config_calls = 3`` seeds) on a scenario with ``deterministic=False``: every trial trains
one configuration on one seed and its cost is minus the return. **Risk-neutral**: SMAC
minimizes the mean cost and never sees ``alpha``; the benchmark measures its recommendation,
the intensifier's incumbent after each run, on the MV objective like every method's.

A replay can only run rows of the task's table, so every configuration SMAC sees is a row:

- the configuration space has one float in ``[0, 1]`` per column of the table's unit-cube
  encoding (:meth:`erahbo.space.SearchSpace.candidates_unit`, as the ``optuna-tpe`` peer);
- the initial design is SMAC's own (scrambled Sobol points, 10 per hyperparameter of the
  table, at most a quarter of the trials: SMAC's rule on the table's hyperparameters, not on
  the encoded columns), each point taking the nearest row not taken yet;
- the acquisition maximizer ranks by EI every row SMAC has not asked yet (exact on a finite
  table, where SMAC's local and random search approximate the maximum over a continuous
  space), and SMAC's random design interleaves a uniformly drawn unasked row where it would
  interleave a random configuration.

Seeds: SMAC's intensifier names the seeds (one pool of ``max_config_calls`` seeds shared by all
configurations). The first time it asks a (row, seed) pair, the pair takes the row's next
stored run in the replay's order (:class:`~erahbo.experiments.replay.SeedReplay`: common random
numbers across methods) and keeps it: one pair, one stored run, one training run.

The replay ends after ``budget`` training runs, or earlier when SMAC has nothing left to ask on
the table (every row asked: it would then sample outside the table, or its intensifier finds
no new trial); the metadata's ``stopped`` says which. Under the paper's protocol the shared
initial design is told first as completed trials (``k_init`` seeds each, seed keys
``0..k_init-1``, which become SMAC's seed pool) and SMAC's own design is empty; under the
user's protocol SMAC's design is its own and counted.

Two settings of the facade's random forest differ, neither changing the model: it runs on one
thread (the benchmark runs one process per core, and SMAC's multi-threaded prediction sums
the trees in the threads' order: one thread makes a repetition reproducible for its seed on
one machine), and without the leaf cap ``max_leaf_nodes = 2**20`` (carried over from pyrfr,
never reached by a forest of at most a few thousand runs, but scikit-learn's best-first
builder that a cap selects spends about 0.2 s per tree on it whatever the data: 10 trees at
each of SMAC's refits made a 1000-run replay take about 15 minutes). Without the cap
scikit-learn grows the same trees depth first: the same model, other random draws.

``smac-k<K>`` (with a risk measure, e.g. ``smac-k5-cvar``): every SMAC trial trains its
configuration on ``K`` stored seeds and its cost is minus their sample measure (the study's,
or the name's: the sample CVaR_q of the ``K`` returns, :meth:`erahbo.risk.RiskMeasure.truth`;
MV: ``mean - alpha var``); SMAC's intensifier races a configuration on up to
``max_config_calls`` such trials and averages their costs (the mean of per-trial CVaRs, not
the CVaR of all the configuration's seeds: SMAC aggregates costs by their mean). User's
protocol only.

SMAC3 is an optional extra: ``pip install erahbo[smac]``.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo.experiments.replay import ReplayTask, SeedReplay
from erahbo.experiments.traces import TRACE_COLUMNS
from erahbo.risk import RiskMeasure

__all__ = ["MAX_CONFIG_CALLS", "run_smac_repetition"]

MAX_CONFIG_CALLS = 3  # the facade's default: seeds a configuration is raced on at most


def _smac() -> Any:
    try:
        import smac
    except ImportError:  # pragma: no cover - depends on the extra
        raise ImportError("the smac method needs SMAC3 2.x: pip install erahbo[smac]") from None
    logging.getLogger("smac").setLevel(logging.ERROR)
    return smac


def _components(smac: Any) -> dict[str, Any]:
    """SMAC classes built on the table (defined here: they subclass SMAC's, imported lazily)."""
    from smac.acquisition.maximizer.abstract_acquisition_maximizer import (
        AbstractAcquisitionMaximizer,
    )
    from smac.acquisition.maximizer.helpers import ChallengerList
    from smac.initial_design.sobol_design import SobolInitialDesign

    class TableSobol(SobolInitialDesign):  # type: ignore[misc]
        """SMAC's Sobol design, each point taking the nearest row not taken yet."""

        def __init__(self, *args: Any, rows: list[Any], U: np.ndarray, **kw: Any) -> None:
            super().__init__(*args, **kw)
            self._rows, self._U = rows, U

        def _select_configurations(self) -> list[Any]:
            P = np.array([c.get_array() for c in super()._select_configurations()])  # (n, d)
            taken = np.zeros(len(self._rows), dtype=bool)
            out = []
            for p in P:
                d2 = np.where(taken, np.inf, ((self._U - p) ** 2).sum(axis=1))  # (N,)
                i = int(np.argmin(d2))
                taken[i] = True
                out.append(self._rows[i])
            return out

    class RandomRow:
        """What SMAC's challenger list samples a random configuration from: an unasked row."""

        def __init__(self, rows: list[Any], free: list[Any], rng: np.random.RandomState) -> None:
            self._rows, self._free, self._rng = rows, free, rng

        def sample_configuration(self) -> Any:
            pool = self._free or self._rows  # none left: any row (SMAC skips an asked one)
            return pool[int(self._rng.randint(len(pool)))]

    class TableMaximizer(AbstractAcquisitionMaximizer):  # type: ignore[misc]
        """EI ranked over the rows SMAC has not asked yet (ties broken at random, seeded)."""

        def __init__(self, configspace: Any, rows: list[Any], seed: int) -> None:
            super().__init__(configspace, challengers=len(rows), seed=seed)
            self._rows = rows

        def _unasked(self, previous_configs: list[Any]) -> list[Any]:
            seen = set(previous_configs)
            return [c for c in self._rows if c not in seen]

        def _maximize(self, previous_configs: list[Any], n_points: int) -> list[Any]:
            free = self._unasked(previous_configs)
            return self._sort_by_acquisition_value(free)[:n_points] if free else []

        def maximize(self, previous_configs: list[Any], n_points: int | None = None,
                     random_design: Any = None) -> Any:
            n = self._challengers if n_points is None else n_points
            free = self._unasked(previous_configs)
            if not free:  # every row asked (SMAC's challenger list fails on an empty ranking)
                return iter(())
            ranked = ChallengerList(
                RandomRow(self._rows, free, self._rng),
                lambda: [c for _, c in self._maximize(previous_configs, n)], random_design)
            if random_design is not None:
                random_design.next_iteration()
            return ranked

    return {"sobol": TableSobol, "maximizer": TableMaximizer}


def _forest(model: Any) -> Any:
    """The facade's random forest on one thread and with no leaf cap (see the module
    docstring); refused, naming the version, where SMAC's forest has changed."""
    opts = getattr(model, "_rf_opts", None)
    if not isinstance(opts, dict) or not {"n_jobs", "max_leaf_nodes"} <= set(opts):
        raise RuntimeError("the smac method is written for SMAC3 2.x's scikit-learn forest "
                           "(smac>=2.4); this SMAC's forest has no such options: pin "
                           "smac>=2.4,<3")
    opts.update(n_jobs=1, max_leaf_nodes=None)
    return model


def run_smac_repetition(
    task: ReplayTask,
    repetition: int,
    settings: Any,
    rep_seed: int,
    progress: Callable[[int], None] | None = None,
    k: int = 1,
    measure: RiskMeasure | None = None,
) -> tuple[pd.DataFrame, dict[str, Any], list[int]]:
    """Replay one repetition of SMAC3 on ``task`` (see the module docstring): one seed per
    trial and cost minus the return, or (``k > 1``) ``k`` seeds per trial and cost minus
    their sample ``measure``.

    Returns
    -------
    (pandas.DataFrame, dict, list of int)
        The trace (columns ``TRACE_COLUMNS``), the metadata (``k_init``, ``smac_version``,
        ``max_config_calls``, ``n_initial``: SMAC's design size, ``stopped``: ``"budget"`` or
        why SMAC stopped earlier) and the shared initial design's row ids (paper protocol).
    """
    if k > 1 and (measure is None or settings.protocol == "paper"):
        raise ValueError("smac-k<K> runs under the user's protocol with a risk measure "
                         "(its trials' cost); use --protocol user")
    smac = _smac()
    import ConfigSpace as CS
    from smac.main.exceptions import ConfigurationSpaceExhaustedException
    from smac.runhistory.dataclasses import TrialInfo, TrialValue

    parts = _components(smac)
    facade = smac.HyperparameterOptimizationFacade
    replay = SeedReplay(task, settings.seed, repetition)
    U = np.asarray(task.space.candidates_unit(), dtype=float)  # (N, dim)
    cs = CS.ConfigurationSpace(seed=rep_seed)
    cs.add([CS.UniformFloatHyperparameter(f"u{j}", 0.0, 1.0) for j in range(U.shape[1])])
    rows = [CS.Configuration(cs, vector=u) for u in U]
    row_of = {c: i for i, c in enumerate(rows)}
    calls = min(MAX_CONFIG_CALLS, task.n_seeds // max(int(k), 1))
    paper = settings.protocol == "paper"
    init_ids = ([int(i) for i in task.space.sobol_indices(int(settings.n_init), rep_seed)]
                if paper else [])
    k_init = int(settings.k_init) if paper else 1
    budget = int(settings.budget)
    k = int(k)
    with tempfile.TemporaryDirectory(prefix="erahbo-smac-") as tmp:  # SMAC writes nothing here
        scenario = smac.Scenario(cs, deterministic=False, n_trials=budget + k_init * len(init_ids),
                                 seed=rep_seed, output_directory=Path(tmp))
        model = _forest(facade.get_model(scenario))
        design = parts["sobol"](scenario, rows=rows, U=U,
                                n_configs=0 if paper else 10 * len(task.space))
        opt = facade(scenario, None, model=model, initial_design=design,
                     acquisition_maximizer=parts["maximizer"](cs, rows, rep_seed),
                     intensifier=facade.get_intensifier(scenario, max_config_calls=calls),
                     logging_level=False, overwrite=True)
        # (row, SMAC seed) -> (return, stored seed); k > 1: (the sample measure of the k
        # returns, their stored seeds)
        stored: dict[tuple[int, int], tuple[float, Any]] = {}
        n_runs = np.zeros(task.n_configs, dtype=np.int64)  # (N,) runs told per row

        def run(cid: int, key: int) -> tuple[float, Any] | None:
            if (cid, key) not in stored:
                if replay.remaining(cid) < k:
                    return None
                vals, seeds = replay.draw(cid, k)
                stored[(cid, key)] = ((vals[0], seeds[0]) if k == 1 else
                                      (float(measure.truth(np.asarray(vals))), seeds))
            n_runs[cid] += 1
            return stored[(cid, key)]

        for cid in init_ids:  # paper protocol: the shared design, told as completed trials
            for key in range(k_init):
                got = run(cid, key)
                if got is not None:
                    opt.tell(TrialInfo(rows[cid], seed=key), TrialValue(cost=-got[0]),
                             save=False)
        trace, stopped = _replay_loop(task, opt, rows, row_of, run, budget, len(init_ids),
                                      progress, (ConfigurationSpaceExhaustedException,
                                                 TrialInfo, TrialValue))
        rejected = {row_of[c] for c in opt.intensifier.get_rejected_configs() if c in row_of}
    _finish_rounds(trace, n_runs, rejected, calls)
    meta = {"k_init": k_init if k == 1 else k, "smac_version": str(smac.version),
            "max_config_calls": calls, "seeds_per_trial": k,
            "n_initial": int(design.meta["n_configs"]),
            "stopped": stopped}
    return trace, meta, init_ids


def ask_row(opt: Any, row_of: dict[Any, int], exhausted: type[Exception]
            ) -> tuple[Any, int] | str:
    """SMAC's next trial and the table row of its configuration, or why there is none: the
    intensifier gave up (``StopIteration`` or ``exhausted``, SMAC's
    ``ConfigurationSpaceExhaustedException``), or it sampled outside the table."""
    try:
        info = opt.ask()
    except (StopIteration, exhausted):
        return "no new trial (SMAC's intensifier gave up)"
    cid = row_of.get(info.config)
    if cid is None:
        return "every row asked (SMAC sampled outside the table)"
    return info, cid


def _replay_loop(
    task: ReplayTask, opt: Any, rows: list[Any], row_of: dict[Any, int],
    run: Callable[[int, int], tuple[float, int] | None], budget: int, n_init: int,
    progress: Callable[[int], None] | None, smac_types: tuple[Any, Any, Any],
) -> tuple[pd.DataFrame, str]:
    """Ask, run and tell until ``budget`` training runs; the trace and why it ended."""
    exhausted, TrialInfo, TrialValue = smac_types
    out: list[list[Any]] = []
    round_of: dict[int, int] = {}
    mv_star, cum, stopped = task.mv_star, 0.0, "budget"
    while len(out) < budget:
        asked = ask_row(opt, row_of, exhausted)
        if isinstance(asked, str):
            stopped = asked
            break
        info, cid = asked
        got = run(cid, int(info.seed))
        if got is None:  # a row's stored seeds ran out (tables with fewer seeds than calls)
            stopped = f"row {cid}'s stored seeds ran out"
            break
        value, seed = got
        seeds = seed if isinstance(seed, list) else [seed]  # k > 1: the trial's k runs
        if len(out) + len(seeds) > budget:
            break  # (k > 1) too few runs left for a trial
        prev = out[-1][6] if out else None
        opt.tell(TrialInfo(info.config, seed=info.seed), TrialValue(cost=-value), save=False)
        inc_cfg = opt.intensifier.get_incumbent()
        inc = row_of[inc_cfg] if inc_cfg is not None else cid
        rnd = round_of.setdefault(cid, n_init + len(round_of) + 1)
        for j, s in enumerate(seeds):  # the incumbent changes with the trial's last run
            now = inc if j == len(seeds) - 1 or prev is None else prev
            cum += mv_star - task.mv[cid]
            out.append([len(out) + 1, rnd, cid, s, 0, task.mv[cid], now, task.mv[now],
                        mv_star - task.mv[now], cum, ""])
        if progress is not None:
            progress(len(seeds))
    return pd.DataFrame(out, columns=list(TRACE_COLUMNS)), stopped


def _finish_rounds(trace: pd.DataFrame, n_runs: np.ndarray, rejected: set[int],
                   calls: int) -> None:
    """A round is one configuration's runs in the trace: ``k_round`` is their count and the
    last one's ``stop_reason`` says how its race ended: ``rejected`` (the intensifier dropped
    it), ``k_max`` (raced on ``max_config_calls`` seeds) or ``budget`` (the replay ended)."""
    if trace.empty:
        return
    cid = trace["config_id"].to_numpy()  # (n,)
    trace["k_round"] = trace.groupby("round")["run"].transform("size").astype(np.int64)
    last = ~trace.duplicated("round", keep="last").to_numpy()  # (n,)
    reason = np.where(n_runs[cid] >= calls, "k_max", "budget").astype(object)
    reason[np.isin(cid, list(rejected))] = "rejected"
    trace["stop_reason"] = np.where(last, reason, "")
