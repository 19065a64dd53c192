"""The hyperparameter refits: when a refit's lengthscales replace the ones in use, an erahbo
extension.

The paper fits both GPs' hyperparameters once, on the initial design (5 configurations x 2
seeds under erahbo's ``k_init = 2``); ``refit_every`` and ``refit_growth`` refit them later
(:class:`erahbo.optimizer.rounds.RoundModels`). On 5 configurations the MAP lengthscales are
close to the prior's mode, and on a continuous space that model can stay in use for the whole
study: on the README example its mean GP kept a lengthscale of 1.3 (unit cube) on ``log lr``
while the returns fall by 2 over that range, and it put a configuration with 5 seeds of
mean -1.03 at a posterior of -0.17 +- 0.08 (``docs/results/one_seed_models/``, "Session
25"). A plain refit fixes that, but on the real
tables (6 to 14 dimensions, most of them irrelevant) a refit on 10 to 40 configurations moves
lengthscales on noise as readily as on signal, and it cost regret there.

``refit_evidence`` (nats): at a refit each GP keeps its previous hyperparameters unless the new
MAP's log posterior on the current data beats theirs, on the same data, by at least this much
(:func:`erahbo.gp.fit.kept_hyper`). 0 is a plain refit (the behaviour of ``refit_every`` and
``refit_growth`` before the option). 3 nats is a posterior density ratio of 20, "strong" on
Jeffreys' scale: the new lengthscales must explain the data clearly better than the old ones.
Under a positive evidence a refit that models a constant (every lengthscale above
:data:`erahbo.gp.prior.FLAT_LENGTHSCALE`) is not used either: on a learn-or-fail task where most
configurations fail, such a refit stopped the search (``docs/results/one_seed_models/``,
"Session 26"). It acts only where the hyperparameters are refit.

A part of a strategy (:mod:`erahbo.optimizer.strategy`); the fit that reads it is
:func:`erahbo.gp.fit.fit_hyperparameters`.
"""

from __future__ import annotations

from typing import Any

from erahbo.validation import Param, real_above

__all__ = ["PARAMS", "check"]

#: The refit's option (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("refit_evidence", float,
          real_above(0.0, False, " (nats of log posterior a refit must gain to replace the "
                     "hyperparameters in use; 0: every refit replaces them)"),
          default=3.0, paper=0.0, absent=0.0,
          help="A refit of the GPs' hyperparameters (refit_every, refit_growth) replaces the "
               "ones in use only when it beats them on the current data by this many nats of "
               "log posterior (0: always; default: the preset's, 3 for erahbo).",
          short="ev", label="refit evidence {}", form="ev3",
          cli=False, hosts=False),  # like refit_every / refit_growth: a library option
)


def check(o: Any, given: set[str]) -> None:
    """Refuse a refit evidence of its own where nothing is refit (the preset's value passes:
    a journal's settings name every option)."""
    own = o.refit_evidence not in (PARAMS[0].default, PARAMS[0].paper)
    if "refit_evidence" in given and own and not (o.refit_every or o.refit_growth):
        raise ValueError(
            f"refit_evidence={o.refit_evidence!r} acts at a refit of the hyperparameters, and "
            "this study never refits them; give refit_growth (e.g. 2) or refit_every, or "
            "drop refit_evidence")
