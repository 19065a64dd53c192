"""ERAHBO's stopping rule as an Optuna pruner (:class:`ERAHBOPruner`, ``sampler.pruner``).

After each reported seed of a trial, the pruner asks the replication rule in force whether
its bounds decide at this many seeds (:meth:`erahbo.optimizer.replication.Rule.decides`) and
then the sampler's optimizer for the stopping decision on the trial's configuration with the
returns reported so far (ERAHBO, eq. 12: ``UCB_MV(x; k) <= B_t`` after ``k_min`` seeds
rejects it), and records the decision in the trial's system attributes. Steps must be the
trial's seed indices (``trial_seeds``): anything else is refused with the fix. Used by
:mod:`erahbo.integrations.optuna` (the sampler makes it).
"""

from __future__ import annotations

import json
import math
from typing import Any

from optuna.pruners import BasePruner
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial

from erahbo.integrations._optuna_trials import MISUSE, claim_of, write_attrs

__all__ = ["ADAPTIVE", "DECISION", "ERAHBOPruner", "sign_of"]

DECISION = "erahbo:decision"  # trial system attribute: the stopping decision at the stop
ADAPTIVE = ("bo", "challenger", "given")  # round kinds whose seeds the rule may decide


def sign_of(study: Study) -> float:
    """-1.0 for a minimizing study (the optimizer maximizes), else 1.0."""
    return -1.0 if study.direction == StudyDirection.MINIMIZE else 1.0


class ERAHBOPruner(BasePruner):
    """ERAHBO's stopping rule as an Optuna pruner; made by :class:`ERAHBOSampler`.

    ``prune`` is True when the stopping rule rejects the configuration (``UCB_MV(x; k) <=
    B_t`` after ``k_min`` seeds) or its last seed failed (a NaN/inf report); a trial that
    trains all its seeds is never pruned. Steps other than the trial's seed indices raise
    ValueError with the fix.
    """

    def __init__(self, sampler: Any) -> None:
        self.sampler = sampler  # the ERAHBOSampler that made it (its claims, lock, optimizer)

    def prune(self, study: Study, trial: FrozenTrial) -> bool:
        sp = self.sampler
        claim: dict[str, Any] | None = sp._claims.get(trial.number) or claim_of(trial)
        steps = sorted(trial.intermediate_values)
        if claim is None or not steps:
            return False
        seeds = claim["seeds"]
        if steps != list(range(len(steps))) or len(steps) > len(seeds):
            _refuse_steps(study, trial, steps, seeds)
        vals = [trial.intermediate_values[s] for s in steps]
        n = len(vals)
        if not math.isfinite(vals[-1]):
            return True  # a failed run: the configuration is penalized or excluded
        adaptive = sp.rule.adaptive and claim["kind"] in ADAPTIVE  # the rule's rounds
        if n >= len(seeds) or not (adaptive and sp.rule.decides(n)) or claim["config"] is None:
            if n >= len(seeds) and adaptive:
                write_attrs(study, trial, system={DECISION: {"k": n, "reason": "k_max"}})
            return False
        with sp._lock:
            opt = sp._engine.opt
            if opt is None or sp._engine.key != claim.get("space"):
                return False
            reason, ucb, b_t = opt.stopping_decision(json.loads(claim["config"]),
                                                     [sign_of(study) * v for v in vals])
        if reason != "dominated":
            return False
        write_attrs(study, trial, system={DECISION: {
            "k": n, "reason": reason, "ucb_mv": ucb if math.isfinite(ucb) else None,
            "B_t": b_t if math.isfinite(b_t) else None}})
        return True


def _refuse_steps(study: Study, trial: FrozenTrial, steps: list[int], seeds: list[int]) -> None:
    """Record the misuse (the trial's reports are left out) and raise ValueError with the fix."""
    write_attrs(study, trial, system={MISUSE: {"trial": trial.number, "steps": steps[:6]}})
    raise ValueError(
        f"ERAHBOSampler: trial {trial.number} reported steps {steps[:6]}"
        f"{' ...' if len(steps) > 6 else ''}, but a step is the index of a seed, 0 .. "
        f"{len(seeds) - 1} for this trial: report each seed's final return once, e.g. "
        "for step, seed in enumerate(trial_seeds(trial)): trial.report(train(seed), step) "
        "(a learning curve per training iteration is not what ERAHBO reads); this trial's "
        "reports are left out"
    )
