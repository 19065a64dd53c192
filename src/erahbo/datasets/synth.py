"""Paper-shaped synthetic tasks: N Sobol configurations x S seeds of RL-like final returns.

Not real RL data: every task says so in its metadata (``synthetic=True``, ``domain=
"synthetic"``, ``generator="erahbo.datasets.synth"``) and carries a ``domain_like`` field
(``cc``, ``brax`` or ``xland``) so that reports can group it like the paper's tasks.

Generative model of one task (all random choices from one seed)
----------------------------------------------------------------
* Configurations: ``N`` scrambled Sobol points over an ARLBench-like space (PPO, DQN or
  SAC hyperparameters; the learning rate log-scaled), decoded to values.
* Quality ``q(x) in [0, 1]``: a bump in log learning rate around a random optimum, a few
  other influential hyperparameters, and random smooth bumps (ruggedness); calibrated so
  that about ``good_frac`` of the configurations are good (rare in XLand-like tasks).
* One "aggressive" hyperparameter ``a(x) in [0, 1]`` trades return for risk: conservative
  settings lose a random 5-20 % of the range, aggressive ones are noisier and collapse more
  often, so the best mean and the best mean-variance configuration can differ.
* Per seed, a training run *collapses* with probability ``p_fail(x)`` (an instability
  score: learning rate above the optimum, aggressiveness, a random smooth term), landing
  near the worst return: some configurations are bimodal, good ones included.
* Otherwise the return is ``low + (high - low) q(x) (1 - gain (1 - a(x)))`` plus
  left-skewed noise (negated centred Gamma) whose scale ``sigma(x)`` varies smoothly over
  the space (heteroscedastic), clipped to ``[low, high]`` (``high`` + 10 % unless capped;
  CartPole-like tasks pile up at the cap; XLand-like tasks snap small returns to 0).
* A few configurations with the most unstable hyperparameters fail (NaN) on some or all
  seeds (``nan_frac``), like the paper's infeasible configurations.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import qmc

from erahbo.datasets.format import TaskData, write_task

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
        Share of configurations with a noticeable collapse probability.
    nan_frac : float
        Share of infeasible configurations (NaN on some seeds).
    noise : float
        Typical noise scale as a fraction of ``high - low``.
    cap : bool
        Returns pile up at ``high`` (CartPole-like); otherwise they may exceed it by 10 %
        of the range. Returns never go below ``low``.
    sparse : bool
        XLand-like: small returns snap to ``low`` (many exact zeros).
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

    @property
    def name(self) -> str:
        return f"synth_{self.algorithm}_{self.domain_like}_{self.env_like}"


# The paper's 19 algorithm-environment pairs (Appendix C), ordered so that any prefix
# mixes domains and algorithms; NaN shares follow the paper's infeasible counts.
PAPER_LIKE: tuple[SynthSpec, ...] = (
    SynthSpec("ppo", "cc", "pendulum", -1500.0, -150.0, 0.25, 0.3, nan_frac=18 / 512),
    SynthSpec("dqn", "cc", "cartpole", 0.0, 500.0, 0.3, 0.4, noise=0.08, cap=True),
    SynthSpec("ppo", "brax", "halfcheetah", -600.0, 5000.0, 0.15, 0.35, nan_frac=182 / 512),
    SynthSpec("ppo", "xland", "door_key", 0.0, 1.0, 0.05, 0.5, noise=0.1, cap=True, sparse=True),
    SynthSpec("sac", "cc", "pendulum", -1500.0, -140.0, 0.35, 0.2, noise=0.05),
    SynthSpec("ppo", "cc", "acrobot", -500.0, -65.0, 0.3, 0.3),
    SynthSpec("sac", "brax", "fast", -200.0, 3000.0, 0.2, 0.3, noise=0.08),
    SynthSpec("dqn", "xland", "four_rooms", 0.0, 1.0, 0.04, 0.5, noise=0.12, cap=True, sparse=True),
    SynthSpec("ppo", "cc", "continuous_mountain_car", -60.0, 95.0, 0.15, 0.45, nan_frac=48 / 512),
    SynthSpec("dqn", "cc", "acrobot", -500.0, -70.0, 0.25, 0.3),
    SynthSpec("ppo", "brax", "fast", -200.0, 3500.0, 0.2, 0.3, noise=0.07),
    SynthSpec(
        "ppo", "xland", "empty_random", 0.0, 1.0, 0.1, 0.4, noise=0.08, cap=True, sparse=True
    ),
    SynthSpec("ppo", "cc", "cartpole", 0.0, 500.0, 0.35, 0.35, noise=0.07, cap=True),
    SynthSpec("sac", "brax", "halfcheetah", -600.0, 6000.0, 0.2, 0.25, noise=0.07),
    SynthSpec(
        "dqn", "xland", "empty_random", 0.0, 1.0, 0.08, 0.45, noise=0.1, cap=True, sparse=True
    ),
    SynthSpec("ppo", "cc", "mountain_car", -200.0, -100.0, 0.08, 0.4, noise=0.05),
    SynthSpec("sac", "cc", "continuous_mountain_car", -60.0, 95.0, 0.12, 0.5),
    SynthSpec("dqn", "cc", "mountain_car", -200.0, -100.0, 0.06, 0.4, noise=0.05),
    SynthSpec("ppo", "xland", "four_rooms", 0.0, 1.0, 0.04, 0.5, noise=0.12, cap=True, sparse=True),
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
    returns = _draw_returns(spec, lat, n_seeds, rng)  # (n, S)
    n_nan = _add_nans(returns, lat.instability, spec.nan_frac, rng)
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


# -- model pieces ---------------------------------------------------------------------


@dataclass
class _Latent:
    """Per-configuration latent variables of a task, each ``(n,)``."""

    quality: np.ndarray  # in [0, 1]
    aggressive: np.ndarray  # in [0, 1]: the risk-reward hyperparameter, unit scale
    instability: np.ndarray  # in (0, 1): drives the collapse probability
    sigma_shape: np.ndarray  # in [0.4, 1.6]: smooth noise-scale factor
    knobs: dict[str, Any]


def _latent(V: np.ndarray, spec: SynthSpec, rng: np.random.Generator) -> _Latent:
    """Quality, aggressiveness, instability and noise shape of every configuration."""
    d = V.shape[1]
    lr = V[:, 0]  # learning rate is the first hyperparameter of every space
    lr_opt = rng.uniform(0.45, 0.72)  # log10 lr* in [-3.75, -2.4]
    lr_width = rng.uniform(0.08, 0.2)
    z = -0.5 * ((lr - lr_opt) / lr_width) ** 2  # (n,)
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
    quality = quality / quality.max()
    # Aggressive settings (one hyperparameter) reach higher returns but are less stable.
    aggressive = V[:, others[2]]
    inst = 0.5 * (lr - lr_opt) / lr_width + 0.5 * aggressive + 0.5 * _rbf(V, rng, 3, scale=0.4)
    thr_b = np.quantile(inst, 1.0 - spec.bimodal_frac)
    instability = 1.0 / (1.0 + np.exp(-4.0 * (inst - thr_b) / max(float(np.std(inst)), 1e-9)))
    sigma_shape = 0.4 + 0.6 * (1.0 + _rbf(V, rng, 4, scale=0.35))
    knobs = {
        "lr_opt": float(10 ** (-6 + 5 * lr_opt)),
        "lr_width_decades": float(5 * lr_width),
        "influential": [int(j) for j in others[:2]],
        "risk_reward_hp": int(others[2]),
        "n_bumps": n_bumps,
    }
    return _Latent(quality, aggressive, instability, sigma_shape, knobs)


def _draw_returns(
    spec: SynthSpec, lat: _Latent, n_seeds: int, rng: np.random.Generator
) -> np.ndarray:
    """``(n, S)`` per-seed returns."""
    q, a = lat.quality, lat.aggressive
    n, span = q.shape[0], spec.high - spec.low
    gain = rng.uniform(0.05, 0.2)  # share of the range only aggressive settings reach
    p_fail = rng.uniform(0.3, 0.6) * lat.instability * (0.3 + 0.7 * q)  # (n,)
    mean_ok = spec.low + span * q * (1.0 - gain * (1.0 - a))  # (n,)
    # Noise: largest for middling configurations, larger for aggressive ones.
    sigma = span * spec.noise * lat.sigma_shape * (0.5 + 2.0 * q * (1 - q)) * (0.4 + 2.4 * a)
    k = rng.uniform(1.5, 4.0)  # Gamma shape: smaller is more skewed
    g = (rng.gamma(k, 1.0, size=(n, n_seeds)) - k) / np.sqrt(k)  # (n, S) mean 0, sd 1
    ok = mean_ok[:, None] - sigma[:, None] * g  # left-skewed around the mean
    collapsed = spec.low + span * rng.uniform(0.0, 0.06, size=(n, n_seeds)) * (1 + q[:, None])
    fail = rng.random((n, n_seeds)) < p_fail[:, None]
    r = np.where(fail, collapsed, ok)
    if spec.sparse:
        r = np.where(r < spec.low + 0.05 * span, spec.low, r)
    hi = spec.high if spec.cap else spec.high + 0.1 * span
    lat.knobs.update(aggressive_gain=float(gain), gamma_shape=float(k))
    return np.clip(r, spec.low, hi)


def _add_nans(
    returns: np.ndarray, instability: np.ndarray, frac: float, rng: np.random.Generator
) -> int:
    """Mark the ``frac`` most unstable configurations as failed on some or all seeds."""
    n, s = returns.shape
    k = round(frac * n)
    if k == 0:
        return 0
    score = instability + 0.05 * rng.standard_normal(n)
    for i in np.argsort(score)[-k:]:
        m = s if rng.random() < 0.4 else int(rng.integers(1, max(2, s // 2)))
        returns[i, rng.choice(s, size=m, replace=False)] = np.nan
    return k


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
    "make_suite",
    "make_task",
    "sobol_configs",
    "write_suite",
]
