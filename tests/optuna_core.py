"""An :class:`erahbo.Optimizer` fed an Optuna study's finished trials, built without the
sampler's code: the reference the Optuna tests compare the sampler's seeds and recommendation
with (the adapter must take them from the core, so both must agree)."""

from __future__ import annotations

import json
from typing import Any

from optuna.trial import FrozenTrial, TrialState

from erahbo.optimizer import Optimizer
from erahbo.optimizer.options import hyper_of_json

FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


def retry_callbacks() -> list[str]:
    """The names of Optuna's distinct retry callbacks (the tests that retry a failed or lost
    trial run once per name): RetryFailedTrialCallback (Optuna < 4.9) and its replacement
    RetryHeartbeatStaleTrialCallback. Where the old name is only the deprecated subclass of the
    new one that adds a warning to its ``__init__`` (Optuna 4.9 and later), it runs the same
    code as the new one, and only the new one is listed."""
    import optuna

    new = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback", None)
    old = getattr(optuna.storages, "RetryFailedTrialCallback", None)
    own = set(vars(old)) if old is not None else set()
    alias = (new is not None and old is not None and issubclass(old, new)
             and own <= {"__module__", "__doc__", "__qualname__", "__init__"}
             and ("__init__" not in own  # or the deprecation wrapper of new.__init__
                  or getattr(vars(old)["__init__"], "__wrapped__", None) is new.__init__))
    return [c.__name__ for c in (old, new) if c is not None and not (alias and c is old)]


def study_runs(trials: list[FrozenTrial]) -> list[dict[str, Any]]:
    """Each configuration's runs (pooled by parameters, in order of its first trial) as the
    user's objective ran them: the reported returns at steps 0, 1, ... with the trial's seeds
    (user attribute ``erahbo_seeds``; a trial without it: seeds 0, 1, ...), a trial that raised
    in the objective one failed run more (the seed after its reports)."""
    pooled: dict[str, dict[str, Any]] = {}
    for t in sorted(trials, key=lambda t: t.number):
        if t.state not in FINISHED or not t.intermediate_values:
            continue
        n = len(t.intermediate_values)
        raised = t.system_attrs.get("erahbo:objective_failed") == t.number
        seeds = list(t.user_attrs.get("erahbo_seeds") or range(n + raised))
        returns: list[float | None] = [t.intermediate_values[s] for s in range(n)]
        returns += [None] * raised
        rec = pooled.setdefault(json.dumps(t.params, sort_keys=True),
                                {"config": dict(t.params), "returns": [], "seeds": []})
        for seed, v in zip(seeds, returns, strict=False):
            if seed not in rec["seeds"]:
                rec["seeds"].append(int(seed))
                rec["returns"].append(v)
    return list(pooled.values())


def core_optimizer(space: dict[str, Any], study: Any, trials: list[FrozenTrial],
                   **options: Any) -> Optimizer:
    """An Optimizer with ``options`` holding the runs of ``trials`` (a warm start) and the
    study's GP hyperparameters (fitted once after the initial design) when it has them; no
    runs: an empty study."""
    stored = study.user_attrs.get("erahbo_hyperparameters")
    hyper = {} if not stored else {"hyperparameters": hyper_of_json(stored["hyper"])}
    runs = study_runs(trials)
    if not runs:  # an empty study
        return Optimizer(space, **options)
    return Optimizer(space, **{**options, "n_init": 0}, warm_start=runs, **hyper)
