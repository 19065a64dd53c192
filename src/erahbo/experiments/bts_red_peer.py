"""The ``bts-red`` peer (Mean-Var-BTS-RED, :mod:`erahbo.experiments.bts_red`) in both benchmarks.

* **Table replay** (:func:`run_bts_red_table`): Thompson sampling runs over the table's rows
  that still have ``n_min`` unused stored seeds (a finite domain, as in the paper's analysis:
  exact, no nearest-row mapping needed); an entry draws its replications from the row's stored
  seeds in the replay's order (common random numbers) and is cut to the seeds left. Under the
  paper's protocol the shared initial design (``k_init`` seeds each) is told first, not
  counted; under the user's protocol the method's own design (``n_init`` Sobol rows x
  ``n_min`` seeds, or the study's ``n_init`` / ``k_init``) is counted and traced.
* **Continuous benchmark** (:func:`run_bts_red_continuous`): Thompson sampling over fresh
  Sobol points of the task's space plus the inputs evaluated so far; a configuration's
  replications take its next seed labels (``0, 1, ...`` per distinct configuration, through
  the repetition's seed stream).

Trace rows (the benchmark's format): ``round`` is a batch entry (one input and its
replications), ``k_round`` its replications, ``stop_reason`` on its last run
``replication_rule`` (the rule's count ran), ``budget`` or ``max_seeds`` (cut), ``initial``
(the design). The recommendation changes at the end of a batch only (the models change only
there): the evaluated input with the best posterior mean MV.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from erahbo.experiments.bts_red import BTSRed, BTSRedSettings
from erahbo.experiments.methods import MethodSpec
from erahbo.experiments.replay import ReplayTask, SeedReplay
from erahbo.experiments.traces import TRACE_COLUMNS

__all__ = ["bts_red_settings", "run_bts_red_continuous", "run_bts_red_table"]

_SETTING_KEYS = ("batch_budget", "n_min", "n_max", "beta_var", "n_init", "n_candidates", "kind")


def bts_red_settings(options: dict[str, Any], alpha: float) -> BTSRedSettings:
    """The algorithm's settings from a method's options (:func:`parse_method`) and alpha."""
    return BTSRedSettings(alpha=float(alpha),
                          **{k: options[k] for k in _SETTING_KEYS if k in options})


def _meta(st: BTSRedSettings, algo: BTSRed, batches: int, k_init: int) -> dict[str, Any]:
    return {"k_init": int(k_init), "batch_budget": st.batch_budget, "n_min": st.n_min,
            "n_max": st.max_replications, "beta_var": st.beta_var, "batches": int(batches),
            "last_r2": algo.last_r2}


def run_bts_red_table(
    task: ReplayTask, method: MethodSpec, repetition: int, settings: Any, rep_seed: int,
    progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any], list[int]]:
    """One repetition of ``bts-red`` replayed on a table.

    Returns
    -------
    (pandas.DataFrame, dict, list of int)
        The trace (``TRACE_COLUMNS``), the peer's metadata (``k_init`` first) and the initial
        design's row ids.
    """
    st = bts_red_settings(method.options, settings.alpha)
    user = settings.protocol == "user"
    replay = SeedReplay(task, settings.seed, repetition)
    C = np.asarray(task.space.candidates_unit())  # (N, dim)
    algo = BTSRed(st, rep_seed)
    budget, mv, mv_star = int(settings.budget), task.mv, task.mv_star
    rows: list[list[Any]] = []
    entry_row: list[int] = []  # batch entry -> table row
    cum, used, rnd = 0.0, 0, 0

    def record(cid: int, seeds: list[int], inc: int, prev: int | None, reason: str) -> None:
        nonlocal cum, rnd
        rnd += 1
        for j, s in enumerate(seeds):
            last = j == len(seeds) - 1
            inc_j = inc if last or prev is None else prev
            cum += mv_star - mv[cid]
            rows.append([len(rows) + 1, rnd, cid, s, len(seeds), mv[cid], inc_j, mv[inc_j],
                         mv_star - mv[inc_j], cum, reason if last else ""])
        if progress is not None:
            progress(len(seeds))

    n_init = int(settings.n_init or st.n_init)
    k_init = int(settings.k_init or st.n_min)
    design = [int(i) for i in task.space.sobol_indices(min(n_init, task.n_configs), rep_seed)]
    inc: int | None = None
    for cid in design:
        k = min(k_init, budget - used) if user else k_init
        if k < 1:
            break
        vals, seeds = replay.draw(cid, k)
        algo.tell(C[cid], vals)
        entry_row.append(cid)
        if user:
            prev, inc = inc, entry_row[algo.sample_mv_best()]
            record(cid, seeds, inc, prev, "initial")
            used += len(vals)
    inc = entry_row[algo.recommend()]
    batches = 0
    while used < budget:
        cap = np.array([replay.remaining(i) for i in range(task.n_configs)])  # (N,)
        if not (cap >= st.n_min).any():
            break  # every row's seeds are used up
        batch = algo.propose(C, budget - used, cap)
        done = []
        for e in batch:
            vals, seeds = replay.draw(e.index, e.n)
            algo.tell(C[e.index], vals)
            entry_row.append(e.index)
            done.append((e.index, seeds, e.reason))
            used += len(vals)
        batches += 1
        prev, inc = inc, entry_row[algo.recommend()]  # the models after the batch
        for j, (cid, seeds, reason) in enumerate(done):
            record(cid, seeds, inc if j == len(done) - 1 else prev, prev, reason)
    trace = pd.DataFrame(rows, columns=list(TRACE_COLUMNS))
    return trace, _meta(st, algo, batches, k_init), design


def run_bts_red_continuous(
    task: Any, options: dict[str, Any], budget: int, alpha: float, rep_seed: int,
    stream: Callable[[int], int], rec: Any, progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One repetition of ``bts-red`` on a continuous task; ``rec`` is the continuous
    benchmark's :class:`~erahbo.experiments.continuous_peers.TraceRecorder`."""
    st = bts_red_settings(options, alpha)
    space = task.space
    algo = BTSRed(st, rep_seed)
    rng = np.random.default_rng([int(rep_seed), 41])
    labels: dict[int, int] = {}  # trace config id -> seed labels used
    entry_id: list[int] = []  # batch entry -> trace config id
    used, rnd = 0, 0

    def run(config: dict[str, Any], n: int) -> tuple[int, list[int]]:
        cid = rec.config_id(config)
        start = labels.get(cid, 0)
        seeds = list(range(start, start + n))
        labels[cid] = start + n
        vals = task.sample(config, [stream(s) for s in seeds])
        algo.tell(space.encode(config), vals)
        entry_id.append(cid)
        if progress is not None:
            progress(n)
        return cid, seeds

    inc: int | None = None
    for u in space.sobol_unit(st.n_init, int(rng.integers(2**31))):
        n = min(st.n_min, budget - used)
        if n < 1:
            break
        cid, seeds = run(space.decode(u), n)
        used += n
        prev, inc = inc, entry_id[algo.sample_mv_best()]
        rnd += 1
        rec.add(rnd, cid, seeds, inc, prev, k_round=n, last_reason="initial")
    inc = entry_id[algo.recommend()]
    batches = 0
    while used < budget:
        seen = np.unique(np.round(algo.inputs, 12), axis=0)
        C = np.vstack([space.sobol_unit(st.n_candidates, int(rng.integers(2**31))), seen])
        batch = algo.propose(C, budget - used)
        done = []
        for e in batch:
            cid, seeds = run(space.decode(C[e.index]), e.n)
            done.append((cid, seeds, e.reason))
            used += e.n
        batches += 1
        prev, inc = inc, entry_id[algo.recommend()]
        for j, (cid, seeds, reason) in enumerate(done):
            rnd += 1
            rec.add(rnd, cid, seeds, inc if j == len(done) - 1 else prev, prev,
                    k_round=len(seeds), last_reason=reason)
    return rec.frame(), _meta(st, algo, batches, st.n_min)
