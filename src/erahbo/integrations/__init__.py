"""Use erahbo inside the tuners RL practitioners already run (optional extras).

* :mod:`erahbo.integrations.optuna` (``pip install "erahbo[optuna]"``):
  :class:`~erahbo.integrations.optuna.ERAHBOSampler` and its pruner ``sampler.pruner``; one
  Optuna trial is one configuration, trained on the seeds ``trial_seeds(trial)`` with
  ``trial.report(value, step)``; ``recommended_trial(study)`` is erahbo's answer. Its private
  modules: ``_optuna_space`` (distributions), ``_optuna_trials`` (what the storage holds:
  seed claims, runs), ``_optuna_engine`` (the optimizer kept between trials).
* :mod:`erahbo.integrations.ray_tune` (``pip install "erahbo[tune]"``):
  :class:`~erahbo.integrations.ray_tune.ERAHBOSearch`, a Ray Tune searcher; one Tune trial is
  one training run (a configuration and a seed), like Tune's ``Repeater`` but with ERAHBO's
  adaptive number of seeds.

Importing this package imports neither Optuna nor Ray; import the submodule you use.
"""

__all__: list[str] = []
