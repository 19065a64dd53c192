"""Shared by this folder's scripts (session 55): the default study replayed to a number of runs,
its configurations scored by the truth, and a pick by ``argmax LCB^MV`` on a round model.

``benchmarks/`` goes on the path here (``recommendation_probe.replay_until`` replays a study of
the continuous benchmark run for run); run the scripts from the repository root with
``PYTHONPATH=src``.
"""
import sys
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import trim_mean

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until  # noqa: E402

from erahbo.experiments.continuous import task_truth  # noqa: E402
from erahbo.gp import make_round  # noqa: E402
from erahbo.gp.bounds import lcb_mv  # noqa: E402
from erahbo.objectives.known_truth import make_task  # noqa: E402


class Truth:
    """A task and its normalized MV regret at ``alpha``: ``(MV* - MV(c)) / (MV* - mean MV)``."""

    def __init__(self, name: str, alpha: float) -> None:
        self.task = make_task(name)
        self.alpha = alpha

    @cached_property
    def scale(self) -> tuple[float, float]:
        """``(MV*, MV* - mean MV under uniform sampling)``, computed when first asked."""
        t = task_truth(self.task, self.alpha)
        return t["mv_star"], t["mv_star"] - t["uniform_mv_mean"]

    def regret(self, config: dict[str, Any]) -> float:
        star, norm = self.scale
        return (star - self.task.mv(config, self.alpha)) / norm

    def f_var(self, config: dict[str, Any]) -> tuple[float, float]:
        """The true mean return and variance between seeds of ``config``."""
        f = self.task.mv(config, 0.0)
        return f, f - self.task.mv(config, 1.0)


def replayed(truth: Truth, s: int, runs: int, reps: Any) -> Iterator[tuple[int, Any, list, np.ndarray]]:
    """``(rep, optimizer, configs, regrets (n,))`` of the default study of set ``s`` replayed to
    ``runs`` runs, for each repetition in ``reps`` (an int: ``range(reps)``)."""
    for rep in (range(reps) if isinstance(reps, int) else reps):
        opt = replay_until(truth.task, "erahbo", truth.alpha, s, rep, runs)
        d = opt.data
        cfgs = [opt.state.config(c, u) for c, u in zip(d.config_ids, d.U, strict=True)]
        yield rep, opt, cfgs, np.array([truth.regret(c) for c in cfgs])


def lcb_pick(rm: Any, U: np.ndarray, reg: np.ndarray, ok: np.ndarray, alpha: float,
             beta: float) -> float:
    """The regret of ``argmax LCB^MV`` of round model ``rm`` over the rows ``ok`` of ``U``."""
    mf, sf, mv, sv = rm.predict(U)
    return best_of(lcb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var), reg, ok)


def best_of(score: np.ndarray, reg: np.ndarray, ok: np.ndarray) -> float:
    """The regret of the row of ``ok`` with the highest ``score``."""
    return float(reg[int(np.argmax(np.where(ok, score, -np.inf)))])


def rebuilt(opt: Any, ybar: np.ndarray, var_obs: np.ndarray) -> Any:
    """The study's round model rebuilt on other observations (reference engine, the study's
    hyperparameters)."""
    d = opt.data
    return make_round("reference", None, np.asarray(d.U, float), ybar, var_obs, d.k,
                      opt.models.settings, None)


def print_iqm(head: str, res: dict[str, list], finite: bool = False) -> None:
    """One line: ``head`` and each key's IQM (25 % trimmed mean; ``finite``: NaNs dropped)."""
    def iqm(v: list) -> float:
        a = np.asarray(v, float)
        return trim_mean(a[np.isfinite(a)] if finite else a, 0.25)
    print(head, " ".join(f"{key} {iqm(v):.3f}" for key, v in res.items()), flush=True)
