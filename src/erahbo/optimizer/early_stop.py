"""Early stopping of a seed's training from its partial learning curve (issue 39, item 4).

A part of a strategy (:mod:`erahbo.optimizer.strategy`), off by default (``early_stop``). ERAHBO
decides how many seeds a configuration ``x_t`` gets by eq. 12: a round ends when
``UCB_t^MV(x_t; k) <= B_t``. With ``early_stop`` on, a host that trains a run in checkpoints
asks the same rule *during* a run, with the run's partial return in place of its final one:

* **curve model** (:class:`CurveModel`): per checkpoint ``c``, an isotonic (non-decreasing)
  regression of the final return on the return at ``c``, fitted on the study's own completed
  runs (every run that reached the last checkpoint), with its spread: the root mean square of
  its out-of-fold residuals (:data:`FOLDS`-fold, deterministic folds). Isotonic, not linear:
  on the DQN tables (``benchmarks/early_stop_curve_model.py``; trained on the runs of 5-40
  configurations) a linear fit extrapolates wildly on Acrobot (root mean square error up to
  5.1 on a scale where a final return's spread is 0.23), an isotonic one is bounded by the
  finals it has seen and is within 0.011 of linear on CartPole; out-of-fold residuals, not
  in-sample ones, because the in-sample spread of a step function is too small (on CartPole
  a final return beyond +2 sd 1.5-1.7 times as often). Both are heavy-tailed on Acrobot (11 %
  beyond +2 sd: runs that learn late), one reason for ``early_stop_beta``;
* **the verdict** (:func:`partial_bounds`, :meth:`EarlyStop.verdict`): the mean GP's
  posterior at ``x_t`` after its final returns so far (the paper's noise ``Sigma_hat / k``,
  eq. 19), then after each partial run's observation of its final return
  (:meth:`CurveModel.observation`: the prediction ``y_hat`` with the population's prior
  removed) with that observation's variance added to the seed's noise; then eq. 9 at
  ``x_t`` with confidence ``max(beta_stop_t, early_stop_beta)`` (a tail measure's bound also
  hears ``x_t``'s final returns, as the optimizer's own rule does:
  :func:`erahbo.gp.round.own_run_bound`) and eq. 12 against the round's ``B_t``:
  stop the run (and the round) when ``UCB_MV <= B_t`` *and* the partial
  runs lowered the bound (it is below the bound without them, ``Verdict.prior_ucb_mv``): a
  stop is certified by the run's evidence, never by the models' belief alone. Without that
  condition a checkpoint that says nothing stops every configuration whose posterior given
  the others is already below ``B_t`` at its first checkpoint, and the configuration, marked
  dominated, is lost to the search without a run that could have shown the models wrong
  (versions v1 and v2 in ``docs/results/multifidelity/README.md``);
* **before** :data:`MIN_CONFIGS` configurations have completed runs, and for the initial
  design, nothing is stopped;
* **a stopped run** is a truncated run with its step, never a final return: it does not enter
  the data the GPs read (no sample mean holds a prediction), the round ends ``dominated``
  (its bounds in the rounds table: the partial ones that certified it), and the configuration
  is marked dominated (:meth:`erahbo.Optimizer.tell_stopped`): no longer proposed, its earlier
  final returns staying in the data, until the host readmits the marked configurations that
  have final returns (:meth:`erahbo.Optimizer.readmit_stopped`) when nothing else is left.
  Measured on the DQN tables (``docs/results/multifidelity/README.md``): without the mark,
  the acquisition proposes the stopped configuration again at once (the models did not
  learn from the stopped run) and 38-67 % of the steps went to runs stopped in that loop;
  with a permanent mark, the 128-configuration tables ran out of configurations with 13-33 %
  of the steps unspent. Why not the predicted final with its inflated noise in the data: the
  models read one noise per row, ``Sigma_hat / k`` of the row's seed count; a per-run noise
  would change both engines (not this part's to change).

The host: a study that trains in checkpoints (the replay of partial runs,
:mod:`erahbo.experiments.mf_erahbo`). It asks :meth:`EarlyStop.verdict` at each checkpoint of a
trial's runs, ends a stopped trial with :meth:`erahbo.Optimizer.tell_stopped`, tells a trial
whose runs all completed as usual and gives their curves to :meth:`EarlyStop.add_curves`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from erahbo.validation import Param, flag, real_above

__all__ = ["FOLDS", "MIN_CONFIGS", "PARAMS", "CurveModel", "EarlyStop", "Verdict", "check",
           "partial_bounds"]

#: Configurations with completed runs before anything is stopped.
MIN_CONFIGS = 5
#: Folds of the out-of-fold residuals of the curve model.
FOLDS = 5

#: The early-stop part's options (:class:`erahbo.validation.Param`). No host derives them
#: (``hosts=False``): only a host that trains in checkpoints reads them.
PARAMS = (
    Param("early_stop", bool, flag("early stopping of a run from its partial curve"),
          default=False, paper=False, absent=False,
          help="Stop a seed's training at a checkpoint when eq. 12, with the run's predicted "
               "final return and its prediction variance, certifies UCB_MV <= B_t (a host "
               "that trains in checkpoints; off by default).", cli=False, hosts=False),
    Param("early_stop_beta", float, real_above(0.0, False, " (sqrt(beta) standard deviations)"),
          default=1.0, paper=1.0, absent=1.0,
          help="Early stopping's confidence: its UCB_MV uses sqrt(max(beta_stop_t, "
               "early_stop_beta)) standard deviations (default 1, the paper's beta_stop).",
          cli=False, hosts=False),
)


def check(o: Any, given: set[str]) -> None:
    """Refuse early stopping outside ERAHBO's models and an ``early_stop_beta`` other than the
    default without it."""
    if not o.early_stop:  # a study's stored settings give the default: nothing to refuse
        if "early_stop_beta" in given and o.early_stop_beta != PARAMS[1].default:
            raise ValueError("early_stop_beta is early stopping's confidence, but early_stop "
                             "is off: give early_stop=True too, or drop early_stop_beta")
        return
    if o.method != "erahbo" or o.stopping != "ucb":
        raise ValueError(
            f"early_stop=True reads ERAHBO's stopping rule (eq. 12) and its models; method="
            f"{o.method!r}, stopping={o.stopping!r} has none: use method='erahbo' with "
            "stopping='ucb', or drop early_stop")


def _pava(y: np.ndarray) -> np.ndarray:
    """Pool-adjacent-violators: the non-decreasing least-squares fit of ``y (n,)`` (in order)."""
    vals: list[float] = []
    wts: list[int] = []
    for v in y:
        vals.append(float(v))
        wts.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            w = wts[-2] + wts[-1]
            vals[-2] = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / w
            wts[-2] = w
            vals.pop()
            wts.pop()
    return np.repeat(vals, wts)


def _isotonic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knots ``(xs, fit)`` of the isotonic regression of ``y`` on ``x`` (ties averaged)."""
    xs, inv = np.unique(x, return_inverse=True)
    ys = np.bincount(inv, weights=y) / np.bincount(inv)
    ws = np.bincount(inv)
    # weighted PAVA through repetition of tied means is exact for integer weights
    fit = _pava(np.repeat(ys, ws))
    starts = np.concatenate([[0], np.cumsum(ws)[:-1]])
    return xs, fit[starts]


def _predict(knots: tuple[np.ndarray, np.ndarray], x: np.ndarray | float) -> np.ndarray:
    """The isotonic fit at ``x``: linear between its knots, constant beyond them."""
    xs, fit = knots
    return np.interp(x, xs, fit)


@dataclass(frozen=True)
class CurveModel:
    """Per-checkpoint predictions of a run's final return from its return at a checkpoint.

    Attributes
    ----------
    knots : tuple
        One ``(xs, fit)`` isotonic regression per checkpoint ``0..C-2``.
    sd : numpy.ndarray
        ``(C - 1,)`` the root mean square of each checkpoint's out-of-fold residuals.
    n_runs : int
        Completed runs it was fitted on.
    mean0, var0 : float
        Mean and variance (``ddof=1``) of their final returns: the prior every prediction
        carries (:meth:`observation` removes it).
    """

    knots: tuple[tuple[np.ndarray, np.ndarray], ...]
    sd: np.ndarray
    n_runs: int
    mean0: float = 0.0
    var0: float = math.inf

    @classmethod
    def fit(cls, curves: np.ndarray) -> CurveModel:
        """Fit on ``curves (n, C)``: completed runs (finite at the last checkpoint).

        Raises
        ------
        ValueError
            With fewer than 2 completed runs or fewer than 2 checkpoints.
        """
        y = np.asarray(curves, dtype=float)
        if y.ndim != 2 or y.shape[1] < 2:
            raise ValueError(f"CurveModel.fit: curves of shape {y.shape} must be (n runs, C >= 2 "
                             "checkpoints)")
        y = y[np.isfinite(y[:, -1])]
        if len(y) < 2:
            raise ValueError(f"CurveModel.fit: {len(y)} completed run(s); give at least 2")
        knots, sds = [], []
        for c in range(y.shape[1] - 1):
            ok = np.isfinite(y[:, c])
            x, f = y[ok, c], y[ok, -1]
            if x.size < 2:  # no partial returns at c: the finals' own spread, no knots to read
                knots.append((np.array([0.0]), np.array([float(np.mean(y[:, -1]))])))
                sds.append(float(np.std(y[:, -1], ddof=1)))
                continue
            knots.append(_isotonic(x, f))
            sds.append(_out_of_fold_rms(x, f))
        finals = y[:, -1]
        return cls(knots=tuple(knots), sd=np.asarray(sds, dtype=float), n_runs=len(y),
                   mean0=float(np.mean(finals)), var0=float(np.var(finals, ddof=1)))

    def predict(self, checkpoint: int, value: float) -> tuple[float, float]:
        """``(predicted final return, prediction variance)`` of a run whose return at
        ``checkpoint`` (``0..C-2``) is ``value``."""
        if not 0 <= int(checkpoint) < len(self.knots):
            raise ValueError(f"checkpoint={checkpoint} must lie in 0..{len(self.knots) - 1} "
                             "(the last checkpoint's return is the final one)")
        mean = float(_predict(self.knots[int(checkpoint)], float(value)))
        return mean, float(self.sd[int(checkpoint)]) ** 2

    def observation(self, checkpoint: int, value: float) -> tuple[float, float]:
        """What the run's return at ``checkpoint`` says about its final return, without the
        prior the prediction carries: ``(z, tau2)``, an observation of the final return with
        noise variance ``tau2`` (``inf``: the checkpoint says nothing).

        The prediction ``N(m, s^2)`` (:meth:`predict`) is the population's prior
        ``N(mean0, var0)`` of the completed finals updated by the partial return; as
        Gaussians, that update is one observation ``z`` with ``1 / s^2 = 1 / var0 + 1 / tau2``
        and ``m / s^2 = mean0 / var0 + z / tau2``. The study's GP has its own prior at
        ``x_t``: handing it ``m`` would count the population's prior a second time (an
        uninformative checkpoint would pull every configuration to the population's mean).
        A return above every one seen at ``checkpoint`` says nothing (``tau2 = inf``): the
        isotonic fit is flat there, at the best final seen, which would be evidence against a
        run better than every completed one.
        """
        m, s2 = self.predict(checkpoint, value)
        if float(value) > float(self.knots[int(checkpoint)][0][-1]):
            return m, math.inf  # above every partial return seen: no evidence against the run
        if not (math.isfinite(self.var0) and self.var0 > 0.0) or s2 <= 0.0:
            return m, s2  # no prior to remove (constant finals) or an exact fit
        info = 1.0 / s2 - 1.0 / self.var0
        if info <= 1e-12 / self.var0:
            return m, math.inf
        tau2 = 1.0 / info
        return tau2 * (m / s2 - self.mean0 / self.var0), tau2


def _out_of_fold_rms(x: np.ndarray, f: np.ndarray) -> float:
    """Root mean square of the out-of-fold residuals of the isotonic fit (folds by position:
    run ``i`` in fold ``i % FOLDS``; deterministic)."""
    n = x.size
    folds = min(FOLDS, n)
    res = np.empty(n)
    for j in range(folds):
        test = np.arange(n) % folds == j
        if (~test).sum() == 0:
            res[test] = f[test] - np.mean(f)
            continue
        res[test] = f[test] - _predict(_isotonic(x[~test], f[~test]), x[test])
    return float(np.sqrt(np.mean(res ** 2)))


def partial_bounds(rm: Any, row: int | None, u: np.ndarray, cand: int | None,
                   finals: Sequence[float], obs: Sequence[float], obs_vars: Sequence[float],
                   beta: float, weight: Any) -> Any:
    """Bounds at ``x_t`` (:class:`erahbo.gp.round.InnerBounds`) after ``x_t``'s ``finals`` and
    the partial runs' observations ``obs`` of their finals, each with its noise variance
    ``obs_vars`` added to a seed's noise (an infinite one: that run says nothing).

    First the round model's own posterior after the finals (:meth:`inner`, eq. 19's noise
    ``Sigma_hat / k``); then each partial run, one Gaussian conditioning on ``z`` with noise
    ``sigma^2 + tau2``, where ``sigma^2 = k Sigma_hat / k`` is one seed's noise in that model
    (a partial run with ``tau2 = 0`` counts as a final return would). ``inner``'s posterior is
    Gaussian conditioning of the posterior given the other points (``N(mu_o, v_o)``) on the
    pooled mean (:func:`erahbo.gp.round.observe`), linear in it: two calls at different means
    give ``mu_o``, ``v_o`` and the noise (no finals: the conditioning starts from
    ``N(mu_o, v_o)``). The variance GP's posterior is ``inner``'s after the finals (fewer than
    2: the round model's one-seed placeholder). Works with both engines.
    """
    from erahbo.gp.round import InnerBounds

    fin = [float(v) for v in finals]
    k = max(len(fin), 1)
    ybar = float(np.mean(fin)) if fin else 0.0
    s2 = float(np.var(fin, ddof=1)) if len(fin) > 1 else float(rm.s2_one)
    ib = rm.inner(row, u, cand, ybar, s2, k, beta, weight)
    delta = max(1.0, abs(ybar))
    ib2 = rm.inner(row, u, cand, ybar + delta, s2, k, beta, weight)
    gain = (ib2.mu_f - ib.mu_f) / delta
    post_var = ib.sd_f ** 2
    if gain <= 1e-15 or post_var <= 0.0:  # the model gives x_t's own returns no weight
        return InnerBounds(ib.mu_f, ib.sd_f, ib.mu_var, ib.sd_var, weight, beta, ib.log_var)
    gain = min(gain, 1.0 - 1e-12)
    noise = post_var / gain  # the pooled mean's noise, Sigma_hat / k
    if fin:
        mu, var = ib.mu_f, post_var
    else:  # nothing observed yet: the posterior given the other points
        mu, var = (ib.mu_f - gain * ybar) / (1.0 - gain), post_var / (1.0 - gain)
    seed_noise = noise * k
    for z, tau2 in zip(obs, obs_vars, strict=True):
        if not math.isfinite(float(tau2)):
            continue
        g = var / (var + seed_noise + float(tau2))
        mu, var = mu + g * (float(z) - mu), var * (1.0 - g)
    return InnerBounds(mu, math.sqrt(max(var, 0.0)), ib.mu_var, ib.sd_var, weight, beta,
                       ib.log_var)


@dataclass(frozen=True)
class Verdict:
    """What :meth:`EarlyStop.verdict` decided for a trial at a checkpoint.

    Attributes
    ----------
    stop : bool
        Stop the trial's runs (``ucb_mv <= B_t``).
    ucb_mv, B_t : float
        The early-stop bound at ``x_t`` and the round's incumbent bound (NaN: not computed).
    preds, pred_vars : tuple of float
        The runs' observations of their finals and their noise variances
        (:meth:`CurveModel.observation`; ``inf``: the checkpoint says nothing).
    bounds : object
        The :class:`~erahbo.gp.round.InnerBounds` (None: not computed).
    reason : str
        ``"dominated"``, ``"continue"``, or why no verdict was computed (``"initial"``,
        ``"too few curves"``, ``"no models"``, ``"off"``).
    prior_ucb_mv : float
        The bound without the partial runs (``x_t``'s final returns only; none: the posterior
        given the other configurations); a stop needs ``ucb_mv`` below it (NaN: not
        computed).
    """

    stop: bool
    ucb_mv: float
    B_t: float
    preds: tuple[float, ...] = ()
    pred_vars: tuple[float, ...] = ()
    bounds: Any = None
    reason: str = "continue"
    prior_ucb_mv: float = float("nan")


_NAN = float("nan")


class EarlyStop:
    """The early-stop part of one study: its completed curves, its curve model, its verdicts.

    Parameters
    ----------
    n_checkpoints : int
        ``C``, the checkpoints of a run (the last one's return is the final return).
    beta : float
        ``early_stop_beta``.
    min_configs : int
        Configurations with completed runs before anything is stopped.
    """

    def __init__(self, n_checkpoints: int, *, beta: float = 1.0,
                 min_configs: int = MIN_CONFIGS) -> None:
        if int(n_checkpoints) < 2:
            raise ValueError(f"n_checkpoints={n_checkpoints} must be >= 2 (a run stopped "
                             "before its final checkpoint needs one before it)")
        self.n_checkpoints = int(n_checkpoints)
        self.beta = float(real_above(0.0, False)("early_stop_beta", beta))
        self.min_configs = int(min_configs)
        self._curves: list[np.ndarray] = []
        self._configs: set[int] = set()
        self._model: CurveModel | None = None

    @classmethod
    def from_options(cls, options: Any, n_checkpoints: int) -> EarlyStop:
        """The part of validated :class:`erahbo.Options` with ``early_stop`` on."""
        if not options.early_stop:
            raise ValueError("EarlyStop.from_options: early_stop is off in these options; "
                             "build the Optimizer with early_stop=True")
        return cls(n_checkpoints, beta=options.early_stop_beta)

    def add_curves(self, config_id: int, curves: np.ndarray) -> None:
        """Completed runs of ``config_id``: ``curves (n, C)`` (their returns at every
        checkpoint, on the scale the study is told)."""
        c = np.atleast_2d(np.asarray(curves, dtype=float))
        if c.shape[1] != self.n_checkpoints:
            raise ValueError(f"add_curves: curves of shape {c.shape} must have "
                             f"{self.n_checkpoints} checkpoints per run")
        self._curves.extend(c)
        self._configs.add(int(config_id))
        self._model = None

    @property
    def n_configs(self) -> int:
        """Configurations with completed runs."""
        return len(self._configs)

    @property
    def ready(self) -> bool:
        """Whether enough configurations have completed runs to stop anything."""
        return self.n_configs >= self.min_configs

    @property
    def model(self) -> CurveModel:
        """The curve model of the completed runs so far (refitted after new curves)."""
        if self._model is None:
            self._model = CurveModel.fit(np.asarray(self._curves))
        return self._model

    def verdict(self, opt: Any, trial: Any, checkpoint: int, values: Sequence[float]
                ) -> Verdict:
        """Whether ``trial``'s runs, at ``checkpoint`` with returns ``values`` (one per seed),
        stop (module docstring). Nothing is told; ``opt`` is the study's
        :class:`erahbo.Optimizer` and ``trial`` its pending trial."""
        if not opt.options.early_stop:
            return Verdict(False, _NAN, _NAN, reason="off")
        if trial.phase == "init":
            return Verdict(False, _NAN, _NAN, reason="initial")
        if not self.ready or not 0 <= int(checkpoint) < self.n_checkpoints - 1:
            return Verdict(False, _NAN, _NAN, reason="too few curves")
        r = opt.open_round(trial.round)
        if r is None or r.rm is None or not math.isfinite(r.B_t):
            return Verdict(False, _NAN, _NAN, reason="no models")
        m = self.model
        pv = [m.observation(int(checkpoint), float(v)) for v in values]
        preds, pvars = tuple(p for p, _ in pv), tuple(v for _, v in pv)
        d = opt.data
        row = d.row_of(trial.config_id)
        finals = [] if row is None else list(d.returns[row])
        beta = max(float(r.beta_stop), self.beta)
        from erahbo.gp.bounds import adaptive_rule
        from erahbo.gp.round import one_seed_bound, own_run_bound

        one_seed = opt.replication.one_seed_beta(float(opt.options.beta))

        def bound(obs: tuple, obs_vars: tuple) -> Any:  # a tail measure also hears the finals
            ib = partial_bounds(r.rm, r.row0, r.u, r.cand, finals, obs, obs_vars, beta,
                                opt.weight)
            if not finals:  # eq. 12's bound after x_t's first run: the models' own
                return ib if one_seed is None else one_seed_bound(ib, one_seed, r.f_B)
            mean, s2, k = d.stats(row)  # the pooled statistics the optimizer's own rule reads
            return own_run_bound(ib, mean, s2, k, opt.weight, float(opt.options.beta))

        ib = bound(preds, pvars)
        # the bound without the partial runs: the models' own, before this run's evidence
        prior = float(bound((), ()).ucb_mv)
        evidence = ib.ucb_mv < prior - 1e-12 * max(1.0, abs(prior))
        stop = adaptive_rule(ib.ucb_mv, r.B_t) and evidence  # eq. 12, on the run's evidence
        return Verdict(stop, float(ib.ucb_mv), float(r.B_t), preds, pvars, ib,
                       "dominated" if stop else "continue", prior)
