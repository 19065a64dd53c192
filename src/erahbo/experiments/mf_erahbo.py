"""erahbo with early stopping (``early_stop``) replayed on a learning-curve table.

The multi-fidelity benchmark's method ``erahbo-es`` (:mod:`erahbo.experiments.mf_peers`):
erahbo at its defaults (user protocol: its own initial design, counted) plus the early-stop
part (:mod:`erahbo.optimizer.early_stop`), on a
:class:`~erahbo.experiments.partial_replay.PartialReplay`:

* every trial the optimizer asks trains its runs (the stored runs of the repetition, common
  random numbers) together, checkpoint by checkpoint, each checkpoint charged its steps;
* after each checkpoint before the last, the early-stop part's verdict: a stopped trial is
  ended with :meth:`erahbo.Optimizer.tell_stopped` (no return enters the data); a trial whose
  runs reach the last checkpoint is told its final returns, and their curves join the
  part's completed curves (the initial design's too: they are never stopped);
* the optimizer's own budget in seeds is set out of reach (every run at least one
  checkpoint's steps; without early stopping: the full runs the step budget holds, as the
  full-run replay's budget): the step budget ends the repetition, at the first checkpoint
  that does not fit (the trial then open is dropped, as the peers' is);
* when the optimizer has nothing left to propose (every configuration tried, the stopped ones
  marked dominated), the stopped configurations with final returns are readmitted
  (:meth:`erahbo.Optimizer.readmit_stopped`), once per change of the data;
* the recommendation after each observation is the optimizer's
  (:attr:`erahbo.Optimizer.incumbent_id`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from erahbo.experiments.partial_replay import PartialReplay, StepTrace
from erahbo.optimizer.core import Optimizer
from erahbo.optimizer.early_stop import EarlyStop

__all__ = ["run_erahbo_es"]


def run_erahbo_es(replay: PartialReplay, rep_seed: int, *, early_stop: bool = True,
                  new_configs: bool = True, record: bool = False, **options: Any
                  ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Replay erahbo with early stopping on ``replay`` until its step budget is spent.

    Parameters
    ----------
    replay : PartialReplay
        The repetition (its ``budget_steps`` ends it; None: until the optimizer stops).
    rep_seed : int
        The optimizer's seed (the repetition's).
    early_stop : bool
        False: the same loop with full runs only (every trial trained to its last
        checkpoint): full-run erahbo through this replay.
    new_configs : bool
        False: ask the verdict only for configurations with final returns in the data (a
        configuration's first run always completes, so that the models learn from every
        configuration tried; ``erahbo-es-r``).
    record : bool
        Keep every verdict in the metadata (``"verdicts"``: ``(trial_id, config_id,
        checkpoint, stop, ucb_mv, B_t)``) and the optimizer (``"optimizer"``).
    **options
        Further :class:`erahbo.Options` (``early_stop_beta``, ...).

    Returns
    -------
    (pandas.DataFrame, dict)
        The trace against steps and its metadata (trials, stopped trials, the histogram of
        the checkpoints they stopped at, the stops whose bound without the partial runs was
        already at most ``B_t``: ``n_prior_stops``).
    """
    ct = replay.ctask
    task = ct.task
    n_ck = ct.n_checkpoints
    last = n_ck - 1
    if replay.budget_steps is not None:  # full runs only: the budget in full runs
        max_runs = int(replay.budget_steps // int(ct.steps[0 if early_stop else -1]))
    else:
        max_runs = task.n_configs * task.n_seeds
    opt = Optimizer(task.space, "erahbo", budget=max_runs, seed=rep_seed, alpha=task.alpha,
                    initial_in_budget=True, early_stop=early_stop, **options)
    es = EarlyStop.from_options(opt.options, n_ck) if early_stop else None
    out = StepTrace(replay)
    inc: int | None = None
    n_trials, stopped_at, done = 0, [], False
    verdicts: list[tuple[int, int, int, bool, float, float]] = []
    n_prior = 0
    readmitted_at = -1
    while not done:
        trial = opt.ask()
        if trial is None:  # nothing left to propose: the stopped configurations with data
            if es is None or opt.data.version == readmitted_at:  # return (once per new data)
                break
            readmitted_at = opt.data.version
            opt.readmit_stopped()
            for c in np.flatnonzero(opt.state.allowed):
                if replay.remaining(int(c)) == 0:
                    opt.exclude(int(c))
            continue
        cid = int(trial.config_id)
        cols = replay.new_runs(cid, len(trial.seeds))
        n_trials += 1
        vals: list[float] = []
        stopped = False
        for c in range(n_ck):
            seen = replay.advance_all(cid, cols, c)
            if seen is None:
                done = True  # the step budget ends inside this trial
                break
            vals = []
            for obs in seen:  # one run at a time: the trace records the steps after each
                out.add(obs, inc)
                vals.append(obs.value)
            if es is not None and c < last and (new_configs
                                                or opt.data.row_of(cid) is not None):
                v = es.verdict(opt, trial, c, vals)
                if record and v.reason in ("dominated", "continue"):
                    verdicts.append((trial.trial_id, cid, c, v.stop, v.ucb_mv, v.B_t))
                if v.stop:
                    n_prior += int(v.prior_ucb_mv <= v.B_t)  # the models agreed already
                    opt.tell_stopped(trial, v.bounds)
                    stopped_at.append(c)
                    stopped = True
                    break
        if done:
            break
        if not stopped:
            opt.tell(trial, vals[: len(cols)])
            if es is not None:
                es.add_curves(cid, ct.curves[cid, cols, :])
        if replay.remaining(cid) == 0 and opt.state.allowed[cid]:
            opt.exclude(cid)
        inc = opt.incumbent_id
        out.restate_last(inc)
    hist = np.bincount(np.asarray(stopped_at, dtype=np.int64), minlength=n_ck)
    meta: dict[str, Any] = {"n_trials": n_trials, "n_stopped": len(stopped_at),
                            "stopped_at": [int(h) for h in hist], "n_prior_stops": n_prior}
    if record:
        meta.update(verdicts=verdicts, optimizer=opt)
    return out.frame(), meta
