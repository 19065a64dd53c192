"""The ERAHBO sampler's optimizer, kept between trials and fed incrementally.

One :class:`erahbo.Optimizer` per sampler (per process) holds the study's data. A trial this
sampler proposes is one round of it: ``ask(kind=...)`` at the trial's start (the study counts
the rounds, the optimizer proposes), ``tell`` of its reported runs when it finishes (a round's
later seeds through the optimizer's own continuation asks), so the models are updated, not
rebuilt. The optimizer is rebuilt from the study (warm start of every finished trial) only
when it cannot take the new data this way: trials of the initial design, enqueued trials,
trials of other processes, a trial cut short by a crash, or a round the optimizer would have
continued or stopped differently (:meth:`Engine.sync` compares the runs it holds with those
of the trials finished since its last check). Only the optimizer's public API is used.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from optuna.trial import FrozenTrial

from erahbo.gp import GPHyper
from erahbo.integrations._optuna_space import Coder, config_key
from erahbo.integrations._optuna_trials import TrialIndex, study_records
from erahbo.optimizer import Optimizer, Trial
from erahbo.optimizer.host import check_options, whole_round_seeds
from erahbo.optimizer.options import hyper_json, hyper_of_json
from erahbo.optimizer.rounds import next_refit

__all__ = ["HYPER", "Engine", "bounds", "study_hyperparameters"]

MAX_PENDING = 256  # trials in flight per process (the optimizer's n_parallel)
HYPER = "erahbo_hyperparameters"  # study user attribute: the fitted GP hyperparameters
# (coder, records) -> (the GP hyperparameters, None: fit none; whether they are the study's
# final ones: False while the initial design is not in, so the optimizer is rebuilt later; the
# configurations at which they are refit, inf: never)
Hyper = Callable[[Coder, list[dict[str, Any]]],
                 "tuple[tuple[GPHyper, GPHyper] | None, bool, float]"]
Extra = dict[int, tuple[FrozenTrial, list[int], list[float | None]]]


@dataclass
class _Asked:
    """A running trial's round in the optimizer."""

    trial: Trial
    space_key: str


class Engine:
    """The kept optimizer and which of the study's trials it holds.

    Parameters
    ----------
    options : dict
        :class:`erahbo.Optimizer` options (``n_init``, ``warm_start``, ``n_parallel`` and
        ``hyperparameters`` are set here).
    min_runs : int
        Runs a configuration needs to be in the data (:attr:`Options.min_seeds`).
    """

    def __init__(self, options: dict[str, Any], min_runs: int) -> None:
        self.options = options
        self.min_runs = min_runs  # runs a configuration needs (1 or 2)
        self.opt: Optimizer | None = None
        self.key: str | None = None
        self.first: dict[str, int] = {}  # configuration key -> number of its first trial
        self.params: dict[str, dict[str, Any]] = {}  # configuration key -> its Optuna params
        self.k: dict[str, int] = {}  # configuration key -> runs held
        self.held: dict[int, tuple[Any, ...]] = {}  # trial number -> runs held by opt
        self.asked: dict[int, _Asked] = {}  # running trial number -> its round
        self.dirty = False
        self.sign = 1.0  # -1: a minimizing study (the optimizer maximizes)
        self.rebuilds = 0
        self.provisional = False  # the optimizer's hyperparameters are not the study's yet
        self.refit_at = math.inf  # configurations held at which the study refits them
        self._seen = (0, 0)  # (index epoch, finished trials of the index compared with held)
        self._view: tuple[tuple[Any, ...], Optimizer] | None = None  # (what it holds, view)

    def sync(self, index: TrialIndex, coder: Coder, hyper: Hyper, sign: float,
             extra: Extra | None = None) -> Optimizer | None:
        """The optimizer holding every finished trial of ``index`` (and ``extra``: trials
        finishing now, number -> (trial, seeds, runs)); rebuilt from them when it does not
        hold exactly those runs.

        ``hyper(coder, records)``: the study's GP hyperparameters (None: fit none), whether
        they are final (an optimizer built on provisional ones is rebuilt at every call) and
        the configurations at which they are refit (the optimizer is rebuilt then);
        ``sign``: -1 for a minimizing study."""
        if (self.opt is not None and not self.dirty and not self.provisional
                and self.key == coder.key and self._configs() < self.refit_at
                and self.sign == sign and self._holds(index)
                and all(self.held.get(n) == tuple(runs)
                        for n, (_, _, runs) in (extra or {}).items() if runs)):
            return self.opt  # (held trials not finished in storage yet are finishing now)
        self.sign = sign
        return self._rebuild(index, coder, hyper, extra)

    def _configs(self) -> int:
        """Configurations the optimizer holds with enough runs to be in its data."""
        return sum(1 for k in self.k.values() if k >= self.min_runs)

    def _holds(self, index: TrialIndex) -> bool:
        """Whether the optimizer holds the runs of the trials finished since the last check
        (a finished trial never changes: each is compared once)."""
        epoch, seen = self._seen
        if epoch != index.epoch:
            return False
        for n in index.order[seen:]:
            runs = index.done[n].runs
            if runs and self.held.get(n) != tuple(runs):
                return False
        self._seen = (epoch, len(index.order))
        return True

    def _rebuild(self, index: TrialIndex, coder: Coder, hyper: Hyper,
                 extra: Extra | None) -> Optimizer | None:
        trials = [d.trial for d in index.done.values()]
        records, self.first, self.held = study_records(trials, coder, extra, self.sign,
                                                       min_runs=self.min_runs,
                                                       foreign=index.foreign)
        params = {t.number: t.params for t in trials}
        params.update({n: t.params for n, (t, _, _) in (extra or {}).items()})
        self.params = {key: params[n] for key, n in self.first.items()}
        self.k = {config_key(r["config"]): len(r["returns"]) for r in records}
        self.key, self.asked, self.dirty, self.opt = coder.key, {}, False, None
        self._seen = (index.epoch, len(index.order))
        self.rebuilds += 1
        if not records:
            return None
        fitted, final, self.refit_at = hyper(coder, records)
        self.provisional = not final
        self.opt = self._warm(coder, records, fitted)
        return self.opt

    def _warm(self, coder: Coder, records: list[dict[str, Any]],
              hyperparameters: Any = None) -> Optimizer | None:
        """An optimizer warm-started from ``records`` (None: every one excluded or failed)."""
        given = {} if hyperparameters is None else {  # the study refits them (HYPER)
            "hyperparameters": hyperparameters, "refit_growth": 0.0}
        try:
            return Optimizer(coder.space, **{**self.options, **given, "n_init": 0,
                                             "warm_start": records, "n_parallel": MAX_PENDING})
        except ValueError as e:  # every configuration so far excluded or failed
            if "warm_start holds no configuration" not in str(e):
                raise
        return None

    def view(self, index: TrialIndex, coder: Coder) -> Optimizer:
        """An optimizer holding the finished trials of ``index``, for the ids and seed streams
        of configurations (:func:`erahbo.optimizer.host.seeds_for`): the kept one when it holds
        them, else one warm-started from them (no model fit; no data: an empty one), kept
        until the index changes."""
        if (self.opt is not None and not self.dirty and self.key == coder.key
                and self._holds(index)):
            return self.opt
        at = (index.epoch, len(index.order), coder.key)
        if self._view is None or self._view[0] != at:
            records, _, _ = study_records([d.trial for d in index.done.values()], coder, None,
                                          self.sign, self.min_runs, index.foreign)
            opt = self._warm(coder, records) if records else None
            self._view = (at, opt or Optimizer(coder.space, **self.options))
        return self._view[1]

    def ask(self, number: int, kind: str, coder: Coder) -> tuple[Trial, str, int] | None:
        """A new round of ``kind`` (a key of :data:`erahbo.optimizer.strategy.ROUND_KINDS`)
        for trial ``number``: the optimizer's trial, the round's phase (``"bo"``,
        ``"challenger"`` — a challenger round without a challenger is an acquisition round —
        or ``"random"``) and the seeds of the Optuna trial that runs the whole round
        (:func:`erahbo.optimizer.host.whole_round_seeds`). None when the optimizer proposes
        nothing, or would continue an open round instead (the caller rebuilds)."""
        opt = self.opt
        if opt is None:
            return None
        try:
            t = opt.ask(kind=kind)
        except RuntimeError:  # too many trials in flight: start over
            t = None
        r = None if t is None else opt.open_round(t.round)
        if r is None or r.k:  # no round, or an open round continued
            self.dirty = True
            return None
        self.asked[number] = _Asked(t, coder.key)
        phase = "random" if kind == "random" or opt.method == "random" else r.phase
        return t, phase, max(whole_round_seeds(opt, t, random_round=phase == "random"), 1)

    def annotations(self, coder: Coder, key: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """A finishing trial's user attributes (erahbo's view of its configuration ``key``:
        ``erahbo_config_id``, ``erahbo_k``, ``erahbo_recommended``, the MV estimate and bounds)
        and the study's recommendation (None: none shown yet), from the optimizer held."""
        opt = self.opt
        user: dict[str, Any] = {"erahbo_config_id": self.first.get(key),
                                "erahbo_k": self.k.get(key, 0)}
        rec_cfg = None if opt is None else opt.recommend()
        rec_key = None if rec_cfg is None else config_key(rec_cfg)
        user["erahbo_recommended"] = rec_key == key
        shown = rec_key is not None and rec_key in self.first
        got = bounds(opt, coder, [json.loads(key)] + ([rec_cfg] if shown else []), self.sign)
        user.update(got[0])
        if not shown:
            return user, None
        rec = {"trial": self.first[rec_key], "params": self.params.get(rec_key),
               "k": self.k.get(rec_key, 0), **got[1]}
        return user, {k.replace("erahbo_", ""): v for k, v in rec.items()}

    def seeds_left(self, coder: Coder, config: dict[str, Any]) -> float:
        """Seeds ``config`` may still get under the core's seed caps
        (:meth:`erahbo.Optimizer.seeds_left`; inf: not in the data, or no optimizer yet)."""
        opt = self.opt
        if opt is None or self.key != coder.key or opt.data.n == 0:
            return math.inf
        cid = opt.config_id_of(config)
        return opt.seeds_left(cid) if opt.data.row_of(cid) is not None else math.inf

    def drop(self, number: int) -> None:
        """Trial ``number`` will not run its asked round (its optimizer trial stays pending
        as a configuration in flight until the next rebuild)."""
        if self.asked.pop(number, None) is not None:
            self.dirty = True

    def tell(self, number: int, key: str, params: dict[str, Any],
             runs: list[float | None]) -> bool:
        """Tell trial ``number``'s runs to its round; False (and a rebuild later) when the
        optimizer cannot take them as they are."""
        a = self.asked.pop(number, None)
        if a is None or self.opt is None or a.space_key != self.key or not runs:
            self.dirty = self.dirty or a is not None
            return False
        vals = [math.nan if v is None else self.sign * float(v) for v in runs]
        t, told = a.trial, 0
        try:
            while True:
                chunk = vals[told: told + len(t.seeds)]
                self.opt.tell(t, chunk)
                told += len(chunk)
                if told >= len(vals):
                    break
                t = self.opt.ask()  # the round's next seed(s), if the optimizer goes on
                if t is None or t.round != a.trial.round:
                    self.dirty = True
                    return False
        except (ValueError, RuntimeError):
            self.dirty = True
            return False
        self.held[number] = tuple(runs)
        self.first.setdefault(key, number)
        self.params.setdefault(key, dict(params))
        self.k[key] = self.k.get(key, 0) + len(runs)
        return True


def bounds(opt: Optimizer | None, coder: Coder, configs: list[dict[str, Any]],
           sign: float) -> list[dict[str, Any]]:
    """``erahbo_mv``, ``erahbo_lcb_mv``, ``erahbo_ucb_mv`` of each of ``configs`` in the
    study's direction (None: no model yet): the core's
    :meth:`erahbo.Optimizer.bounds_at`."""
    names = ("erahbo_mv", "erahbo_lcb_mv", "erahbo_ucb_mv")
    if opt is None or opt.model_settings is None or not configs:
        return [dict.fromkeys(names) for _ in configs]
    out = []
    for vals in opt.bounds_at(configs):
        if sign < 0:  # minimizing: the measure of the negated values, its bounds swapped
            vals = (-vals[0], -vals[2], -vals[1])
        out.append({k: float(v) if math.isfinite(v) else None
                    for k, v in zip(names, vals, strict=True)})
    return out


def study_hyperparameters(study: Any, options: dict[str, Any], method: str,
                          n_init: int) -> Hyper:
    """The study's GP hyperparameters for :meth:`Engine.sync` (``options``: the sampler's)."""
    growth = check_options(**options).refit_growth

    def fitted(coder: Coder, records: list[dict[str, Any]]
               ) -> tuple[tuple[GPHyper, GPHyper] | None, bool, float]:
        """Fitted as the core fits them: on the data of the initial design (the first
        ``n_init`` configurations with data), then refit each time the configurations grew
        ``refit_growth``-fold (:func:`erahbo.optimizer.rounds.next_refit`; the core's refit,
        which keeps the stored ones unless the data favour the new), kept in the study with
        the configurations they were fitted on. Before the initial design is in (the
        estimates of the first trials' annotations) a provisional fit on the data so far,
        not kept."""
        if method == "random":
            return None, True, math.inf
        stored = study.user_attrs.get(HYPER)
        given = {}
        if stored and stored.get("space") == coder.key:
            kept = hyper_of_json(stored["hyper"])
            due = next_refit(growth, int(stored.get("n", n_init)))  # no "n": before refits
            if len(records) < due:
                return kept, True, due
            given = {"hyperparameters": kept, "refit_growth": 0.0}
        opt = Optimizer(coder.space, **{**options, "n_init": 0, "warm_start": records, **given})
        hyper = opt.fit_hyperparameters()  # a refit: the stored ones are the previous
        if len(records) < n_init:
            return hyper, False, math.inf
        study.set_user_attr(HYPER, {"space": coder.key, "hyper": hyper_json(hyper),
                                    "n": len(records)})
        return hyper, True, next_refit(growth, len(records))

    return fitted
