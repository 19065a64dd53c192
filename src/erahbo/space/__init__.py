"""The search space: hyperparameter kinds, the encoding the GPs see, ConfigSpace reading.

* :mod:`erahbo.space.search_space` — :class:`SearchSpace` (continuous, mixed, conditional, or a
  finite candidate table): encoding, decoding, Sobol designs, JSON;
* :mod:`erahbo.space.kinds` — the hyperparameter kinds and their conditions;
* :mod:`erahbo.space.reserved` — the names a hyperparameter may not take (result columns);
* :mod:`erahbo.space.configspace` — reading a ``ConfigSpace.ConfigurationSpace``.
"""

from __future__ import annotations

from erahbo.space.search_space import SearchSpace

__all__ = ["SearchSpace"]
