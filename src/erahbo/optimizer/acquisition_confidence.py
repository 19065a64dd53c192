"""The acquisition's confidence in the variance: eq. 8's ``LCB^var`` at its own ``beta``, an
erahbo option (off by default).

Eq. 8, ``UCB^f(x) - alpha * LCB^var(x)``, is optimistic about both GPs at one confidence,
``beta``. The paper's analysis keeps the two apart (``beta^f`` and ``beta^var``, appendix
"Finite-sample certificates"); its experiments use one. ``acquisition_beta_var`` sets the
confidence of ``LCB^var`` in eq. 8 alone; ``UCB^f``, eq. 19's ``UCB^var`` (the mean GP's
noise), the stopping rule (eqs. 9-12, ``beta_stop``) and the recommendation
(``recommend_beta``) keep theirs. None (the default, every preset): ``beta``, the paper's
acquisition.

Why an option: on a continuous space a variance GP that has seen few replicated
configurations is wide, and at ``beta = 2.5`` its lower bound makes every unexplored region
look nearly risk-free, so the search spends runs there before it spends them near good
configurations. At ``acquisition_beta_var = 1`` (one standard deviation) the continuous
benchmark is pooled level with the default (every alpha and checkpoint within 0.006) and below
the peers on more of its tasks, but the README example's ``B_t`` rises above the true optimum
in one of its five studies and the real tables do not gain (alpha 10 costs after 100 runs)
(``docs/results/one_seed_models/README.md``, sessions 43-44). So it is not a default.

A part of a strategy (:mod:`erahbo.optimizer.strategy`, listed in
:mod:`erahbo.optimizer.parts`); the code that reads it is eq. 8's
(:func:`erahbo.gp.bounds.rahbo_acquisition` and its gradient, ``beta_var``), through
:class:`erahbo.gp.round.RoundSettings`: every engine's acquisition, the screen's bounds and
the fast engine's ``select``.
"""

from __future__ import annotations

from typing import Any

from erahbo.validation import Param, real_above

__all__ = ["PARAMS", "check"]

#: The option (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("acquisition_beta_var", float,
          real_above(0.0, False, " or None (the confidence of eq. 8's LCB^var; None: beta)"),
          default=None, paper=None, absent=None,
          help="Confidence of the acquisition's lower bound of the variance alone (eq. 8's "
               "LCB^var, sqrt(value) standard deviations below the variance GP's mean; "
               "default: None, beta, the paper's). 1 is less optimistic about the spread of "
               "unexplored configurations (docs/results/one_seed_models, sessions 43-44).",
          short="abv", label="acquisition beta_var {}", form="abv1"),
)


def check(o: Any, given: set[str]) -> None:
    """Refuse the option for a method whose acquisition has no variance term."""
    if "acquisition_beta_var" in given and o.method in ("gpucb", "random"):
        raise ValueError(
            f"acquisition_beta_var={o.acquisition_beta_var!r} sets the confidence of eq. 8's "
            f"variance term, and method={o.method!r} has none (GP-UCB's acquisition is UCB^f, "
            "random search has no acquisition); drop acquisition_beta_var, or use "
            "method='erahbo' or 'rahbo'")
