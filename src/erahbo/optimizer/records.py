"""Records of a study: the trial handed to the user, the result, and their tables.

:class:`Trial` and :class:`Result` are public (``erahbo.Trial``, ``erahbo.Result``);
:class:`History` keeps the per-run and per-round rows the optimizer appends as it goes and
turns them into the result's tables.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from erahbo._data import Observations
from erahbo.datasets.long_format import HISTORY_BOOKKEEPING
from erahbo.gp import InnerBounds, RoundModel
from erahbo.optimizer.failure import COUNTED
from erahbo.optimizer.outcomes import tell_values
from erahbo.optimizer.state import StudyState
from erahbo.risk import RiskMeasure, measure_from_json

__all__ = [
    "FINAL",
    "HISTORY_COLUMNS",
    "ROUND_COLUMNS",
    "History",
    "Result",
    "Round",
    "Trial",
    "told_returns",
]

# history: one row per training run (config values go between config_id and seed); defined
# with the file formats, which read a history.csv back
HISTORY_COLUMNS = HISTORY_BOOKKEEPING
# run statuses shown in the history (a run still "running" or "interrupted" is not final)
FINAL = ("ok", "penalized", "retried", "failed")
# rounds: one row per round (initial-design configurations included)
ROUND_COLUMNS = ("iteration", "phase", "config_id", "k", "k_total", "ucb_mv", "lcb_mv", "B_t",
                 "beta_stop", "acquisition", "stop_reason", "mean", "var", "n_failed")


@dataclass
class Trial:
    """What to run next: a configuration and the seeds to train it with.

    Attributes
    ----------
    config : dict
        Hyperparameter values (inactive conditionals left out); on a finite table, the row.
        The trial's own copy: changing it changes nothing in the study (the history records
        the configuration the study asked for), and :func:`erahbo.optimize` hands every call
        of the objective a copy of its own.
    seeds : list of int
        Distinct positive seeds, one training run each.
    config_id : int
        Id of the configuration (finite table: its row index; otherwise the order of first
        evaluation).
    round : int
        Round number (initial-design configurations are rounds too).
    phase : str
        ``"init"`` or ``"bo"``.
    trial_id : int
        Running number of the trial.
    """

    config: dict[str, Any]
    seeds: list[int]
    config_id: int
    round: int
    phase: str
    trial_id: int
    u: np.ndarray = field(repr=False)


@dataclass
class Result:
    """Outcome of an optimization run.

    Attributes
    ----------
    incumbent : dict or None
        Recommended configuration: ``argmax LCB_MV`` (``beta``) over evaluated configurations.
    incumbent_id : int or None
        Its configuration id.
    incumbent_mv : float
        Posterior mean of ``MV`` at the incumbent, ``mu_f - alpha * mu_var`` (another risk
        measure, ``risk``: its value of the posterior means, :attr:`measure`).
    history : pandas.DataFrame
        One row per training run: ``iteration, phase, config_id, <hyperparameters>, seed,
        return, k`` (counted seeds of the configuration so far), ``k_round, wall_time`` (s from
        the start of the study to the end of the run), then how the run went: ``status``
        (``ok``; ``penalized``: failed, counted with the penalty in ``return``; ``retried``:
        failed, replaced by a retry with a new seed, not counted; ``failed``: failed under
        ``failures="exclude"``, not counted), ``error`` (type, message and traceback tail of a
        failed run, else None), ``attempt`` (0, or the retry number), ``worker`` (``host:pid``
        or None when the user ran the seed) and ``rerun`` (True: the run repeats, with the same
        seed, one cut by a crash of the study). ``return`` is NaN for runs not counted.
    rounds : pandas.DataFrame
        One row per round: ``iteration, phase`` (``"init"``, ``"bo"``, or ``"challenger"``
        for a challenger round: :mod:`erahbo.optimizer.challenger`), ``config_id, k`` (seeds
        used in the round), ``k_total`` (the configuration's seeds after it), ``ucb_mv,
        lcb_mv`` (the MV bounds at ``x_t`` after the round, at the stopping confidence
        ``beta_stop``: what the stopping rule compares with ``B_t``; under ``beta_stop = 0``,
        erahbo's default, the interval has no width and both are the posterior MV estimate),
        ``B_t`` (the best ``LCB_MV`` at ``beta_stop`` when the round started), ``beta_stop,
        acquisition, stop_reason, mean, var`` (of its ``k_total`` seeds; ``var`` NaN with one
        seed).
    configs : pandas.DataFrame
        One row per evaluated configuration, the everyday view of a study (as Optuna's
        ``trials_dataframe``): ``config_id``, hyperparameters, ``k`` (counted seeds), ``mean,
        std, var`` (sample statistics of its returns; ``std, var`` NaN with one seed),
        ``n_failed`` (failed runs), ``mv`` (posterior MV estimate ``mu_f - alpha * mu_var``;
        the study's risk measure's, :attr:`measure`),
        ``lcb_mv, ucb_mv`` (its bounds at the recommender's confidence,
        :mod:`erahbo.optimizer.recommender`; GP-UCB: of ``f``),
        ``rank`` (1: the incumbent; ``<NA>``: may not be recommended), ``rule`` (on the
        incumbent's row, how it was chosen: a key of
        :data:`erahbo.recommendation.RULES`). Rows in order of first evaluation;
        ``configs.sort_values("rank")`` ranks them (:func:`erahbo.recommendation.top_configs`).
    method : str
    n_evals : int
        Counted training runs (``ok`` and ``penalized``; what the budget counts).
    failures : str or None
        The failure policy of the study (None: non-finite returns were refused).
    settings : dict
        The study's options (``alpha``, ``beta``, ``beta_stop``, ``schedule``, ``k_min``,
        ``k_max``, ``stopping``, ...): :meth:`erahbo.Optimizer.study_settings` without the
        space and the warm-start runs.
    stopped : str or None
        Why the study stopped before its budget (``max_failures``), None otherwise.
    space : SearchSpace or None
        The study's search space (:func:`erahbo.diagnostics.diagnose` measures distances in
        it); None where a host built the result without one.

    Notes
    -----
    Failures per configuration: ``history.n_failed`` counts the failed runs (status other
    than ``ok``) of the run's configuration so far, ``rounds.n_failed`` those of the round,
    ``configs.n_failed`` those of the configuration.
    """

    incumbent: dict[str, Any] | None
    incumbent_id: int | None
    incumbent_mv: float
    history: pd.DataFrame
    rounds: pd.DataFrame
    configs: pd.DataFrame
    method: str
    n_evals: int
    failures: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    stopped: str | None = None
    space: Any = field(default=None, repr=False, compare=False)

    @property
    def measure(self) -> RiskMeasure:
        """The study's risk measure (:mod:`erahbo.risk`, from :attr:`settings`; MV for
        settings without ``risk``): ``incumbent_mv`` and the ``mv``, ``lcb_mv``, ``ucb_mv``
        columns are its estimate and bounds, in return units."""
        return measure_from_json({k: v for k, v in self.settings.items()
                                  if k in ("risk", "alpha", "c", "q") and v is not None})

    def explain(self) -> str:
        """One sentence on why the incumbent is recommended, naming the risk measure
        (:func:`erahbo.recommendation.explain_incumbent`; "" without one)."""
        from erahbo.recommendation import explain_incumbent

        if self.incumbent is None or not len(self.configs):
            return ""
        return explain_incumbent(self.configs, risk_neutral=self.method == "gpucb",
                                 measure=self.measure)


@dataclass
class Round:
    """State of an open BO round (the optimizer's bookkeeping)."""

    t: int
    config_id: int
    u: np.ndarray
    cand: int | None
    row0: int | None  # row of x_t in D_{t-1}
    rm: RoundModel | None
    B_t: float
    beta_stop: float
    acq: float
    k: int = 0
    ib: InnerBounds | None = None
    phase: str = "bo"  # "challenger": a challenger round (erahbo.optimizer.challenger)
    f_B: float = -math.inf  # ``one_seed_optimism``: rounds.one_seed_f_B (B_t's configuration's f)
    most: int | None = None  # the round's most seeds (rounds.round_most; None: the rule's k_max)


class History:
    """The rows of a study's history (one per training run) and rounds (one per round).

    Runs are kept as tuples ``(iteration, phase, config_id, config, seed, return, k, k_round,
    wall_time, status, error, attempt, worker, rerun)`` and turned into the result's tables by
    :meth:`history_frame` and :meth:`rounds_frame`.
    """

    def __init__(self) -> None:
        self.runs: list[tuple] = []
        self.rounds: list[dict[str, Any]] = []
        self.t_start = time.time()  # wall times count from here (journal: its creation)
        self.n_counted = 0  # counted runs (ok, penalized): what the budget counts
        self.n_ok = 0  # runs that returned a finite value
        self.first_error: str | None = None  # the first failed run's error, first line

    def note_failures(self, runs: Sequence[Any]) -> None:
        """Count the finished runs of an outcome and keep the first error seen."""
        for r in runs:
            if r.status == "ok":
                self.n_ok += 1
            elif r.status in FINAL and self.first_error is None and r.error:
                self.first_error = r.error.splitlines()[0]

    def check_alive(self, initial_design_done: bool) -> None:
        """Refuse to go on when every run of a complete initial design failed.

        (Without an initial design, a warm start: failures go through the policy instead.)
        """
        if initial_design_done and self.n_ok == 0 and self.first_error is not None:
            raise ValueError(
                f"optimize: every run of the initial design failed ({self.first_error}). The "
                "objective must return a finite float for at least some configurations: call "
                "it on one configuration and seed to debug it, then start a new study"
            )

    def add_run(self, head: tuple, seed: int, value: float, k: int, k_round: int,
                wall_time: float, status: str = "ok", error: str | None = None,
                attempt: int = 0, worker: str | None = None, rerun: bool = False) -> None:
        """One training run; ``head`` is ``(iteration, phase, config_id, config)``."""
        self.runs.append((*head, seed, value, k, k_round, wall_time, status, error, attempt,
                          worker, rerun))

    def add_told(self, head: tuple, vals: list[float], seeds: list[int], kept: list[float],
                 runs: Sequence[Any] | None, k_cfg0: int, k_round0: int, *,
                 in_budget: bool = True) -> None:
        """The runs of a told trial (all attempts when ``runs`` is given), and their counts.

        Without ``runs`` the user ran the seeds and reported finite returns; with ``runs``
        the finite ones were counted by :meth:`note_failures`. ``in_budget=False``: runs
        done before the study (a warm start), not counted in :attr:`n_counted`.
        """
        if runs is None:
            now = time.time() - self.t_start
            for j, (sd, v) in enumerate(zip(seeds, kept, strict=True)):
                self.add_run(head, sd, v, k_cfg0 + j + 1, k_round0 + j + 1, now)
            self.n_counted += len(kept)
            self.n_ok += len(kept)
            return
        kc = 0
        for r in sorted(runs, key=lambda r: (r.slot, r.attempt)):
            if r.status not in FINAL:
                continue
            counted = (r.status in COUNTED and r.slot < len(vals)
                       and math.isfinite(vals[r.slot]))
            kc += counted
            end = r.end if r.end is not None and math.isfinite(r.end) else time.time()
            self.add_run(head, int(r.seed), vals[r.slot] if counted else math.nan, k_cfg0 + kc,
                         k_round0 + kc, end - self.t_start, r.status, r.error, int(r.attempt),
                         r.worker, bool(r.rerun))
        self.n_counted += kc if in_budget else 0

    def add_round(self, d: Observations, t: int, phase: str, cid: int, k: int,
                  row: int | None, ib: InnerBounds | None, B_t: float, beta_stop: float,
                  acq: float, reason: str) -> None:
        """One round's row (``d``: the data, for the configuration's pooled statistics)."""
        mean, var, k_total = d.stats(row) if row is not None else (np.nan, np.nan, 0)
        var = var if k_total >= 2 else np.nan  # one seed: no sample variance (as in configs)
        self.rounds.append({
            "iteration": t, "phase": phase, "config_id": cid, "k": k, "k_total": k_total,
            "ucb_mv": ib.ucb_mv if ib else np.nan, "lcb_mv": ib.lcb_mv if ib else np.nan,
            "B_t": B_t, "beta_stop": beta_stop, "acquisition": acq, "stop_reason": reason,
            "mean": mean, "var": var,
        })

    def result(self, state: StudyState, models: Any, rec: tuple[int, float] | None,
               method: str, failures: Any, settings: dict[str, Any]) -> Result:
        """The :class:`Result` of a study: incumbent (``rec``: its data row and MV) and tables.

        ``models`` (:class:`erahbo.optimizer.rounds.RoundModels`) gives the configurations'
        MV bounds and ranks.
        """
        d, names = state.data, state.space.names
        cfgs = [state.config(c, d.U[i]) for i, c in enumerate(d.config_ids)]
        hist = self.history_frame(names)
        fails = hist.loc[hist["status"] != "ok", "config_id"].value_counts().to_dict()
        return Result(
            incumbent=None if rec is None else cfgs[rec[0]],
            incumbent_id=None if rec is None else d.config_ids[rec[0]],
            incumbent_mv=np.nan if rec is None else rec[1],
            history=hist,
            rounds=self.rounds_frame(hist),
            configs=models.configs_table(cfgs, fails),
            method=method,
            n_evals=self.n_counted,
            failures=None if failures is None else failures.mode,
            settings=settings,
            space=state.space,
        )

    def history_frame(self, names: list[str]) -> pd.DataFrame:
        """History table (columns :data:`HISTORY_COLUMNS`, hyperparameters after config_id)."""
        rows = [(t, ph, cid, *[cfg.get(nm) for nm in names], *rest)
                for (t, ph, cid, cfg, *rest) in self.runs]
        cols = [*HISTORY_COLUMNS[:3], *names, *HISTORY_COLUMNS[3:-1]]
        df = pd.DataFrame(rows, columns=cols)
        failed = (df["status"] != "ok").astype(np.int64)
        df["n_failed"] = failed.groupby(df["config_id"]).cumsum() if len(df) else failed
        return df.astype({"attempt": np.int64, "rerun": bool, "k": np.int64,
                          "k_round": np.int64, "n_failed": np.int64})

    def rounds_frame(self, history: pd.DataFrame) -> pd.DataFrame:
        """Rounds table (columns :data:`ROUND_COLUMNS`), in round order; ``n_failed`` from the
        ``history`` table."""
        rounds = pd.DataFrame(sorted(self.rounds, key=lambda r: r["iteration"]),
                              columns=list(ROUND_COLUMNS[:-1]))
        return _with_failures(rounds, history, "iteration")


def told_returns(trial: Trial, returns: Any, infeasible: bool) -> list[float]:
    """The returns of a tell as floats (None: a failed run, NaN): one per seed of ``trial``,
    fewer if cut short; at least one, except for an infeasible configuration. One number
    (not in a list) is taken for a trial of one seed only."""
    if len(trial.seeds) > 1 and not isinstance(returns, list | tuple | str | bytes) \
            and np.ndim(returns) == 0:
        raise ValueError(
            f"tell: trial {trial.trial_id} has {len(trial.seeds)} seeds {list(trial.seeds)} "
            f"and got one number ({returns!r:.40}); give a list with one return per seed, in "
            "the order of trial.seeds: [objective(trial.config, s) for s in trial.seeds] (a "
            "shorter list if the last runs were cut short)"
        )
    vals = tell_values(returns, trial.trial_id)
    if not (1 if not infeasible else 0) <= len(vals) <= len(trial.seeds):
        raise ValueError(
            f"tell: got {len(vals)} returns for {len(trial.seeds)} seeds; give one per seed "
            "(or fewer if the last runs were cut short, at least 1)"
        )
    return vals


def _with_failures(table: pd.DataFrame, history: pd.DataFrame, key: str) -> pd.DataFrame:
    """``table`` with ``n_failed``: failed runs (status other than ``ok``) per ``key`` value
    (``"iteration"``: per round)."""
    out = table.copy()
    counts = (history["status"] != "ok").groupby(history[key]).sum()
    out["n_failed"] = out[key].map(counts).fillna(0).astype(np.int64)
    return out
