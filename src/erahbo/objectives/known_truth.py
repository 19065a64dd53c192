"""Known-truth continuous tasks of the continuous benchmark, by name.

Every task is a :class:`~erahbo.objectives.synthetic.SyntheticTask`: exact ``f``, ``rho2``,
``MV``, ``MV*`` and the mean MV under uniform sampling of its space, so the regret of any
recommendation is known and normalized as ``(MV* - MV(rec)) / (MV* - mean uniform MV)``; the
same for any risk measure of :mod:`erahbo.risk` (``task.value(x, CVaR(q=0.1))``,
``value_max``, ``value_uniform_mean``, ``regret_norm(x, measure=...)``): Gaussian returns
(``readme``, ``figure1``, ``branin``) have the measure's Gaussian value, the surrogates' mixture
its exact tail (:func:`~erahbo.objectives.surrogate_model.mixture_tail_mean`).

====================  ======================================================================
name                  task
====================  ======================================================================
``surr-<table>``      :class:`~erahbo.objectives.surrogate.TableSurrogate` of a real table
                      (``data/arlbench/<table>.parquet``, stored fit), the eight
                      :data:`SURROGATE_TABLES`; min-max scale
``readme``            :class:`ReadmeTask`: the objective of the README's example, as written
``figure1``           :class:`~erahbo.objectives.synthetic.Figure1Task`
``branin``            :class:`~erahbo.objectives.synthetic.HeteroscedasticBranin`
====================  ======================================================================

Left out: the bowls of ``benchmarks/robustness_study.py``. The ``outliers`` bowl (a return of
``-1e6`` with probability 0.05) has no clean MV truth: the variance of the mixture,
``0.0475 (b(x) + 1e6)^2`` for a bowl value ``b(x)``, falls as ``b`` falls, so its exact MV is
highest at the *worst* point of the bowl (the study measures its recommendation on the clean
part instead). The ``failures`` bowl has a clean truth (the failure probability is the same
everywhere) but raises, and the peers would need a failure protocol of their own.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from erahbo.objectives.synthetic import Figure1Task, HeteroscedasticBranin, SyntheticTask
from erahbo.risk import RiskMeasure
from erahbo.space import SearchSpace

__all__ = ["KNOWN_TASKS", "SURROGATE_TABLES", "ReadmeTask", "make_task", "task_names"]

SURROGATE_TABLES = (
    "dqn_cc_acrobot", "dqn_cc_cartpole", "dqn_cc_mountain_car", "ppo_cc_acrobot",
    "ppo_cc_cartpole", "ppo_cc_continuous_mountain_car", "ppo_cc_mountain_car",
    "ppo_cc_pendulum",
)
KNOWN_TASKS = ("readme", "figure1", "branin")


class ReadmeTask(SyntheticTask):
    """The README's example objective ("Use it from Python"), as written::

        rng = random.Random(seed)
        good = -abs(math.log10(config["lr"]) + 3.0)
        return good + (0.5 if config["act"] == "relu" else 0.0) \\
            + rng.gauss(0, 0.1 + config["batch"] / 512)

    on ``lr`` log-uniform in ``[1e-5, 1e-1]``, ``gamma`` in ``[0.9, 0.9999]`` (irrelevant),
    ``batch`` an integer in ``[16, 256]``, ``act`` in ``{tanh, relu}``. So
    ``f = -|log10 lr + 3| + 0.5 [act = relu]`` and ``rho2 = (0.1 + batch / 512)^2``, and
    ``MV* = 0.5 - alpha (0.1 + 16 / 512)^2`` at ``lr = 1e-3``, relu, ``batch = 16`` (exact).
    The noise draw depends on the seed only, as written: two configurations run with the same
    seed share their standard-normal draw (common random numbers).
    """

    name = "readme"
    domain = "known-truth"

    def __init__(self) -> None:
        super().__init__(common_random_numbers=True)
        self.space = SearchSpace({"lr": ("log", 1e-5, 1e-1), "gamma": ("float", 0.9, 0.9999),
                                  "batch": ("int", 16, 256), "act": ("cat", ["tanh", "relu"])})
        self._relu = self.space.to_json()["hyperparameters"][3]["choices"].index("relu")

    def _values(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        V = self.space._values(self.space.project(U))  # (n, 4): lr, gamma, batch, act index
        return V[:, 0], V[:, 2], V[:, 3] == self._relu

    def _f(self, U: np.ndarray) -> np.ndarray:
        lr, _, relu = self._values(U)
        return -np.abs(np.log10(lr) + 3.0) + 0.5 * relu

    def _rho2(self, U: np.ndarray) -> np.ndarray:
        _, batch, _ = self._values(U)
        return (0.1 + batch / 512.0) ** 2

    def _search(self, measure: RiskMeasure) -> np.ndarray:
        # the highest mean and the lowest variance at once: the optimum of every measure
        # (each is increasing in f and non-increasing in rho2)
        return self.space.encode({"lr": 1e-3, "gamma": 0.95, "batch": 16, "act": "relu"})

    def sample(self, config: dict[str, Any], seeds: Sequence[int]) -> list[float]:
        """The README objective's returns, exactly as written (``random.Random(seed)``)."""
        c = self.space.decode(self.space.encode(config))
        good = -abs(math.log10(c["lr"]) + 3.0) + (0.5 if c["act"] == "relu" else 0.0)
        return [good + random.Random(int(s)).gauss(0, 0.1 + c["batch"] / 512) for s in seeds]


def task_names(spec: str) -> list[str]:
    """Task names of a ``--tasks`` value: comma-separated names, or the groups ``all``,
    ``surrogates`` (the eight ``surr-<table>``) and ``known`` (readme, figure1, branin)."""
    out: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part in ("all", "surrogates"):
            out += [f"surr-{t}" for t in SURROGATE_TABLES]
        if part in ("all", "known"):
            out += list(KNOWN_TASKS)
        if part not in ("all", "surrogates", "known"):
            out.append(part)
    seen: list[str] = []
    for n in out:
        if n not in seen:
            seen.append(n)
    if not seen:
        raise ValueError("--tasks is empty; give e.g. surrogates,known or "
                         "surr-ppo_cc_acrobot,readme")
    return seen


def make_task(name: str, data_dir: str | Path | None = None) -> SyntheticTask:
    """The task called ``name`` (see the module docstring); ``data_dir``: the real tables of
    the surrogates (default ``data/arlbench``)."""
    if name.startswith("surr-"):
        from erahbo.objectives.surrogate import DEFAULT_DATA, TableSurrogate

        return TableSurrogate.bundled(name[len("surr-"):], data_dir or DEFAULT_DATA)
    makers = {"readme": ReadmeTask, "figure1": Figure1Task, "branin": HeteroscedasticBranin}
    if name not in makers:
        raise ValueError(f"unknown task {name!r}; known: {', '.join(KNOWN_TASKS)}, "
                         f"surr-<table> ({', '.join(SURROGATE_TABLES)}), or the groups all, "
                         "surrogates, known")
    task = makers[name]()
    task.domain = "known-truth"  # type: ignore[attr-defined]
    return task
