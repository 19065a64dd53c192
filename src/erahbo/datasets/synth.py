"""Paper-shaped synthetic tasks: N Sobol configurations x S seeds of RL-like final returns.

Not real RL data: every task says so in its metadata (``synthetic=True``, ``domain=
"synthetic"``, ``generator="erahbo.datasets.synth"``) and carries a ``domain_like`` field
(``cc``, ``brax`` or ``xland``) so that reports can group it like the paper's tasks.

Generative model of one task (all random choices from one seed)
----------------------------------------------------------------
* Configurations: ``N`` scrambled Sobol points over an ARLBench-like space (PPO, DQN or
  SAC hyperparameters; the learning rate log-scaled), decoded to values.
* Quality ``q(x) in [0, 1]`` (how well a run learns when it does not collapse): too small
  a learning rate learns little (above the optimum quality declines only slowly), two other
  influential hyperparameters, random smooth bumps (ruggedness); calibrated so that about
  ``good_frac`` of the configurations are good, the best few sharing a plateau.
* Aggressiveness ``a(x) in [0, 1]``: the learning rate and one more hyperparameter (size
  of the updates). It is the risk-reward axis, as in real RL outcome tables:

  - beyond an onset ``a0`` a run *collapses* (ends at the worst return, ``low``) with a
    probability rising from ``f0 p_max`` to ``p_max`` (``p_max`` = 0.2-0.35 x
    ``spec.risk``); below ``a0`` configurations are reliable;
  - the success-mode return grows with ``a``: ``low + (high - low) (b + (1 - b) q s(a))``,
    ``b`` a random policy's level, ``s`` piecewise linear, 1 at ``a = 1``.

  ``a0`` is a quantile of ``a`` over the good configurations, so some of them are
  reliable and the others risky. The gain of ``s`` from ``a0`` to 1 is calibrated on the
  scale the benchmark uses (the task's Vizier output warping, alpha = 1): a top-quality
  configuration at a high quantile ``a_peak`` of ``a`` has a higher expected return than
  every reliable one, by a random 0.1-0.4 times its variance. So the best-mean
  configurations are risky (bimodal: most seeds train well, about 5-25 % collapse) and a
  slightly lower-mean reliable configuration is the MV optimum; ``spec.risk`` < 1 makes the
  trade-off mild, 0 removes it.
* Unstable pockets (``bimodal_frac``: large learning rates, the risk-reward
  hyperparameter, a random smooth term) also make middling configurations bimodal.
* Collapses are drawn per seed, stratified: the share of collapsed seeds of a
  configuration is its collapse probability up to rounding (the table shows the model's
  variance, not the luck of ``S`` draws; the replay's random draw order still gives an
  optimizer binomial-like samples).
* Successful runs get left-skewed noise (negated centred Gamma) whose scale varies
  smoothly over the space, grows with ``a`` and is largest for middling quality
  (heteroscedastic); returns are clipped to ``[low, high]`` (``high`` + 10 % unless capped;
  CartPole-like tasks pile up at the cap; XLand-like tasks snap small returns to 0).
* A few configurations with the most unstable hyperparameters fail (NaN) on some or all
  seeds (``nan_frac``), like the paper's infeasible configurations; the calibration uses
  the feasible ones only, as the benchmark does.

:func:`tradeoff_stats` measures the trade-off of any task the way the benchmark sees it
(rank and normalized MV regret of the best-mean configuration, mean-std correlation,
regret of 5-configuration Sobol initial designs); ``src/erahbo/data/README.md`` lists it
for the bundled suite and the 19 templates.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import qmc

from erahbo.datasets.format import TaskData, write_task
from erahbo.datasets.warping import VizierWarper

GENERATOR = "erahbo.datasets.synth"

# ARLBench-like spaces (the documented classic-control ranges, conditionals left out).
SPACES: dict[str, dict[str, tuple]] = {
    "ppo": {
        "learning_rate": ("log", 1e-6, 0.1),
        "ent_coef": ("float", 0.0, 0.5),
        "minibatch_size": ("cat", [128, 256, 512]),
        "gae_lambda": ("float", 0.8, 0.9999),
        "clip_eps": ("float", 0.0, 0.5),
        "vf_clip_eps": ("float", 0.0, 0.5),
        "normalize_advantage": ("cat", [True, False]),
        "vf_coef": ("float", 0.0, 1.0),
        "max_grad_norm": ("float", 0.0, 1.0),
    },
    "dqn": {
        "learning_rate": ("log", 1e-6, 0.1),
        "buffer_size": ("int", 1024, 100000),
        "buffer_batch_size": ("cat", [64, 128, 256]),
        "epsilon": ("float", 0.005, 0.5),
        "gradient_steps": ("int", 1, 10),
        "learning_starts": ("int", 0, 1024),
        "train_freq": ("int", 1, 128),
        "target_update_interval": ("int", 1, 1000),
        "buffer_prio_sampling": ("cat", [True, False]),
    },
    "sac": {
        "learning_rate": ("log", 1e-6, 0.1),
        "alpha": ("float", 0.01, 1.0),
        "tau": ("float", 0.01, 1.0),
        "buffer_size": ("int", 1024, 100000),
        "buffer_batch_size": ("cat", [64, 128, 256, 512]),
        "gradient_steps": ("int", 1, 10),
        "learning_starts": ("int", 0, 1024),
        "train_freq": ("int", 1, 128),
        "alpha_auto": ("cat", [True, False]),
    },
}


@dataclass(frozen=True)
class SynthSpec:
    """Template of one synthetic task.

    Attributes
    ----------
    algorithm : {"ppo", "dqn", "sac"}
        Which search space.
    domain_like, env_like : str
        The paper's domain (cc, brax, xland) and environment it imitates.
    low, high : float
        Worst and best achievable return.
    good_frac : float
        Share of configurations with high quality (difficulty: smaller is harder).
    bimodal_frac : float
        Share of configurations in unstable pockets (middling ones among them are bimodal:
        they learn or not); the NaN configurations are the most unstable.
    nan_frac : float
        Share of infeasible configurations (NaN on some seeds).
    noise : float
        Typical noise scale as a fraction of ``high - low``.
    cap : bool
        Returns pile up at ``high`` (CartPole-like); otherwise they may exceed it by 10 %
        of the range. Returns never go below ``low``.
    sparse : bool
        XLand-like: small returns snap to ``low`` (many exact zeros).
    risk : float
        Strength of the risk-reward trade-off (>= 0): scales the collapse probability of
        aggressive settings (and so, through the calibration, the return they gain).
        1 gives a strong trade-off (the best-mean configurations collapse on ~5-25 % of
        the seeds and are far from MV-optimal), 0.3 a mild one, 0 none.
    """

    algorithm: str
    domain_like: str
    env_like: str
    low: float
    high: float
    good_frac: float = 0.2
    bimodal_frac: float = 0.3
    nan_frac: float = 0.0
    noise: float = 0.06
    cap: bool = False
    sparse: bool = False
    risk: float = 1.0

    def __post_init__(self) -> None:
        if self.algorithm not in SPACES:
            raise ValueError(
                f"SynthSpec: algorithm {self.algorithm!r} is unknown; use one of {sorted(SPACES)}."
            )
        if not (np.isfinite(self.low) and np.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"SynthSpec: need finite low < high, got {self.low}, {self.high}.")
        if not 0.0 < self.good_frac <= 1.0:
            raise ValueError(f"SynthSpec: good_frac={self.good_frac} must be in (0, 1].")
        for key in ("bimodal_frac", "nan_frac"):
            if not 0.0 <= getattr(self, key) <= 1.0:
                raise ValueError(f"SynthSpec: {key}={getattr(self, key)} must be in [0, 1].")
        for key in ("noise", "risk"):
            if not getattr(self, key) >= 0.0:
                raise ValueError(f"SynthSpec: {key}={getattr(self, key)} must be >= 0.")

    @property
    def name(self) -> str:
        """Task name, ``synth_<algorithm>_<domain>_<environment>``."""
        return f"synth_{self.algorithm}_{self.domain_like}_{self.env_like}"


# The paper's 19 algorithm-environment pairs (Appendix C), ordered so that any prefix
# mixes domains and algorithms; NaN shares follow the paper's infeasible counts.
PAPER_LIKE: tuple[SynthSpec, ...] = (
    SynthSpec("ppo", "cc", "pendulum", -1500.0, -150.0, 0.25, 0.3, nan_frac=18 / 512),
    SynthSpec("dqn", "cc", "cartpole", 0.0, 500.0, 0.3, 0.4, noise=0.08, cap=True),
    SynthSpec("ppo", "brax", "halfcheetah", -600.0, 5000.0, 0.15, 0.35, nan_frac=182 / 512),
    SynthSpec("ppo", "xland", "door_key", 0.0, 1.0, 0.05, 0.5, noise=0.1, cap=True, sparse=True),
    SynthSpec("sac", "cc", "pendulum", -1500.0, -140.0, 0.35, 0.2, noise=0.05),
    SynthSpec("ppo", "cc", "acrobot", -500.0, -65.0, 0.3, 0.3, risk=0.3),
    SynthSpec("sac", "brax", "fast", -200.0, 3000.0, 0.2, 0.3, noise=0.08),
    SynthSpec("dqn", "xland", "four_rooms", 0.0, 1.0, 0.04, 0.5, noise=0.12, cap=True, sparse=True),
    SynthSpec("ppo", "cc", "continuous_mountain_car", -60.0, 95.0, 0.15, 0.45, nan_frac=48 / 512),
    SynthSpec("dqn", "cc", "acrobot", -500.0, -70.0, 0.25, 0.3),
    SynthSpec("ppo", "brax", "fast", -200.0, 3500.0, 0.2, 0.3, noise=0.07),
    SynthSpec(
        "ppo", "xland", "empty_random", 0.0, 1.0, 0.1, 0.4, noise=0.08, cap=True, sparse=True
    ),
    SynthSpec("ppo", "cc", "cartpole", 0.0, 500.0, 0.35, 0.35, noise=0.07, cap=True, risk=0.3),
    SynthSpec("sac", "brax", "halfcheetah", -600.0, 6000.0, 0.2, 0.25, noise=0.07),
    SynthSpec(
        "dqn", "xland", "empty_random", 0.0, 1.0, 0.08, 0.45, noise=0.1, cap=True, sparse=True
    ),
    SynthSpec("ppo", "cc", "mountain_car", -200.0, -100.0, 0.08, 0.4, noise=0.05),
    SynthSpec("sac", "cc", "continuous_mountain_car", -60.0, 95.0, 0.12, 0.5),
    SynthSpec("dqn", "cc", "mountain_car", -200.0, -100.0, 0.06, 0.4, noise=0.05),
    SynthSpec(
        "ppo", "xland", "four_rooms", 0.0, 1.0, 0.04, 0.5, noise=0.12, cap=True, sparse=True,
        risk=0.3,
    ),
)


def sobol_configs(algorithm: str, n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """``n`` scrambled Sobol configurations of the ``algorithm``-like space.

    Returns
    -------
    (pandas.DataFrame, numpy.ndarray)
        The configurations (one row each) and their unit coordinates ``(n, d)`` (log scale
        for ``log`` hyperparameters, category centres for categoricals).
    """
    space = _space(algorithm)
    sob = qmc.Sobol(len(space), scramble=True, seed=np.random.default_rng(seed))
    with warnings.catch_warnings():  # n not a power of 2 only loses balance properties
        warnings.simplefilter("ignore", UserWarning)
        U = sob.random(n)  # (n, d)
    cols: dict[str, Any] = {}
    V = np.empty_like(U)  # (n, d) unit coordinates of the decoded values
    for j, (name, spec) in enumerate(space.items()):
        kind, u = spec[0], U[:, j]
        if kind == "cat":
            k = len(spec[1])
            idx = np.minimum((u * k).astype(int), k - 1)
            cols[name] = pd.Series([spec[1][i] for i in idx])
            V[:, j] = (idx + 0.5) / k
        elif kind == "log":
            lo, hi = np.log(spec[1]), np.log(spec[2])
            cols[name] = np.exp(lo + u * (hi - lo))
            V[:, j] = u
        elif kind == "int":
            lo, hi = spec[1], spec[2]
            vals = np.clip(np.floor(lo + u * (hi - lo + 1)), lo, hi).astype(np.int64)
            cols[name] = vals
            V[:, j] = (vals - lo) / (hi - lo)
        else:
            cols[name] = spec[1] + u * (spec[2] - spec[1])
            V[:, j] = u
    return pd.DataFrame(cols), V


def make_task(
    spec: SynthSpec | str,
    *,
    n_configs: int = 512,
    n_seeds: int = 50,
    seed: int = 0,
    name: str | None = None,
) -> TaskData:
    """Generate one synthetic task.

    Parameters
    ----------
    spec : SynthSpec or str
        A template, or the name of one in :data:`PAPER_LIKE` (e.g. ``"synth_ppo_cc_pendulum"``).
    n_configs, n_seeds : int
        Table size (the paper: 512 x 50).
    seed : int
        Seed of every random choice.
    name : str, optional
        Task name (default ``spec.name``).

    Returns
    -------
    TaskData
        ``returns`` of shape ``(n_configs, n_seeds)``, seeds labelled ``1..n_seeds``.
    """
    spec = _spec(spec)
    if n_configs < 2 or n_seeds < 2:
        raise ValueError(f"n_configs and n_seeds must be >= 2, got {n_configs} and {n_seeds}.")
    rng = np.random.default_rng(seed)
    configs, V = sobol_configs(spec.algorithm, n_configs, int(rng.integers(2**31)))
    lat = _latent(V, spec, rng)
    nan_rows = _nan_rows(lat.instability, spec.nan_frac, n_seeds, rng)
    feasible = ~np.isin(np.arange(n_configs), list(nan_rows))  # (n,)
    returns = _draw_returns(spec, lat, n_seeds, rng, feasible)  # (n, S)
    for i, cols in nan_rows.items():
        returns[i, cols] = np.nan
    n_nan = len(nan_rows)
    meta = {
        "task": name or spec.name,
        "algorithm": spec.algorithm,
        "environment": f"{spec.env_like}-like (synthetic)",
        "domain": "synthetic",
        "domain_like": spec.domain_like,
        "search_space": _space_json(spec.algorithm),
        "training_budget": None,
        "generator": GENERATOR,
        "generator_version": _version(),
        "synthetic": True,
        "seed": int(seed),
        "synth_spec": asdict(spec),
        "synth_knobs": lat.knobs,
        "n_nan_configs": n_nan,
        "provenance": (
            f"synthetic RL-like returns from erahbo.datasets.synth.make_task({spec.name!r}, "
            f"n_configs={n_configs}, n_seeds={n_seeds}, seed={seed}); not real RL data"
        ),
    }
    return TaskData(
        configs=configs,
        returns=returns.astype(np.float32).astype(float),  # float32 precision: small files
        seeds=list(range(1, n_seeds + 1)),
        config_ids=np.arange(n_configs, dtype=np.int64),
        meta=meta,
    )


def make_suite(
    n_tasks: int, seed: int = 0, *, n_configs: int = 512, n_seeds: int = 50
) -> list[TaskData]:
    """``n_tasks`` named synthetic tasks of varied difficulty.

    The templates of :data:`PAPER_LIKE` are used in order (cycled, with a ``_r<k>`` suffix,
    beyond 19); each task draws its own knobs from a seed derived from ``seed``.
    """
    if n_tasks < 1:
        raise ValueError(f"n_tasks must be >= 1, got {n_tasks}.")
    seeds = np.random.SeedSequence(seed).generate_state(n_tasks)
    out = []
    for i in range(n_tasks):
        spec = PAPER_LIKE[i % len(PAPER_LIKE)]
        rep = i // len(PAPER_LIKE)
        name = spec.name if rep == 0 else f"{spec.name}_r{rep}"
        task = make_task(spec, n_configs=n_configs, n_seeds=n_seeds, seed=int(seeds[i]), name=name)
        task.meta["suite_seed"] = int(seed)
        out.append(task)
    return out


def write_suite(
    out_dir: str | Path, n_tasks: int, seed: int = 0, *, n_configs: int = 512, n_seeds: int = 50
) -> list[Path]:
    """Generate :func:`make_suite` and write one Parquet file per task; returns the paths."""
    out_dir = Path(out_dir)
    tasks = make_suite(n_tasks, seed, n_configs=n_configs, n_seeds=n_seeds)
    return [write_task(t, out_dir / f"{t.name}.parquet") for t in tasks]


@dataclass(frozen=True)
class TradeoffStats:
    """How much a risk-neutral choice loses on one task (see :func:`tradeoff_stats`).

    Attributes
    ----------
    task : str
        Task name.
    n_configs, n_infeasible : int
        Feasible configurations (after the NaN filter) and filtered ones.
    best_mean_rank : int
        Rank by true MV of the configuration with the best mean (1 = it is the MV optimum).
    best_mean_regret : float
        Its MV regret normalized by the MV spread, ``(MV* - MV) / (MV* - median MV)``.
    corr_mean_std : float
        Pearson correlation of the per-configuration mean and standard deviation.
    init_regret : float
        Mean over ``n_designs`` Sobol initial designs of the normalized MV regret of the
        best configuration in the design (0 would mean the design already finds MV*).
    alpha_tradeoff : float
        The smallest risk aversion at which the best-mean configuration is no longer the MV
        optimum (on the processed scale): ``min (m_b - m_j) / (v_b - v_j)`` over the
        configurations ``j`` with a smaller variance than the best-mean one ``b``; inf when
        none has (then no alpha trades mean for spread on this table).
    """

    task: str
    n_configs: int
    n_infeasible: int
    best_mean_rank: int
    best_mean_regret: float
    corr_mean_std: float
    init_regret: float
    alpha_tradeoff: float = math.inf


def tradeoff_alpha(mean: np.ndarray, var: np.ndarray) -> float:
    """Smallest ``alpha`` at which ``argmax mean - alpha var`` is not ``argmax mean``.

    ``MV_j - MV_b = (m_j - m_b) + alpha (v_b - v_j)`` is positive exactly when
    ``alpha > (m_b - m_j) / (v_b - v_j)`` for a configuration ``j`` with ``v_j < v_b``.

    Parameters
    ----------
    mean, var : numpy.ndarray
        ``(n,)`` per-configuration mean and variance.

    Returns
    -------
    float
        The threshold (``inf`` if the best-mean configuration has the smallest variance).
    """
    mean, var = np.asarray(mean, dtype=float), np.asarray(var, dtype=float)
    b = int(np.argmax(mean))
    less = var < var[b]
    if not less.any():
        return math.inf
    return float(np.min((mean[b] - mean[less]) / (var[b] - var[less])))


def tradeoff_stats(
    task: TaskData,
    *,
    alpha: float = 1.0,
    outcome_processing: str = "vizier",
    n_init: int = 5,
    n_designs: int = 20,
    seed: int = 0,
) -> TradeoffStats:
    """Risk trade-off of ``task`` as the offline benchmark sees it.

    Same ground truth as the replay benchmark (``erahbo.experiments.replay``): infeasible
    configurations filtered, outcomes processed (Vizier output warping by default), then
    ``MV = mean - alpha * var(ddof=1)`` over all seeds (eq. 1 with the sample variance).
    Initial designs are ``n_init`` configurations picked by
    :meth:`erahbo.space.SearchSpace.sobol_indices`, as the benchmark's repetitions do.

    Parameters
    ----------
    task : TaskData
        Any task (synthetic or real).
    alpha : float
        Risk aversion (the paper: 1 on the warped scale).
    outcome_processing : {"vizier", "none"}
        See :func:`erahbo.datasets.warping.process_outcomes`.
    n_init, n_designs : int
        Size and number of the Sobol initial designs averaged in ``init_regret``.
    seed : int
        Seed of the designs.

    Returns
    -------
    TradeoffStats
    """
    from erahbo.datasets.groundtruth import ground_truth
    from erahbo.space import SearchSpace

    truth = ground_truth(task, alpha=alpha, outcome_processing=outcome_processing)
    clean, report, proc = truth.clean, truth.report, truth.processed
    if clean.n_configs < 2:
        raise ValueError(f"{task.name}: fewer than 2 feasible configurations, no trade-off.")
    mean, mv = truth.mean, truth.mv  # (n,) on the benchmark's scale
    std = np.asarray(proc.returns, dtype=float).std(axis=1, ddof=1)  # (n,)
    mv_star = float(mv.max())
    spread = max(mv_star - float(np.median(mv)), 1e-12)
    best_mean = int(np.argmax(mean))
    spec = proc.meta.get("search_space")
    space = SearchSpace.from_table(proc.configs, spec or None, allow_missing=True)
    n_init = min(int(n_init), clean.n_configs)
    designs = np.random.SeedSequence(seed).generate_state(n_designs)
    init = [mv_star - mv[space.sobol_indices(n_init, int(s))].max() for s in designs]
    corr = float(np.corrcoef(mean, std)[0, 1]) if std.std() > 0 else 0.0
    return TradeoffStats(
        task=task.name,
        n_configs=clean.n_configs,
        n_infeasible=report.n_infeasible,
        best_mean_rank=int((mv > mv[best_mean]).sum()) + 1,
        best_mean_regret=float((mv_star - mv[best_mean]) / spread),
        corr_mean_std=corr,
        init_regret=float(np.mean(init) / spread),
        alpha_tradeoff=tradeoff_alpha(mean, std**2),
    )


# -- model pieces ---------------------------------------------------------------------

# Priors of the generative model (ranges of uniform draws, one draw per task).
_LR_HIGH_STRETCH = 3.0  # quality falls this many times slower above lr* than below
_AGG_SLOPE = 1.5  # steepness of the learning rate's share of the aggressiveness
_W_LR = (0.3, 0.6)  # learning rate's weight in the aggressiveness
_PLATEAU, _PLATEAU_MIN = 0.2, 8  # top-quality plateau: share of good_frac, at least 8
_P_MAX = (0.2, 0.35)  # collapse probability of the most aggressive settings (x spec.risk)
_F0 = (0.1, 0.3)  # share of p_max reached right after the onset a0
_K = (1.0, 1.5)  # power of the collapse-probability curve beyond the onset
_A0_Q = (0.35, 0.65)  # onset a0: quantile of the aggressiveness of good configurations
_A_PEAK_Q = (0.85, 0.95)  # calibration point a_peak: quantile of the same
_MARGIN = (0.1, 0.4)  # expected-return lead of a_peak, in units of its variance
_DROP_MAX = 0.9  # largest success-return gain from a0 to 1 (fraction of the range)
_ONSET_WIDTH = 0.015  # smoothness of the onset and of the success curve's kink
_LOW_SLOPE = 0.3  # success-curve slope below a0 relative to above
_INST = (0.3, 0.6)  # collapse probability of unstable pockets (middling quality)


@dataclass
class _Latent:
    """Per-configuration latent variables of a task, each ``(n,)``."""

    quality: np.ndarray  # in [0, 1]: how well the run learns when it does not collapse
    aggressive: np.ndarray  # in [0, 1]: size of the updates (learning rate + one hp)
    instability: np.ndarray  # in (0, 1): unstable pockets (bimodal middling configs, NaN)
    sigma_shape: np.ndarray  # in [0.4, 1.6]: smooth noise-scale factor
    knobs: dict[str, Any]


def _latent(V: np.ndarray, spec: SynthSpec, rng: np.random.Generator) -> _Latent:
    """Quality, aggressiveness, instability and noise shape of every configuration."""
    n, d = V.shape
    lr = V[:, 0]  # learning rate is the first hyperparameter of every space
    lr_opt = rng.uniform(0.45, 0.7)  # log10 lr* in [-3.75, -2.5]
    lr_width = rng.uniform(0.08, 0.18)
    dz = (lr - lr_opt) / lr_width  # (n,)
    # Too small a learning rate learns too little; above lr* quality declines slowly (the
    # price of large steps is paid in collapses instead, see _draw_returns).
    z = -0.5 * np.where(dz < 0, dz, dz / _LR_HIGH_STRETCH) ** 2  # (n,)
    others = rng.choice(np.arange(1, d), size=3, replace=False)
    for j in others[:2]:  # two influential hyperparameters with interior optima
        c, w = rng.uniform(0.1, 0.9), rng.uniform(0.25, 0.6)
        z += -0.5 * ((V[:, j] - c) / w) ** 2
    n_bumps = int(rng.integers(2, 9))
    z += rng.uniform(0.5, 1.5) * _rbf(V, rng, n_bumps, scale=rng.uniform(0.25, 0.45))
    # Calibrate: about good_frac of the configurations above quality 0.5.
    thr = np.quantile(z, 1.0 - spec.good_frac)
    sharp = rng.uniform(2.0, 4.0) / max(float(np.std(z)), 1e-9)
    quality = 1.0 / (1.0 + np.exp(-sharp * (z - thr)))
    # Saturate: the best configurations share a plateau of top quality (returns saturate),
    # so that among them the risk-reward trade-off decides.
    top = min(max(_PLATEAU_MIN / n, _PLATEAU * spec.good_frac), 1.0)
    x = quality / max(float(np.quantile(quality, 1.0 - top)), 1e-12)
    quality = x / (1.0 + x**6) ** (1.0 / 6.0)  # smooth min(x, 1)
    quality = quality / quality.max()
    # Aggressiveness: a larger learning rate and one more hyperparameter (bigger updates)
    # reach higher returns within the budget but collapse more often.
    w_lr = rng.uniform(*_W_LR)
    agg_lr = 1.0 / (1.0 + np.exp(-_AGG_SLOPE * dz))
    aggressive = w_lr * agg_lr + (1.0 - w_lr) * V[:, others[2]]
    # Instability: large learning rates, the risk-reward hyperparameter and a random smooth
    # term; calibrated so that about bimodal_frac of the configurations are unstable.
    inst = 0.5 * dz + 0.5 * V[:, others[2]] + _rbf(V, rng, 3, scale=0.4)
    thr_b = np.quantile(inst, 1.0 - spec.bimodal_frac)
    instability = 1.0 / (1.0 + np.exp(-4.0 * (inst - thr_b) / max(float(np.std(inst)), 1e-9)))
    sigma_shape = 0.4 + 0.6 * (1.0 + _rbf(V, rng, 4, scale=0.35))
    knobs = {
        "lr_opt": float(10 ** (-6 + 5 * lr_opt)),
        "lr_width_decades": float(5 * lr_width),
        "influential": [int(j) for j in others[:2]],
        "risk_reward_hp": int(others[2]),
        "risk_reward_lr_weight": float(w_lr),
        "n_bumps": n_bumps,
    }
    return _Latent(quality, aggressive, instability, sigma_shape, knobs)


def _draw_returns(
    spec: SynthSpec,
    lat: _Latent,
    n_seeds: int,
    rng: np.random.Generator,
    feasible: np.ndarray,
) -> np.ndarray:
    """``(n, S)`` per-seed returns; ``feasible`` ``(n,)`` marks the rows used to calibrate."""
    q, a = lat.quality, lat.aggressive
    n, span = q.shape[0], spec.high - spec.low
    if not feasible.any():  # every configuration has NaN seeds: calibrate on all rows
        feasible = np.ones(n, dtype=bool)
    # Collapse probability: 0 below an onset a0 of the aggressiveness, then
    # p_max (f0 + (1 - f0) t^k) with t = (a - a0) / (1 - a0) (steep but smooth onset).
    # a0 and the calibration point a_peak are quantiles of the aggressiveness of the good
    # configurations, so that some good configurations are reliable and the others risky.
    good = feasible & (q > 0.8)
    if good.sum() < 4:
        good = np.isin(np.arange(n), np.argsort(np.where(feasible, q, -1.0))[-4:])
    a0 = float(np.quantile(a[good], rng.uniform(*_A0_Q)))
    a_peak = float(np.quantile(a[good], rng.uniform(*_A_PEAK_Q)))
    p_max = spec.risk * rng.uniform(*_P_MAX)
    f0, k_risk = rng.uniform(*_F0), rng.uniform(*_K)
    p_risk = _collapse_prob(a, a0, p_max, f0, k_risk)  # (n,)
    # Unstable pockets make middling configurations bimodal (learn or not) as well.
    p_inst = rng.uniform(*_INST) * lat.instability * (4.0 * q * (1.0 - q)) ** 2  # (n,)
    p_fail = np.minimum(p_risk + p_inst, 0.9)  # (n,)
    # Configurations that learn nothing score a random policy's return (`base` above the
    # worst return; 0 in sparse tasks); collapsed runs end at the worst return.
    base = 0.0 if spec.sparse else rng.uniform(0.04, 0.12)
    # Noise: small for configurations that learn nothing, largest for middling ones,
    # larger for aggressive ones; left-skewed (negated centred Gamma).
    shape_q = 0.15 + 2.0 * q * (1.0 - q) + 0.3 * q
    sigma = span * spec.noise * lat.sigma_shape * shape_q * (0.4 + 1.6 * a)  # (n,)
    k = rng.uniform(1.5, 4.0)  # Gamma shape: smaller is more skewed
    g = (rng.gamma(k, 1.0, size=(n, n_seeds)) - k) / np.sqrt(k)  # (n, S) mean 0, sd 1
    # Stratified draws: each seed collapses with probability p_fail, and the share of
    # collapsed seeds of a configuration is p_fail up to rounding, so that the stored table
    # shows the model's variance rather than the luck of S draws.
    strata = rng.permuted(np.tile(np.arange(n_seeds), (n, 1)), axis=1)  # (n, S)
    fail = (strata + rng.random((n, n_seeds))) / n_seeds < p_fail[:, None]  # (n, S)
    hi = spec.high if spec.cap else spec.high + 0.1 * span

    def ok_return(x: np.ndarray, quality: np.ndarray | float, drop: Any) -> np.ndarray:
        """Success-mode return at aggressiveness x (broadcast with quality and drop)."""
        frac = quality * np.maximum(_success_curve(x, a0, drop), 0.05)
        return spec.low + span * (base + (1.0 - base) * frac)

    def table(drop: float) -> np.ndarray:
        r = np.where(fail, spec.low, ok_return(a, q, drop)[:, None] - sigma[:, None] * g)
        if spec.sparse:
            r = np.where(r < spec.low + 0.05 * span, spec.low, r)
        return np.clip(r, spec.low, hi)  # (n, S)

    # Calibrate `drop` (the success return gained from a0 to 1, fraction of the range) on
    # the scale the benchmark uses, the task's Vizier output warping: at a_peak, the
    # expected return of a top-quality configuration must beat the best reliable one
    # (a <= a0) by `margin` times its own variance. The best-mean region is then risky and,
    # for margin < 1, not where the MV optimum is. Two fixed-point passes (the warp
    # depends a little on `drop`).
    margin = rng.uniform(*_MARGIN)
    p_peak = float(_collapse_prob(np.array(a_peak), a0, p_max, f0, k_risk))
    rel_a = np.linspace(max(a0 - 0.3, 0.0), a0, 31)  # (m,) reliable side
    drops = np.linspace(0.02, _DROP_MAX, 89)[:, None]  # (c, 1) candidates
    drop = 0.5
    for _ in range(2):
        warp = VizierWarper().fit(table(drop)[feasible])
        w_fail = float(warp.transform(np.array([spec.low]))[0])
        w_peak = warp.transform(np.clip(ok_return(np.array([a_peak]), 1.0, drops), None, hi))
        w_rel = warp.transform(np.clip(ok_return(rel_a, 1.0, drops), None, hi))  # (c, m)
        lead = (1.0 - p_peak) * w_peak[:, 0] + p_peak * w_fail - w_rel.max(axis=1)  # (c,)
        var_peak = p_peak * (1.0 - p_peak) * (w_peak[:, 0] - w_fail) ** 2  # (c,)
        reach = np.nonzero(lead >= margin * var_peak)[0]
        drop = float(drops[reach[0], 0] if reach.size else drops[-1, 0])
    lat.knobs.update(
        collapse_onset=float(a0), collapse_p_max=float(p_max), collapse_onset_share=float(f0),
        collapse_power=float(k_risk), calibration_point=float(a_peak),
        calibration_margin=float(margin), success_gain=float(drop),
        random_policy_level=float(base), gamma_shape=float(k),
    )
    return table(drop)


def _collapse_prob(a: np.ndarray, a0: float, p_max: float, f0: float, k: float) -> np.ndarray:
    """Collapse probability at aggressiveness ``a`` (any shape): 0 below a0, then rising."""
    t = np.clip((a - a0) / (1.0 - a0), 0.0, 1.0)
    onset = 1.0 / (1.0 + np.exp(-(a - a0) / _ONSET_WIDTH))
    return p_max * onset * (f0 + (1.0 - f0) * t**k)


def _success_curve(a: np.ndarray, a0: float, drop: Any) -> np.ndarray:
    """Success-mode return fraction at aggressiveness ``a`` (broadcast with ``drop``):
    ``1 - drop`` at a0, rising linearly to 1 at a = 1, ``_LOW_SLOPE`` times as fast below
    a0 (smoothly joined)."""
    slope = drop / (1.0 - a0)
    u = a - a0
    soft = _ONSET_WIDTH * np.logaddexp(0.0, u / _ONSET_WIDTH)  # smooth max(u, 0)
    return 1.0 - drop + slope * soft + _LOW_SLOPE * slope * (u - soft)


def _nan_rows(
    instability: np.ndarray, frac: float, n_seeds: int, rng: np.random.Generator
) -> dict[int, np.ndarray]:
    """The ``frac`` most unstable configurations and the seeds on which they fail (NaN)."""
    n = instability.shape[0]
    k = round(frac * n)
    if k == 0:
        return {}
    score = instability + 0.05 * rng.standard_normal(n)
    out = {}
    for i in np.argsort(score)[-k:]:
        m = n_seeds if rng.random() < 0.4 else int(rng.integers(1, max(2, n_seeds // 2)))
        out[int(i)] = rng.choice(n_seeds, size=m, replace=False)
    return out


def _rbf(V: np.ndarray, rng: np.random.Generator, n_bumps: int, scale: float) -> np.ndarray:
    """Sum of random Gaussian bumps with random signs, standardized to about [-1, 1]."""
    d = V.shape[1]
    centres = rng.random((n_bumps, d))
    amps = rng.uniform(0.5, 1.0, n_bumps) * rng.choice([-1.0, 1.0], n_bumps)
    d2 = ((V[:, None, :] - centres[None, :, :]) ** 2).sum(-1)  # (n, n_bumps)
    f = (amps * np.exp(-d2 / (2 * scale**2 * d))).sum(1)
    return (f - f.mean()) / max(np.abs(f - f.mean()).max(), 1e-12)


def _space(algorithm: str) -> dict[str, tuple]:
    if algorithm not in SPACES:
        raise ValueError(f"algorithm {algorithm!r} is unknown; use one of {sorted(SPACES)}.")
    return SPACES[algorithm]


def _space_json(algorithm: str) -> dict[str, Any]:
    from erahbo.space import SearchSpace

    return SearchSpace(dict(_space(algorithm))).to_json()


def _spec(spec: SynthSpec | str) -> SynthSpec:
    if isinstance(spec, SynthSpec):
        return spec
    by_name = {s.name: s for s in PAPER_LIKE}
    if spec not in by_name:
        raise ValueError(f"unknown synthetic template {spec!r}; use one of {sorted(by_name)}.")
    return by_name[spec]


def _version() -> str:
    from erahbo import __version__

    return __version__


__all__ = [
    "PAPER_LIKE",
    "SPACES",
    "SynthSpec",
    "TradeoffStats",
    "make_suite",
    "make_task",
    "sobol_configs",
    "tradeoff_alpha",
    "tradeoff_stats",
    "write_suite",
]
