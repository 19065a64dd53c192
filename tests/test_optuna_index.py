"""The sampler's incremental trial index answers what a scan of all the study's trials does."""

import pytest

optuna = pytest.importorskip("optuna")

from optuna.distributions import FloatDistribution  # noqa: E402
from optuna.trial import FrozenTrial, TrialState  # noqa: E402

from erahbo.integrations._optuna_space import Coder  # noqa: E402
from erahbo.integrations._optuna_trials import (  # noqa: E402
    CLAIM,
    OBJECTIVE_FAILED,
    ROUND_PHASES,
    TrialIndex,
    claim_of,
    used_seeds,
)

DISTS = {"x": FloatDistribution(0.0, 1.0)}
CODER = Coder(DISTS)
A, B = CODER.key_of({"x": 0.1}), CODER.key_of({"x": 0.5})


def trial(number, state, x=None, kind=None, seeds=(), reported=0, claim_from=None, **system):
    """A trial as a storage returns it: its claim (made by trial ``claim_from``, itself by
    default: a retried trial carries its original's), ``reported`` values at steps 0, 1, ..."""
    params = {} if x is None else {"x": x}
    attrs = dict(system)
    if kind is not None:
        attrs[CLAIM] = {"trial": number if claim_from is None else claim_from,
                        "config": None if x is None else CODER.key_of(params), "kind": kind,
                        "seeds": list(seeds), "params": params, "space": CODER.key}
    return FrozenTrial(number, state, None, None, None, params,
                       {n: DISTS[n] for n in params}, {}, attrs,
                       {s: 0.1 * (number + s) for s in range(reported)}, number)


def study_a():
    C, P, F, R, W = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL,
                     TrialState.RUNNING, TrialState.WAITING)
    return [
        trial(0, C, 0.1, "init", [0, 1], 2),
        trial(1, P, 0.5, "bo", range(10), 2),
        trial(2, F, 0.5, "challenger", range(2, 10), 1, **{OBJECTIVE_FAILED: 2}),
        trial(3, R, 0.5, "random", [10, 11], 1),
        trial(4, C, 0.1, reported=3),  # added without a claim (add_trial, an older study)
        trial(5, W),  # enqueued, not started
        trial(6, R, 0.1, "bo", [0, 1], 0, claim_from=1),  # a retry carries trial 1's claim
        trial(7, R, None, "bo", range(10), 0),  # drawn independently: no configuration yet
    ]


def check_against_a_scan(index, trials):
    for number in (0, 3, 6, 8, 20):
        want = sum(1 for t in trials if t.number < number
                   and (claim_of(t) or {}).get("kind") in ROUND_PHASES)
        assert index.rounds_before(number) == want
        for key in (A, B):
            for below in (None, number):
                earlier = [t for t in trials if below is None or t.number < below]
                assert index.used_seeds(key, number, CODER, below=below) == \
                    used_seeds(earlier, key, number, CODER), (number, key, below)
    assert index.reported() == sum(len(t.intermediate_values) for t in trials)


def test_the_index_answers_what_a_scan_of_every_trial_answers_as_trials_finish():
    trials = study_a()
    index = TrialIndex()
    index.update("s", trials)
    check_against_a_scan(index, trials)
    assert sorted(index.done) == [0, 1, 2, 4] and [t.number for t in index.running] == [3, 6, 7]
    # later: trial 3 finished with a second report, 5 started, 8 arrived; each read once
    trials[3] = trial(3, TrialState.COMPLETE, 0.5, "random", [10, 11], 2)
    trials[5] = trial(5, TrialState.RUNNING, 0.5, "bo", [12, 13], 0)
    trials.append(trial(8, TrialState.RUNNING, 0.1, "challenger", [2, 3], 1))
    index.update("s", trials)
    check_against_a_scan(index, trials)
    assert index.order == [0, 1, 2, 4, 3]
    assert index.done[2].runs == [0.2, None]  # failed in the objective: one failed run added


def test_the_index_starts_over_for_another_study():
    index = TrialIndex()
    index.update("s", study_a())
    epoch = index.epoch
    other = [trial(0, TrialState.COMPLETE, 0.5, "init", [0, 1], 2)]
    index.update("t", other)
    assert index.epoch == epoch + 1 and sorted(index.done) == [0]
    check_against_a_scan(index, other)
