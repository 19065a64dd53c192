"""The one public interface hosts use: what a host that runs trials itself asks the core.

A host (the Optuna sampler, the Ray Tune searcher, the Hydra sweeper) decides nothing itself:
the options, the initial design, the seeds of a trial (how many and which), the end of a
round and the recommendation with its bounds come from the core's parts through these
functions and the read side of :class:`erahbo.Optimizer`
(:mod:`erahbo.optimizer.inspection`), the same answers the core's own study uses:

==============================================  ==========================================
question                                        answer
==============================================  ==========================================
are these options valid; their values           :func:`check_options` (as ``Optimizer``)
the settings a study stores                     :func:`settings_of_options`
configuration ``i`` of the initial design       :func:`initial_config`, :func:`design_points`
seeds of a trial that runs a whole round        :func:`whole_round_seeds` (``Rule.round_seeds``)
whether the bounds may end a round at ``n``     ``Optimizer.replication.decides(n)``
which seeds a configuration's trial trains      :func:`seeds_for` (``Optimizer.next_seeds``)
the recommendation's bounds at configurations   ``Optimizer.bounds_at``
==============================================  ==========================================

A host test (``tests/test_optuna_agreement.py``) checks that an Optuna study and an
:class:`erahbo.Optimizer` fed the same trials agree on these answers.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from erahbo.optimizer.inspection import settings_of
from erahbo.optimizer.options import Options
from erahbo.optimizer.records import Trial
from erahbo.optimizer.state import check_n_init, initial_design_of, seed_stream
from erahbo.space import SearchSpace

__all__ = ["check_options", "design_points", "initial_config", "seeds_for",
           "settings_of_options", "whole_round_seeds"]


def check_options(method: str = "erahbo", *, warm_start: bool = False,
                  **values: Any) -> Options:
    """The validated :class:`Options` of an optimizer given these options by name, checked as
    :class:`erahbo.Optimizer` checks them (:meth:`Options.build`; the initial design against
    the budget; ``n_init = 0`` only with a warm start). Raises TypeError / ValueError with
    the fix, as the optimizer would.

    Parameters
    ----------
    method : str
    warm_start : bool
        The study starts from a warm start (then ``n_init = 0`` is allowed).
    **values
        The options by name (:meth:`Options.names`).
    """
    opts = Options.build(None, method, values)
    if not (warm_start and opts.n_init == 0):
        check_n_init(opts.n_init)
        opts.check_budget(opts.n_init)
    return opts


def settings_of_options(opts: Options) -> dict[str, Any]:
    """The study settings of an optimizer with options ``opts``, without its space
    (:meth:`erahbo.Optimizer.study_settings` less ``"space"``)."""
    return settings_of(opts.settings_json(), opts.failure_policy)


def design_points(space: SearchSpace, n: int, seed: int) -> list[Any]:
    """The core's initial design of ``n`` configurations
    (:func:`erahbo.optimizer.state.initial_design_of`): encodings, or row indices on a finite
    table; ``[]`` for ``n = 0`` (as ``initial_design`` entries of :class:`erahbo.Optimizer`)."""
    if n <= 0:
        return []
    return [u if row is None else row for row, u in initial_design_of(space, None, n, seed)]


def initial_config(space: SearchSpace, n_init: int, seed: int, i: int) -> dict[str, Any]:
    """Configuration ``i`` (``0 <= i < n_init``) of the core's initial design, as the
    optimizer's ``i``-th initial trial runs it."""
    row, u = initial_design_of(space, None, n_init, seed)[i]
    return space.candidate_config(row) if row is not None else space.decode(u)


def whole_round_seeds(opt: Any, trial: Trial, random_round: bool = False) -> int:
    """Seeds of one host trial that runs the whole round ``trial`` opens (a pruner stops it
    early): :meth:`Rule.round_seeds` of the rule in force, from the trial's first seeds and
    those the seed caps leave its configuration (:meth:`erahbo.Optimizer.seeds_left`), up to
    the round's most seeds (:func:`erahbo.optimizer.rounds.round_most`)."""
    r = opt.open_round(trial.round)
    return opt.replication.round_seeds(len(trial.seeds), opt.seeds_left(trial.config_id),
                                       random_round=random_round,
                                       most=None if r is None else r.most)


def seeds_for(opt: Any, config_id: int | None, n: int, taken: Collection[int] = (), *,
              seed: int = 0) -> list[int]:
    """The ``n`` seeds of the next trial of configuration ``config_id`` of ``opt``: the next
    of its seed stream (:meth:`erahbo.Optimizer.next_seeds`; a configuration not asked yet:
    the id :meth:`~erahbo.Optimizer.config_id_of` gives it), skipping ``taken`` (seeds that
    other trials of it hold, e.g. other workers' running trials).

    ``opt`` None (no space, no data yet): the stream of a study's first configuration (id 0)
    under the study's ``seed``, as an empty optimizer gives it.
    """
    taken = set(taken)
    if opt is None:
        stream = seed_stream(seed, 0, n + len(taken))
    else:
        stream = opt.next_seeds(int(config_id), n + len(taken))
    return [int(s) for s in stream if s not in taken][:n]
