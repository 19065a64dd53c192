"""The sweeper's config, registered as ``hydra/sweeper: erahbo`` (Hydra imports this module
when it scans the ``hydra_plugins`` namespace; it must stay light: the strategy parts'
declarations import numpy, nothing heavier). No ``from __future__ import annotations`` here:
Hydra loads this module outside ``sys.modules``, where dataclasses cannot resolve string
annotations)."""

from dataclasses import dataclass, field, make_dataclass
from typing import Any

from hydra.core.config_store import ConfigStore

from erahbo.optimizer.parts import HOST_PARAMS


@dataclass
class _SweeperKeys:
    """The sweeper's own keys (docs/integrations/hydra.md explains each one)."""

    _target_: str = "hydra_plugins.erahbo_sweeper.erahbo_sweeper.ErahboSweeper"
    # erahbo's dict spec ({name: [type, lo, hi]}), Hypersweeper's {hyperparameters: {name:
    # {type: uniform_float, ...}}}, or a path to a ConfigSpace/erahbo JSON or YAML file
    search_space: Any = None
    # training runs (jobs) in all, initial design included; None: 100, or from Hypersweeper's
    # n_trials x len(seeds) (see _hypersweeper.py for budget with budget_variable)
    budget: Any = None
    method: str = "erahbo"  # erahbo | rahbo | gpucb | random
    alpha: float = 1.0  # risk aversion in MV = f - alpha rho^2
    preset: str = "default"  # default (erahbo's defaults) | paper (the paper's settings)
    beta: Any = None  # None: the preset's (beta, beta_stop, k_min, n_init, k_init)
    beta_stop: Any = None
    k_min: Any = None
    k_max: Any = None  # None: the preset's (20, the paper's)
    k: Any = None  # seeds per round of rahbo / gpucb / random (None: 5, or len(seeds))
    n_init: Any = None
    k_init: Any = None
    seed: int = 0  # seed of the optimizer (not of the training runs)
    seed_keyword: Any = None  # task config key receiving each run's training seed (None: seed)
    # False: the task returns a cost; None: True, or Hypersweeper's False in a Hypersweeper
    # config (one with n_trials, sweeper_kwargs or budget_variable)
    maximize: Any = None
    n_parallel: Any = None  # configurations trained at once (None: 1, or max_parallelization's)
    seed_batch: int = 1  # erahbo: seeds launched at once after k_min
    failures: str = "penalize"  # penalize | exclude
    journal: Any = None  # default <sweep dir>/erahbo_journal.db
    warm_start: Any = None  # runs done before (any layout `erahbo dataset inspect` reads)
    # Hypersweeper's keys (ARLBench's configs switch with one line): translated, or refused
    # with the erahbo key to use (_hypersweeper.py, docs/integrations/hydra.md)
    n_trials: Any = None
    sweeper_kwargs: Any = None
    budget_variable: Any = None
    loading_variable: Any = None
    saving_variable: Any = None
    resume: Any = None
    opt_constructor: Any = None


# and a key per option of the strategy's parts, from their declarations (None: the preset's)
ErahboSweeperConf = make_dataclass(
    "ErahboSweeperConf", [(p.name, Any, field(default=None)) for p in HOST_PARAMS],
    bases=(_SweeperKeys,),
    namespace={"__module__": __name__,
               "__doc__": "Keys of ``hydra.sweeper``: the sweeper's own, then one per option "
                          "of the strategy's parts (erahbo.optimizer.parts.HOST_PARAMS)."})

ConfigStore.instance().store(
    group="hydra/sweeper", name="erahbo", node=ErahboSweeperConf, provider="erahbo"
)
