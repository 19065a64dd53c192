"""`benchmarks/bound_setter.py` names the configuration behind a study's largest ``B_t``.

Rules: the script recomputes each BO round's ``B_t`` (eq. 10) from the round's own model,
``beta_stop`` and mask, and refuses to go on if it differs from the ``B_t`` the optimizer
recorded; on a continuous space erahbo's ``B_t`` comes from a configuration with 2 or more
seeds (``bound_min_seeds``), and no configuration's true regret is negative. One short study of
the README example (budget 40) is replayed; the checks hold on any trajectory.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bound_setter import one_study, truth
from readme_truth import mv_star


def test_the_setter_of_the_largest_bound_is_a_replicated_configuration():
    row = one_study(seed=0, budget=40, alpha=1.0)
    assert math.isfinite(row["bt_over"])
    assert row["k"] >= 2
    assert row["regret"] >= 0.0
    assert 0 < row["run"] <= 40


def test_truth_is_the_readme_objective():
    f, rho2 = truth({"lr": 1e-3, "act": "relu", "batch": 16, "gamma": 0.99})
    assert f == 0.5
    assert math.isclose(f - rho2, mv_star(1.0))
