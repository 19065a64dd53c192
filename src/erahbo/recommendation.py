"""The recommendation and why: every evaluated configuration ranked by ``LCB_MV`` (Sec. 3).

The incumbent is ``argmax LCB_MV`` over the evaluated configurations (eq. inc_lcb), with
``LCB_MV(x) = LCB_f(x) - alpha * UCB_var(x)`` at confidence ``beta``. :func:`configs_table`
builds :attr:`erahbo.Result.configs` (one row per configuration: its sample statistics, the
posterior MV estimate, ``[LCB_MV, UCB_MV]`` and its rank), :func:`explain_incumbent` says in
one sentence why the incumbent wins, and :func:`explain_verification` what a gap between a
measured and an estimated MV means.

>>> import pandas as pd
>>> t = pd.DataFrame({"config_id": [0, 3], "k": [4, 10], "mean": [83.9, 183.0],
...                   "std": [61.8, 167.0], "n_failed": [0, 0], "mv": [85.0, 120.0],
...                   "lcb_mv": [40.0, 10.0], "ucb_mv": [130.0, 230.0], "rank": [1, 2]})
>>> explain_incumbent(t).split(";")[0]
'config 0 is recommended because it has the highest lower bound LCB_MV (40)'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from erahbo.gp.bounds import lcb_mv, mean_variance, to_variance, ucb_mv
from erahbo.risk import (
    MeanVariance,
    RiskLike,
    RiskMeasure,
    as_risk,
    chi2_variance_bound,
    objective_name,
)

__all__ = ["CONFIG_COLUMNS", "RULES", "configs_table", "explain_incumbent", "explain_verification",
           "mv_standard_error", "objective_name", "sample_lcb_mv", "sample_mv_bound",
           "seeds_note",
           "top_configs"]

#: Columns of :attr:`erahbo.Result.configs` after ``config_id`` and the hyperparameters.
CONFIG_COLUMNS = ("k", "mean", "std", "var", "n_failed", "mv", "lcb_mv", "ucb_mv", "rank",
                  "rule")

#: Values of the ``rule`` column: how the rank-1 configuration was chosen.
RULES = {
    "lcb_mv": "the highest lower bound LCB_MV (eq. inc_lcb)",
    "well_sampled": "the lower bound of a configuration's own runs (eq. 9 on its sample mean "
                    "less one standard error and its sample variance at its one-sided "
                    "chi-square bound) with at least recommend_seeds seeds (a tail measure: "
                    "its sample value, from at least ceil(1/q) seeds)",
    "sample_mv": "the highest sample MV (before the models are fit)",
}


def configs_table(
    config_ids: Sequence[int],
    configs: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    ybar: np.ndarray,
    s2: np.ndarray,
    k: np.ndarray,
    *,
    posterior: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None,
    measure: RiskLike,
    weight: RiskLike,
    beta: float,
    eligible: np.ndarray | None = None,
    failures: Mapping[int, int] | None = None,
    incumbent: int | None = None,
    rule: str | None = None,
    log_var: bool = False,
) -> pd.DataFrame:
    """One row per evaluated configuration, with the bounds the recommendation compares.

    Parameters
    ----------
    config_ids : sequence of int, length n
    configs : sequence of dict, length n
        Hyperparameter values of each configuration.
    names : sequence of str
        Hyperparameter names (one column each; missing values are None).
    ybar, s2, k : numpy.ndarray, each (n,)
        Sample mean, sample variance and seed count of each configuration.
    posterior : tuple of numpy.ndarray, each (n,), or None
        ``(mu_f, sd_f, mu_var, sd_var)`` of the round model at the configurations; None
        before the models are fit (the MV estimate is then the sample MV and the bounds NaN).
    measure : erahbo.risk.RiskMeasure or float
        The study's risk measure, of which ``mv`` is the estimate (a float: MV's ``alpha``,
        ``MV = f - alpha * rho^2``).
    weight : erahbo.risk.RiskMeasure or float
        The decision's risk measure (GP-UCB's is risk-neutral: it ranks by ``LCB_f``).
    beta : float
        Confidence of the bounds (``mu +- sqrt(beta) * sigma``).
    eligible : numpy.ndarray of bool, (n,), optional
        Configurations that may be recommended (None: all); the others get no rank.
    failures : mapping, optional
        Failed runs per configuration id.
    incumbent : int, optional
        Row of the recommendation when a rule other than the highest bound chose it
        (``recommend_seeds``); it gets rank 1, the others follow by their bound.
    rule : str, optional
        How the rank-1 configuration was chosen, a key of :data:`RULES` (its ``rule``
        entry; the other rows get None). Default: ``"sample_mv"`` without a posterior,
        ``"well_sampled"`` when ``incumbent`` is not the highest bound, else ``"lcb_mv"``.
    log_var : bool
        The posterior's variance part is of ``log rho^2`` (``var_noise = "log"``): the
        estimate is ``exp(mu_var)``, the bounds map through ``exp``
        (:func:`erahbo.gp.bounds.to_variance`).

    Returns
    -------
    pandas.DataFrame
        ``config_id``, the hyperparameters, then :data:`CONFIG_COLUMNS`; ``rank`` 1 is the
        incumbent (highest ``lcb_mv``; sample MV before the first fit), ``<NA>`` for
        configurations that may not be recommended; ``rule`` says on the rank-1 row how it
        was chosen. Rows in order of first evaluation.
    """
    ybar = np.asarray(ybar, dtype=float)
    s2 = np.asarray(s2, dtype=float)
    n = ybar.shape[0]
    if posterior is None:
        mv = as_risk(measure).value(ybar, s2)
        lo = hi = np.full(n, np.nan)
        score = as_risk(weight).value(ybar, s2)
    else:
        mf, sdf, mvar, sdv = (np.asarray(a, dtype=float) for a in posterior)
        mv = as_risk(measure).value(mf, to_variance(mvar, None, log_var))
        lo = np.asarray(lcb_mv(mf, sdf, mvar, sdv, weight, beta, log_var=log_var), dtype=float)
        hi = np.asarray(ucb_mv(mf, sdf, mvar, sdv, weight, beta, log_var=log_var), dtype=float)
        score = lo
    ok = np.ones(n, dtype=bool) if eligible is None else np.asarray(eligible, dtype=bool)
    score = np.where(ok & np.isfinite(score), score, -np.inf)
    order = np.argsort(-score, kind="stable")
    if incumbent is not None and np.isfinite(score[incumbent]):
        order = np.concatenate([[incumbent], order[order != incumbent]])
    rank = pd.array([pd.NA] * n, dtype="Int64")
    for r, i in enumerate(order, start=1):
        if np.isfinite(score[i]):
            rank[i] = r
    if rule is None:  # a rank 1 other than the highest bound is the well-sampled rule's
        rule = ("sample_mv" if posterior is None
                else "well_sampled" if n and order[0] != np.argmax(score) else "lcb_mv")
    if rule not in RULES:
        raise ValueError(f"configs_table: rule={rule!r} must be one of {sorted(RULES)}")
    rules: list[str | None] = [None] * n
    if n and np.isfinite(score[order[0]]):
        rules[int(order[0])] = rule
    fails = failures or {}
    shown = np.where(np.asarray(k) >= 2, s2, np.nan)  # one seed: no sample variance to show
    return pd.DataFrame({
        "config_id": np.asarray(config_ids, dtype=int),
        **{nm: [c.get(nm) for c in configs] for nm in names},
        "k": np.asarray(k).astype(int), "mean": ybar, "std": np.sqrt(np.maximum(shown, 0.0)),
        "var": shown, "n_failed": [int(fails.get(int(c), 0)) for c in config_ids],
        "mv": mv, "lcb_mv": lo, "ucb_mv": hi, "rank": rank, "rule": rules,
    })


def top_configs(configs: pd.DataFrame, n: int = 5) -> pd.DataFrame:
    """The ``n`` best-ranked rows of :attr:`erahbo.Result.configs`, best first."""
    ranked = configs[configs["rank"].notna()].sort_values("rank")
    return ranked.head(int(n))


def _g(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1e3 else f"{x:.0f}"


def _pair(a: float, b: float) -> str:
    """``"a vs b"`` with as many significant digits as it takes to tell them apart."""
    sa, sb = _g(a), _g(b)
    digits = 4
    while sa == sb and a != b and digits <= 12:
        sa, sb = f"{a:.{digits}g}", f"{b:.{digits}g}"
        digits += 1
    return f"{sa} vs {sb}"


def explain_incumbent(configs: pd.DataFrame, *, risk_neutral: bool = False,
                      measure: RiskMeasure | None = None) -> str:
    """One sentence on why the rank-1 configuration is the incumbent.

    ``risk_neutral`` (GP-UCB): the bounds are those of ``f``, the rule ``argmax LCB_f``.
    ``measure``: the study's risk measure (:mod:`erahbo.risk`; None or MV: the sentences say
    MV); another measure is named in place of MV and described in return units.

    It names the rule (highest ``LCB_MV``, the sample MV of a well-sampled configuration
    under ``recommend_seeds``, or the sample MV before the models were fit) and,
    when a configuration with a higher sample mean lost, why: its wider bounds (few seeds or a
    large spread) or a lower MV estimate. Empty when nothing can be recommended.
    """
    top = top_configs(configs, len(configs))
    if top.empty:
        return ""
    _, z = as_risk(0.0 if measure is None else measure).well_sampled_rule(1)
    text = _why(top, risk_neutral, z > 0) + " " + seeds_note(top.iloc[0])
    if measure is None or isinstance(measure, MeanVariance):
        return text
    return text.replace("MV", measure.label) + f" The objective: {measure.describe()}."


def seeds_note(inc: pd.Series) -> str:
    """How many seeds the recommendation ``inc`` (a row of ``Result.configs``) has; with one,
    that its spread is not measured (issue 37)."""
    cid, k = int(inc["config_id"]), int(inc["k"])
    if k >= 2:
        return f"Config {cid} has k = {k} seeds."
    return (f"Config {cid} has one seed: its spread is not measured (its variance is the "
            "models' extrapolation from other configurations), so its MV is a guess; give it "
            "more seeds before trusting it (recommend_min_seeds=2, erahbo's default, "
            "recommends a configuration with two or more).")


def _why(top: pd.DataFrame, risk_neutral: bool, less_se: bool = True) -> str:
    """The rule's sentence of :func:`explain_incumbent` (``top``: configurations by rank;
    ``less_se``: the well-sampled rule subtracts a standard error, as under MV)."""
    inc = top.iloc[0]
    cid = int(inc["config_id"])
    bounded = not pd.isna(inc["lcb_mv"])
    rule = inc["rule"] if "rule" in top.columns and isinstance(inc["rule"], str) else None
    if rule is None:  # a table without the column: the rank-1 row's bound tells the rule
        top_lcb = top.iloc[1:]["lcb_mv"].max() if len(top) > 1 else -np.inf
        rule = ("well_sampled" if bounded and top_lcb > inc["lcb_mv"]
                else "lcb_mv" if bounded else "sample_mv")
    if rule == "well_sampled" and len(top) > 1:  # recommend_seeds: the sample MV of many seeds
        rival = top.iloc[1:].sort_values("lcb_mv", ascending=False).iloc[0]
        own = ("own-run lower bound (sample mean less one standard error, sample variance "
               "at its chi-square bound)" if less_se else "sample value")
        return (f"config {cid} is recommended because, with k = {int(inc['k'])} seeds, its "
                f"{own} is the best among the well-sampled "
                f"configurations and at least the sample MV of config {int(rival['config_id'])} "
                f"(k = {int(rival['k'])}), which has the highest lower bound LCB_MV "
                f"({_pair(rival['lcb_mv'], inc['lcb_mv'])}): with many seeds a "
                "configuration's own runs are trusted over the models' smoothing.")
    if bounded:
        bound = "LCB_f (risk-neutral)" if risk_neutral else "LCB_MV"
        text = (f"config {cid} is recommended because it has the highest lower bound {bound} "
                f"({_g(inc['lcb_mv'])})")
        others = top.iloc[1:]
        if (others["lcb_mv"] > inc["lcb_mv"]).any():  # recommend_min_seeds: one seed lost
            text += (" among the configurations with two or more seeds (a one-seed "
                     "configuration's spread is not measured: recommend_min_seeds)")
    else:
        text = (f"config {cid} is recommended because it has the highest sample MV "
                f"({_g(inc['mv'])}; the models are not fit yet)")
    better = top.iloc[1:]
    better = better[better["mean"] > inc["mean"]]
    if better.empty:
        if len(top) > 1:
            text += "; no other configuration has a higher sample mean"
        return text + "."
    rival = better.sort_values("mean", ascending=False).iloc[0]
    rid = int(rival["config_id"])
    reason = f"its MV estimate is lower ({_pair(rival['mv'], inc['mv'])})"
    if rival["std"] > inc["std"]:
        reason += (f": its spread (std {_pair(rival['std'], inc['std'])}) costs more than "
                   "its mean gains")
    else:  # the posterior, not the sample: the models pool neighbouring configurations' runs
        reason += (": the models' posterior (which pools nearby configurations' runs) puts its "
                   "mean lower or its variance higher than its own seeds do")
    if bounded and not pd.isna(rival["lcb_mv"]) and rival["mv"] >= inc["mv"]:
        spread = (f"std {_g(rival['std'])} over k = {int(rival['k'])} seeds"
                  if int(rival["k"]) >= 2 else "one seed: no sample std")
        reason = (f"its MV estimate is higher ({_pair(rival['mv'], inc['mv'])}) but less "
                  f"certain: its bounds [{_g(rival['lcb_mv'])}, {_g(rival['ucb_mv'])}] are "
                  f"wider ({spread}), so its lower bound is lower")
    return (f"{text}; config {rid} has a higher sample mean "
            f"({_pair(rival['mean'], inc['mean'])}) but {reason}.")


def mv_standard_error(std: Any, n: Any, alpha: RiskLike) -> Any:
    """Standard error of a sample MV ``mean - alpha * var`` over ``n`` seeds.

    ``sqrt(std^2 / n + alpha^2 * 2 var^2 / (n - 1))`` (the variance of a sample variance of
    normal returns is ``2 var^2 / (n - 1)``); NaN for ``n < 2``. Scalars or arrays of the
    same shape ``(m,)``. ``alpha`` may be a risk measure: its plug-in's standard error
    (:meth:`erahbo.risk.RiskMeasure.standard_error`).
    """
    return as_risk(alpha).standard_error(std, n)


def sample_mv_bound(
    ybar: Any, s2: Any, k: Any, weight: RiskLike, z: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Each configuration's sample MV (eq. 5 on its sample mean and variance) and that MV less
    ``z`` standard errors (:func:`mv_standard_error`): what its own runs say, and how surely.

    ``ybar, s2, k``: ``(n,)`` sample means, sample variances and seed counts. Returns two
    ``(n,)`` arrays (the bound NaN where ``k < 2``). Used by the ``recommend_seeds`` rule (z 1)
    and the challenger rounds (z 1.5).
    """
    ybar, s2 = np.asarray(ybar, dtype=float), np.asarray(s2, dtype=float)
    sample = mean_variance(ybar, s2, weight)
    return sample, sample - z * mv_standard_error(np.sqrt(np.maximum(s2, 0.0)), k, weight)


def sample_lcb_mv(ybar: Any, s2: Any, k: Any, weight: RiskLike, z: float = 1.0) -> np.ndarray:
    """Eq. 9's ``LCB^MV`` on each configuration's own runs: the measure (eq. 5) of
    ``LCB^f = ybar - z sqrt(s2 / k)`` and ``UCB^var = s2 (k - 1) / chi2_{k-1}(Phi(-z))``, the
    one-sided bound of a sample variance of ``k`` normal returns at the same confidence as
    the mean's (``z = 0``: the plug-in, the sample value itself).

    ``ybar, s2, k``: ``(n,)`` sample means, sample variances and seed counts. Returns ``(n,)``
    (NaN where ``k < 2``). The well-sampled rule of the recommender reads it
    (:class:`erahbo.optimizer.recommender.Recommender`).

    Why not the sample MV less a standard error (:func:`sample_mv_bound`): a configuration
    gets many seeds because its runs looked good, and a low sample variance is part of that
    luck; the standard error of a sample variance is proportional to the sample variance
    itself, so a lucky low one also had a small standard error (Optuna's two-peaks test: a
    noisy peak, variance 1.1, with 16 seeds of sample variance 0.41 outbid a quiet one). The
    chi-square bound scales the sample variance by ``(k - 1) / chi2_{k-1}(Phi(-z))`` (1.52 at
    16 seeds, z = 1), and the two bounds add as eq. 9 adds ``LCB^f`` and ``UCB^var``.
    """
    ybar, s2 = np.asarray(ybar, dtype=float), np.asarray(s2, dtype=float)
    k = np.asarray(k, dtype=float)
    if z <= 0:
        return np.where(k >= 2, mean_variance(ybar, s2, weight), np.nan)
    from scipy.stats import norm  # scipy: not at start-up (the CLI)

    kk = np.maximum(k, 2.0)  # (n,): defined everywhere, NaN below 2 seeds at the end
    s2 = np.maximum(s2, 0.0)
    upper = chi2_variance_bound(s2, kk, norm.cdf(-z))
    lower_f = ybar - z * np.sqrt(s2 / kk)
    return np.where(k >= 2, mean_variance(lower_f, upper, weight), np.nan)


def explain_verification(
    estimate: float, measured: float, std: float, n: int, alpha: RiskLike
) -> str:
    """One sentence on the gap between the estimated and the measured MV (or the study's
    risk measure) of the incumbent.

    Parameters
    ----------
    estimate : float
        The optimizer's posterior MV of the incumbent (the measure's estimate).
    measured : float
        Its sample MV on ``n`` fresh seeds (``mean - alpha * var``; the measure's sample
        value, e.g. the mean of the worst ``q`` share of the fresh returns).
    std : float
        Sample standard deviation of the fresh returns.
    n : int
        Fresh seeds with a finite return.
    alpha : float or erahbo.risk.RiskMeasure
        Risk aversion on the raw return scale (``MV = f - alpha * rho^2``), or the study's
        risk measure: the standard error is its plug-in's
        (:meth:`erahbo.risk.RiskMeasure.standard_error`).
    """
    name = objective_name(alpha)
    se = mv_standard_error(std, n, alpha)
    if not (math.isfinite(estimate) and math.isfinite(measured) and math.isfinite(se)):
        return (f"the measured {name} cannot be compared with the estimate (too few finite "
                "returns).")
    gap = measured - estimate
    z = abs(gap) / se if se > 0 else math.inf
    text = (f"the measured {name} differs from the estimate by {_g(gap)}, "
            f"{z:.1f} standard errors of the measurement (SE {_g(se)} over {n} seeds)")
    if z <= 2.0:
        curse = (" (a lower measurement is also expected: the incumbent is the best of many "
                 "noisy estimates, the winner's curse)") if gap < 0 else ""
        return (text + ": within the noise of a verification on few seeds" + curse +
                "; more fresh seeds narrow it (the SE shrinks as 1/sqrt(n)).")
    if gap < 0:
        return (text + ": the estimate is optimistic, as expected of the best of many noisy "
                "estimates (winner's curse: the incumbent was chosen partly for its lucky "
                "seeds); the measured value is the one to trust.")
    return text + ": the configuration does better on fresh seeds than its tuning seeds showed."
