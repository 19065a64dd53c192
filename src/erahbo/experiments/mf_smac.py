"""SMAC3's multi-fidelity facade as a peer at equal training steps (``smac-mf-k<K>``).

:class:`smac.MultiFidelityFacade` (random forest, its random design) with its Hyperband
intensifier (``eta = 3``), replayed on a learning-curve table through a
:class:`~erahbo.experiments.partial_replay.PartialReplay`:

- **budget** = training steps: ``min_budget`` and ``max_budget`` are the table's first and last
  checkpoints; a trial at budget ``b`` runs to the checkpoint nearest ``b`` (Hyperband's
  budgets ``max_budget / eta^i`` rounded to the checkpoints);
- **instance = K seeds**: a trial (configuration, budget) trains the configuration's first
  ``K`` stored runs (in the replay's order: common random numbers) to that checkpoint and
  its cost is minus their MV there (``mean - alpha var``, ``ddof=1``, processed scale), so
  the scenario is deterministic (one such trial per configuration and budget); a trial at a
  higher budget continues the same runs and is charged the extra steps only
  (:mod:`erahbo.experiments.partial_replay`);
- **rows**: the configuration space, initial design and acquisition maximizer are the
  black-box ``smac`` peer's (:mod:`erahbo.experiments.smac_peer`: one float per unit-cube
  column, SMAC's Sobol design and EI ranked over the rows not asked yet); the design has
  ``min(10 x hyperparameters, budget_runs // 4)`` configurations (SMAC's rule, at most a
  quarter of the budget counted in full runs);
- **random configurations**: where SMAC samples the configuration space itself (while it has
  no data to fit its model on, e.g. the rest of a Hyperband bracket's first rung) it gets an
  unasked row drawn uniformly;
- **recommendation**: the intensifier's incumbent with ``incumbent_selection =
  "highest_budget"`` (selected on full-budget trials only); before one exists, none.

The replay ends when the next trial does not fit the step budget or SMAC has nothing left to
ask on the table (the metadata's ``stopped``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo.experiments.partial_replay import PartialReplay, StepTrace
from erahbo.experiments.peers import sample_mv
from erahbo.experiments.smac_peer import _components, _forest, _smac, ask_row

__all__ = ["ETA", "run_smac_mf"]

ETA = 3  # Hyperband's eta (the facade's default)


def run_smac_mf(replay: PartialReplay, k: int, rep_seed: int, budget_runs: int
                ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Replay SMAC3's multi-fidelity facade with ``k`` seeds per trial (module docstring).

    Returns
    -------
    (pandas.DataFrame, dict)
        The trace against steps and the metadata (``smac_version``, ``n_trials``,
        ``n_initial``, ``stopped``).
    """
    smac = _smac()
    import ConfigSpace as CS
    from smac.main.exceptions import ConfigurationSpaceExhaustedException
    from smac.runhistory.dataclasses import TrialValue

    ct = replay.ctask
    task = ct.task
    if k > task.n_seeds:
        raise ValueError(f"smac-mf-k{k}: the table has {task.n_seeds} stored seeds; use "
                         f"k <= {task.n_seeds}")
    parts = _components(smac)
    facade = smac.MultiFidelityFacade
    U = np.asarray(task.space.candidates_unit(), dtype=float)  # (N, d)
    cs = CS.ConfigurationSpace(seed=rep_seed)
    cs.add([CS.UniformFloatHyperparameter(f"u{j}", 0.0, 1.0) for j in range(U.shape[1])])
    rows = [CS.Configuration(cs, vector=u) for u in U]
    row_of = {c: i for i, c in enumerate(rows)}
    steps = ct.steps.astype(float)  # (C,)
    n_init = max(1, min(10 * len(task.space), budget_runs // 4, task.n_configs))
    out = StepTrace(replay)
    cols_of: dict[int, list[int]] = {}
    inc: int | None = None
    n_trials, stopped = 0, "budget"
    with tempfile.TemporaryDirectory(prefix="erahbo-smac-mf-") as tmp:
        scenario = smac.Scenario(cs, deterministic=True, seed=rep_seed,
                                 n_trials=max(budget_runs * ct.n_checkpoints, 10),
                                 min_budget=float(steps[0]), max_budget=float(steps[-1]),
                                 output_directory=Path(tmp))
        # SMAC samples the configuration space directly while it has no data at a budget to
        # train its model on (Hyperband asks a bracket's configurations before any is told):
        # here such a sample is an unasked row drawn uniformly (as SMAC's random design)
        sampler = _RowSampler(rows, np.random.RandomState(rep_seed % 2**32))
        object.__setattr__(cs, "sample_configuration", sampler)
        model = _forest(facade.get_model(scenario))
        design = parts["sobol"](scenario, rows=rows, U=U, n_configs=n_init, max_ratio=1.0)
        opt = facade(scenario, None, model=model, initial_design=design,
                     acquisition_maximizer=parts["maximizer"](cs, rows, rep_seed),
                     intensifier=facade.get_intensifier(scenario, eta=ETA,
                                                        incumbent_selection="highest_budget"),
                     logging_level=False, overwrite=True)
        sampler.seen = lambda: set(opt.runhistory.get_configs())
        while True:
            asked = ask_row(opt, row_of, ConfigurationSpaceExhaustedException)
            if isinstance(asked, str):
                stopped = asked
                break
            info, cid = asked
            b = float(info.budget) if info.budget is not None else steps[-1]
            c = int(np.argmin(np.abs(steps - b)))  # the checkpoint nearest the budget
            if cid not in cols_of:
                if replay.remaining(cid) < k:
                    stopped = f"row {cid}'s stored seeds ran out"
                    break
                cols_of[cid] = replay.new_runs(cid, k)
            seen = replay.advance_all(cid, cols_of[cid], c)
            if seen is None:
                break
            vals = []
            for obs in seen:  # one run at a time: the trace records the steps after each
                out.add(obs, inc)
                vals.append(obs.value)
            opt.tell(info, TrialValue(cost=-sample_mv(vals, task.alpha)), save=False)
            n_trials += 1
            inc_cfg = opt.intensifier.get_incumbent()
            inc = row_of.get(inc_cfg) if inc_cfg is not None else None
            out.restate_last(inc)
    return out.frame(), {"smac_version": str(smac.version), "n_trials": n_trials,
                         "n_initial": int(design.meta["n_configs"]), "stopped": stopped}


class _RowSampler:
    """``ConfigurationSpace.sample_configuration`` on the table: a row neither in SMAC's
    runhistory nor handed out before, uniformly (any row once none is left)."""

    def __init__(self, rows: list[Any], rng: np.random.RandomState) -> None:
        self._rows, self._rng = rows, rng
        self._given: set[Any] = set()
        self.seen: Any = set  # replaced by the runhistory's configurations once SMAC exists

    def _one(self) -> Any:
        taken = self._given | self.seen()
        free = [r for r in self._rows if r not in taken] or self._rows
        row = free[int(self._rng.randint(len(free)))]
        self._given.add(row)
        return row

    def __call__(self, size: int | None = None) -> Any:
        return self._one() if size is None else [self._one() for _ in range(int(size))]
