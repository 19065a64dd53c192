"""How a starting trial of the ERAHBO sampler claims its configuration's seeds.

Workers on one storage share no lock: a trial writes its claim (:data:`~erahbo.integrations.
_optuna_trials.CLAIM`: configuration, seeds, parameters) and then re-reads the others'. Two
trials that decided at the same time, neither seeing the other's claim, can hold the same
configuration with overlapping seeds, or with parameters that differ in the last bits (two
proposals of one configuration key). :func:`settle` resolves this before the trial trains:

* another trial's claim of the configuration *prevails* when that trial is finished (the seeds
  it used), when its claim is settled, or when it has the lower number;
* a clash with a prevailing claim (a shared seed, other parameters) moves ours: the next
  seeds of the configuration's seed stream that no trial claimed, the parameters of the
  lowest-numbered prevailing trial; then re-read;
* a clash only with an unsettled claim of a higher-numbered trial is waited for (up to
  ``wait`` seconds): that trial re-reads after its write and either moves (it saw ours) or
  settles (then it prevails and ours moves);
* with no clash our claim is marked settled (``"settled": True``) and the trial trains.

Two settled claims never clash: of their last writes, the later one comes before its own
trial's last re-read, which saw the other claim as it stayed. Claims written before the
``"settled"`` mark existed count as settled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from erahbo.integrations._optuna_space import Coder
from erahbo.integrations._optuna_trials import (
    CLAIM,
    SEED_OFFSET,
    SEEDS,
    TrialIndex,
    claim_of,
    write_attrs,
)

__all__ = ["read", "settle", "wait_for_earlier_claims"]

POLL_S = 0.02  # seconds between two reads of the storage while waiting


def read(index: TrialIndex, study: Study) -> None:
    """Bring the trial index up to date with the storage."""
    index.update(study.study_name, study.get_trials(deepcopy=False))


def wait_for_earlier_claims(study: Study, trial: FrozenTrial, wait: float) -> None:
    """Wait (up to ``wait`` s) until the running trials with lower numbers, started in the
    last ``wait`` seconds, have claimed their seeds: they decide first."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        now = time.time()
        waiting = [t for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
                   if t.number < trial.number and claim_of(t) is None
                   and t.datetime_start is not None
                   and now - t.datetime_start.timestamp() < wait]
        if not waiting:
            return
        time.sleep(POLL_S)


def _trained_params(t: FrozenTrial, claim: dict[str, Any], coder: Coder | None) -> dict[str, Any]:
    """The modelled parameters a running trial trains: its own once suggested, else the
    enqueued ones, else its claim's."""
    names = [] if coder is None else list(coder.dists)
    for given in (t.params, t.system_attrs.get("fixed_params") or {}):
        if names and all(n in given for n in names):
            return {n: given[n] for n in names}
    return dict(claim.get("params") or {})


def settle(study: Study, trial: FrozenTrial, claim: dict[str, Any],
           pick: Callable[[set[int]], list[int]], coder: Coder | None, index: TrialIndex,
           wait: float) -> None:
    """Re-read the claims after writing ``claim`` (trial ``trial``'s) until no other trial's
    claim of its configuration clashes with it, then mark it settled (see the module
    docstring). Updates ``claim`` and the trial's attributes in place; ``pick(taken)``: the
    trial's seeds without ``taken`` (the core's seed stream of the configuration)."""
    mine, key = trial.number, claim["config"]
    own_params = claim.get("kind") != "given"  # an enqueued trial keeps its parameters
    deadline = time.monotonic() + wait
    for _ in range(1000):
        read(index, study)
        done, running = index.rivals(key, mine, coder)
        seeds = set(claim["seeds"])
        shared = seeds & done or any(seeds & set(c["seeds"]) for _, c in running)
        clashes = [(t, c) for t, c in running if seeds & set(c["seeds"]) or (
            own_params and _trained_params(t, c, coder) != claim.get("params"))]
        prevail = [(t, c) for t, c in clashes if c.get("settled", True) or t.number < mine]
        if not shared and not clashes:
            break
        if not prevail and not seeds & done and time.monotonic() < deadline:
            time.sleep(POLL_S)  # an unsettled later trial: it moves, or settles and prevails
            continue
        if shared:  # after every seed claimed
            claim["seeds"] = pick(done.union(*(c["seeds"] for _, c in running)))
        if own_params and clashes:  # the parameters of the first prevailing trial
            claim["params"] = _trained_params(*min(prevail or clashes,
                                                   key=lambda tc: tc[0].number), coder)
        write_attrs(study, trial, user={SEEDS: claim["seeds"], SEED_OFFSET: claim["seeds"][0]},
                    system={CLAIM: claim})
    claim["settled"] = True
    write_attrs(study, trial, system={CLAIM: claim})
