"""The failure mode's prior: a configuration's chance of a run that never learns, pooled from
its neighbours, in the variance GP's observations (an erahbo option, issue 37).

RL returns are often a mixture: runs that never learn sit on the environment's floor (an atom:
MountainCar's -200, Acrobot's -500), the others learn. A configuration that fails in 11 % of
its seeds shows no failure in 10 seeds a third of the time; its sample variance then reads
the learning mode alone, the variance GP believes it, and at a high ``alpha`` the study
recommends a configuration whose true spread is three times its sample variance (the PPO
MountainCar surrogate, ``docs/results/one_seed_models``, sessions 39-51). No bound on the
configuration's own runs sees a failure its runs never showed.

``failure_prior_runs`` gives each configuration's failure probability a Beta prior from its
neighbours' failures (kernel weights with the mean GP's lengthscales, at most that many
pseudo-runs), and the variance GP observes the mixture's variance at the posterior mean
(:func:`erahbo.gp.failure_mode.failure_variances`); the well-sampled rule of the recommender
reads the same observations. Returns without an atom at their lowest value (at least 5 % of
the runs there) are left as they are: normal or skewed returns never change. 0 (the default
on every space and under both presets): off.

Not a default: on the continuous benchmark it finds PPO MountainCar's needle at alpha 10 (IQM
regret after 50 / 100 / 200 runs 0.500 / 0.825 / 1.271 -> 0.010 / 0.010 / 0.012 and 0.113 /
1.235 / 2.049 -> 0.010 on two repetition sets) but costs on PPO Acrobot after 50 runs at every
alpha (its sample variances of 1e-4 read tens of times larger next to configurations that never
learn), and per task it leaves more entries short than the default (docs/results/
one_seed_models, sessions 51-52; a GP classifier of the failures with its own lengthscales
measured no better, session 52).

A part of a strategy (:mod:`erahbo.optimizer.strategy`, listed in
:mod:`erahbo.optimizer.parts`); the code that reads it is
:meth:`erahbo.optimizer.rounds.RoundModels.variances` (every model of a round, its fit and the
kriging believer).
"""

from __future__ import annotations

from typing import Any

from erahbo.validation import Param, real_above

__all__ = ["PARAMS", "check"]

#: The option (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("failure_prior_runs", float,
          real_above(0.0, False, " (pseudo-runs of the neighbours' failure share, e.g. 4; "
                                 "0: off)"),
          default=0.0, paper=0.0, absent=0.0,
          help="Weight, in pseudo-runs, of the neighbours' failures (runs on the study's "
               "lowest return, when at least 5 % of the runs sit there) in a configuration's "
               "failure probability; the variance GP then observes the mixture's variance, "
               "so a configuration whose seeds have not failed yet next to ones that do is "
               "not read as reliable (0: off; docs/results/one_seed_models, session 51).",
          short="fp", label="failure prior {}", form="fp<runs>"),
)


def check(o: Any, given: set[str]) -> None:
    """Refuse the option for random search (no models)."""
    if "failure_prior_runs" in given and o.failure_prior_runs and o.method == "random":
        raise ValueError(
            f"failure_prior_runs={o.failure_prior_runs!r} feeds the variance GP, and "
            "method='random' has no models; drop failure_prior_runs, or use a model-based "
            "method ('erahbo', 'rahbo', 'gpucb')")
