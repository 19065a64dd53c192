"""Diagnostics of a finished study: patterns in its result that call for other settings.

:func:`diagnose` reads a :class:`erahbo.optimizer.Result` (history, rounds, configurations)
and returns :class:`Finding` objects, each with a stable ``code`` and a message that says
what was seen, why it matters and what to change. The CLI prints them after ``optimize``,
``resume`` and ``tune`` and stores them in ``summary.json``; nothing here prints.

The checks come from patterns measured on real RL outcomes (``docs/results``):

``k_max_rounds``
    Most ERAHBO rounds ran to ``k_max``: the stopping rule rarely showed a configuration to be
    worse than the incumbent bound ``B_t``. That happens when many configurations tie with
    the incumbent, e.g. on DQN Acrobot, where most configurations never learn and return the
    same value on every seed: each of them then costs ``k_max`` runs. With ``beta_stop = 0``
    (or an exponential schedule, near 0 for most of the budget) the rule compares posterior
    means and stops such ties after ``k_min`` seeds; 0.25 helps less
    (``docs/results/acrobot_beta_stop``).
``zero_spread_incumbent``
    The incumbent returned the same value on every seed while other configurations reached a
    higher mean: with risk aversion, a configuration that reliably fails (never learns)
    can have the best MV. That is the objective working as defined, but rarely what a user
    wants.
``many_failures``
    A large share of the training runs failed.
``sporadic_failures``
    Some configurations failed on some of their seeds but not on all (RL runs that diverge on
    an unlucky seed): the finding gives their share among the configurations with 2 or more
    runs (one run cannot both fail and succeed) and what the failure policy did with
    them. Under ``"penalize"`` a failed seed counts at the penalty in its configuration's mean
    and variance, and the configuration stays a candidate and a possible incumbent; under
    ``"exclude"`` each such configuration was dropped at its first failure, which discards
    good configurations when failures are sporadic.
``outlying_returns``
    Runs returned finite values far off the scale of the study's returns (a diverged run
    returning -1e6 among returns in [-1, 2]; :mod:`erahbo.optimizer.outliers`). Each was treated
    as a failed run; the finding names them (configuration, seed, value) and says what the
    policy did. It also names an ``ok`` run that is off the scale of the study's other returns
    but was counted as it is: one from the study's first trial, before the study had a scale
    to judge it by; its configuration's estimates are then distorted.
``one_seed_incumbent``
    The recommendation has one seed while the study ran 20 or more runs: its spread was
    never measured (its variance is the variance GP's extrapolation) and one lucky return can
    set its MV estimate. erahbo's default (``recommend_min_seeds = 2``) recommends a
    configuration with two or more seeds whenever one exists; the finding says so, or that
    no configuration has two seeds.
``posterior_outside_runs``
    Configurations whose posterior estimate lies above every return they produced, by more
    than four times the study's typical seed spread (three or more such configurations, or
    one with two or more seeds at half that): the models' posterior contradicts the runs it
    saw (typically one-seed runs in a region without replicated configurations,
    ``docs/results/one_seed_models``). Such estimates raise ``B_t`` and decide which
    configurations get more seeds.
``near_duplicates``
    Many runs went to new configurations within a small distance (unit cube) of an earlier
    one: each starts an estimate of its own where the earlier configuration could have been
    run again. ``replicate_within`` (erahbo's default 0.3, continuous spaces) reruns the
    evaluated configuration instead, or, with ``replicate_lookahead`` (the default there),
    whichever of it and the new one the lookahead judges more informative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from erahbo.optimizer.failure import COUNTED
from erahbo.optimizer.outliers import OUTLIER_PREFIX, outlier_error, return_scale

if TYPE_CHECKING:
    from erahbo.optimizer.records import Result

__all__ = ["Finding", "diagnose", "near_duplicates"]

# rounds whose end says something about the stopping rule (not the budget or the table)
_RULE_ENDS = ("dominated", "k_max")


@dataclass(frozen=True)
class Finding:
    """One diagnostic of a study.

    Attributes
    ----------
    code : str
        Stable identifier: ``k_max_rounds``, ``zero_spread_incumbent``, ``many_failures``,
        ``sporadic_failures``, ``outlying_returns``, ``one_seed_incumbent``,
        ``posterior_outside_runs``, ``near_duplicates``.
    message : str
        What was seen and what to change, in one paragraph.
    """

    code: str
    message: str


def diagnose(
    result: Result,
    *,
    k_max_share: float = 0.5,
    failure_share: float = 0.2,
    min_rounds: int = 10,
    sporadic_share: float = 0.1,
    min_runs: int = 20,
    duplicate_radius: float = 0.05,
    duplicate_share: float = 0.2,
) -> list[Finding]:
    """Findings about ``result`` that suggest other settings (empty when nothing stands out).

    Parameters
    ----------
    result : Result
        A study's result (:meth:`erahbo.Optimizer.result`, :func:`erahbo.optimize`).
    k_max_share : float
        ``k_max_rounds`` is reported when at least this share of the ERAHBO rounds that ended
        by the stopping rule or by ``k_max`` ended by ``k_max``.
    failure_share : float
        ``many_failures`` is reported when at least this share of the training runs failed.
    min_rounds : int
        No ``k_max_rounds`` finding from fewer rounds than this.
    sporadic_share : float
        ``sporadic_failures`` is reported when at least this share of the evaluated
        configurations with 2 or more runs had some failed and some successful runs.
    min_runs : int
        No ``one_seed_incumbent``, ``posterior_outside_runs`` or ``near_duplicates`` finding
        from a study of fewer runs than this.
    duplicate_radius, duplicate_share : float
        ``near_duplicates`` is reported when at least ``duplicate_share`` of the runs went to
        configurations within ``duplicate_radius`` (Euclidean, unit cube of the search space)
        of an earlier configuration (continuous and mixed spaces; needs ``result.space``).

    Returns
    -------
    list of Finding
    """
    findings: list[Finding] = []
    for check in (_k_max_rounds(result, k_max_share, min_rounds), _zero_spread(result),
                  _failures(result, failure_share), _sporadic(result, sporadic_share),
                  _outlying(result), _one_seed_incumbent(result, min_runs),
                  _posterior_outside(result, min_runs),
                  _near_duplicates(result, min_runs, duplicate_radius, duplicate_share)):
        if check is not None:
            findings.append(check)
    return findings


def _k_max_rounds(result: Result, share: float, min_rounds: int) -> Finding | None:
    r = result.rounds
    if result.method != "erahbo" or r.empty:
        return None
    ended = r[r["phase"].isin(("bo", "challenger")) & r["stop_reason"].isin(_RULE_ENDS)]
    if len(ended) < min_rounds:
        return None
    at_max = ended[ended["stop_reason"] == "k_max"]
    frac = len(at_max) / len(ended)
    if frac < share:
        return None
    k_max = int(result.settings.get("k_max", at_max["k"].max()))
    kmm = result.settings.get("k_max_means")
    seeds = f"{k_max} seeds; {kmm} while the means differ: k_max_means" if kmm else f"{k_max} seeds"
    if result.settings.get("stopping", "ucb") == "race":
        rule, advice = "racing rule", "a smaller k_max"
    else:
        bs = ended["beta_stop"].to_numpy(dtype=float)
        beta_stop = float(np.median(bs[np.isfinite(bs)])) if np.isfinite(bs).any() else 1.0
        rule = f"stopping rule (beta_stop={beta_stop:g})"
        advice = ("beta_stop=0.25, or 0 when many configurations tie" if beta_stop > 0.25
                  else "beta_stop=0") + ", or a smaller k_max"
    return Finding(
        "k_max_rounds",
        f"{frac:.0%} of {len(ended)} ERAHBO rounds ran to k_max ({seeds}): the {rule} "
        "rarely showed a configuration to be worse than the incumbent, so each chosen "
        "configuration cost k_max runs. That is expected when they are close to the "
        "incumbent, and wasteful when many tie with it (e.g. many that never learn and return "
        f"the same value on every seed). To spend fewer runs per configuration try {advice}; "
        "docs/results/beta_stop_study and docs/results/acrobot_beta_stop measure the "
        "trade-off.",
    )


def _zero_spread(result: Result) -> Finding | None:
    c = result.configs
    if result.incumbent_id is None or c.empty:
        return None
    inc = c[c["config_id"] == result.incumbent_id]
    if inc.empty:
        return None
    mean, var, k = (float(inc["mean"].iloc[0]), float(inc["var"].iloc[0]),
                    int(inc["k"].iloc[0]))
    best_mean = float(c["mean"].max())
    scale = max(abs(mean), abs(best_mean), 1e-12)
    if k < 3 or var > 1e-12 * scale**2 or best_mean <= mean:
        return None
    if not (c["var"] > 1e-12 * scale**2).any():
        return None  # no configuration has a spread: a deterministic objective, not a risk
    return Finding(
        "zero_spread_incumbent",
        f"The incumbent (config {result.incumbent_id}) returned {mean:.6g} on all {k} seeds "
        f"(no spread), while another configuration reached a mean of {best_mean:.6g}: under "
        "the risk aversion alpha, a configuration that reliably fails (e.g. never learns) can "
        "have the best MV. If that is not what you want, lower alpha or narrow the search "
        "space.",
    )


def _failures(result: Result, share: float) -> Finding | None:
    h = result.history
    if h.empty:
        return None
    final = h[h["status"] != "retried"]
    bad = final[final["status"] != "ok"]
    if len(final) == 0 or len(bad) / len(final) < share:
        return None
    errors = bad["error"].dropna()
    first = str(errors.iloc[0]).splitlines()[0] if len(errors) else "no message"
    return Finding(
        "many_failures",
        f"{len(bad)} of {len(final)} training runs failed ({result.failures}); first error: "
        f"{first}. Check the objective on one failing configuration and seed; "
        "failures='exclude' stops proposing configurations that failed.",
    )


def _sporadic(result: Result, share: float) -> Finding | None:
    h = result.history
    if h.empty or "status" not in h or "config_id" not in h:
        return None
    failed = (h["status"] != "ok").groupby(h["config_id"]).sum()  # (n_configs,)
    ok = (h["status"] == "ok").groupby(h["config_id"]).sum()
    some = failed[(failed > 0) & (ok > 0)].index
    n_cfg = int((failed + ok >= 2).sum())  # one run cannot both fail and succeed
    if len(some) == 0 or len(some) / n_cfg < share:
        return None
    n_some = len(some)
    head = (f"{n_some} of the {n_cfg} configurations with 2 or more runs ({n_some / n_cfg:.0%}) "
            "failed on some seeds but not on all (sporadic failures, e.g. RL runs that diverge "
            "on unlucky seeds). ")
    policy = result.failures
    if policy == "exclude":
        what = ("failures='exclude' dropped each of them at its first failure, which discards "
                "good configurations when failures are sporadic; failures='penalize' keeps "
                "them and counts each failed seed as a bad outcome in their mean and variance.")
    elif policy == "retry":
        n_retried = int((h["status"] == "retried").sum())
        n_pen = int((h["status"] == "penalized").sum())
        what = (f"failures='retry' re-ran {n_retried} failed seed(s) with new seeds; "
                f"{n_pen} failed on every retry and counted at the penalty (the configuration's "
                "risk). A failure that a retry clears does not enter MV: if failures depend on "
                "the configuration, failures='penalize' prices each one at once (at high "
                "failure rates it misleads the variance model; docs/robustness.md).")
    else:
        inc = result.incumbent_id
        inc_fail = int(failed.get(inc, 0)) if inc is not None else 0
        inc_runs = int(failed.get(inc, 0) + ok.get(inc, 0)) if inc is not None else 0
        tail = (f" The incumbent (config {inc}) failed on {inc_fail} of its {inc_runs} runs."
                if inc is not None and inc_fail else "")
        what = ("Each failed seed counted at the penalty (the lower quartile of the feasible "
                "returns, at most its configuration's lowest value) in its configuration's "
                "mean and variance, so their MV carries the "
                "risk; they stayed candidates and possible incumbents (configurations failing "
                f"on at least half of their runs are never recommended).{tail} If failures "
                "depend on the seed only, check the training code for numerical instability.")
    return Finding("sporadic_failures", head + what)


_SHOWN = 5  # outlying runs named in the message


def _run_names(rows: Any) -> str:
    """``config 3 seed 17`` for the first :data:`_SHOWN` rows of a history slice."""
    names = [f"config {int(c)} seed {int(sd)}" for c, sd in zip(rows["config_id"], rows["seed"],
                                                                 strict=True)]
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return ", ".join(names[:_SHOWN]) + more


def _outlying(result: Result) -> Finding | None:
    h = result.history
    if h.empty or not {"error", "status", "return", "config_id", "seed"} <= set(h.columns):
        return None
    flagged = h[h["error"].map(lambda e: isinstance(e, str) and e.startswith(OUTLIER_PREFIX))]
    ok = h[h["status"] == "ok"]
    center = return_scale(ok["return"].to_numpy(dtype=float))
    raw_ok = ok[ok["return"].map(lambda v: outlier_error(float(v), center) is not None)]
    if flagged.empty and raw_ok.empty:
        return None
    parts = []
    if not flagged.empty:
        first = str(flagged["error"].iloc[0]).splitlines()[0][len(OUTLIER_PREFIX):]
        n_pen = int((flagged["status"] == "penalized").sum())
        n_ret = int((flagged["status"] == "retried").sum())
        n_exc = int((flagged["status"] == "failed").sum())
        what = "; ".join(x for x in (
            f"{n_ret} re-run with a new seed" if n_ret else "",
            f"{n_pen} counted at the penalty, a bad run on the returns' own scale" if n_pen
            else "",
            f"{n_exc} made its configuration infeasible" if n_exc else "",
        ) if x)
        parts.append(
            f"{len(flagged)} of {len(h)} runs returned values far off the scale of the study's "
            f"returns and were treated as failed runs ({what}): {_run_names(flagged)}; the "
            f"first {first}."
            + (" A seed that diverges again on all its retries is counted at the penalty: the "
               "configuration's MV then carries the risk." if n_ret else "")
        )
    if not raw_ok.empty:
        parts.append(
            f"{len(raw_ok)} counted run(s) are off the scale of the study's other returns but "
            f"came before the study had a scale to judge them by (its first trial): "
            f"{_run_names(raw_ok)}, returning {float(raw_ok['return'].iloc[0]):.6g}. Their "
            "configurations' means and variances, and the models around them, are distorted: "
            "rerun the study with another seed, or fix the objective so that a diverged run "
            "raises or returns NaN."
        )
    return Finding("outlying_returns", " ".join(parts))


def _one_seed_incumbent(result: Result, min_runs: int) -> Finding | None:
    c = result.configs
    if len(result.history) < min_runs or c.empty or "rank" not in c.columns:
        return None
    inc = c[c["rank"] == 1]
    if inc.empty or int(inc["k"].iloc[0]) >= 2:
        return None
    cid = int(inc["config_id"].iloc[0])
    replicated = int((c["k"] >= 2).sum())
    why = (f"{replicated} configuration(s) have two or more seeds, but recommend_min_seeds="
           f"{result.settings.get('recommend_min_seeds', 1)} lets a one-seed configuration be "
           "the incumbent; erahbo's default, recommend_min_seeds=2, recommends one of them"
           if replicated else "no configuration has two seeds yet; run more seeds of the "
           "best ones (a larger budget, or k_min=2)")
    return Finding(
        "one_seed_incumbent",
        f"The recommendation, config {cid}, has one seed: its spread was never measured (its "
        "variance is the models' extrapolation from other configurations) and one lucky "
        f"return can set its MV estimate. {why[0].upper()}{why[1:]}.")


def _counted_returns(result: Result) -> Any:
    """The counted, finite returns of the history (``ok`` and ``penalized`` runs)."""
    h = result.history
    if h.empty or "return" not in h.columns:
        return h
    h = h[h["status"].isin(COUNTED)] if "status" in h.columns else h
    return h[np.isfinite(h["return"].to_numpy(float))]


def _posterior_outside(result: Result, min_runs: int) -> Finding | None:
    c, h = result.configs, _counted_returns(result)
    if len(h) < min_runs or c.empty or "mv" not in c.columns:
        return None
    top = h.groupby("config_id")["return"].max()  # (configs,) the highest return of each
    spread = c.loc[c["k"] >= 2, "std"].to_numpy(float)
    spread = spread[np.isfinite(spread)]
    lo, hi = np.quantile(h["return"].to_numpy(float), [0.05, 0.95])
    margin = max(4.0 * float(np.median(spread)) if spread.size else 0.5 * (hi - lo),
                 0.1 * (hi - lo))
    ids = c["config_id"].to_numpy()
    est = c["mv"].to_numpy(float)
    most = top.reindex(ids).to_numpy(float)
    gap = est - most  # (configs,) estimate above the configuration's highest return
    bad = np.isfinite(gap) & (gap > margin)
    # one far estimate of a one-seed configuration can be the GP borrowing from better
    # neighbours; three, or a replicated configuration at half the margin, is the model
    replicated = np.isfinite(gap) & (gap > margin / 2) & (c["k"].to_numpy() >= 2)
    if margin <= 0 or not (bad.sum() >= 3 or replicated.any()):
        return None
    bad |= replicated
    w = int(np.flatnonzero(bad)[np.argmax(gap[bad])])
    k = int(c["k"].iloc[w])
    return Finding(
        "posterior_outside_runs",
        f"{int(bad.sum())} configuration(s) have a posterior estimate above every return they "
        f"produced by more than {margin:.3g} (four times the typical seed spread; half that for "
        "a configuration with two or more seeds), e.g. config "
        f"{int(ids[w])}: {k} run(s), highest return {most[w]:.4g}, estimate {est[w]:.4g}. The "
        "models' posterior contradicts the runs it saw: the mean GP took its shape from other "
        "configurations (one-seed runs read as precise where nothing is replicated, most "
        "often); such estimates raise B_t and decide which configurations get more seeds. "
        "Start new configurations with two seeds (k_min=2, k_init=2), or check the returns "
        "for outliers.")


def near_duplicates(U: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Which configurations are new near-duplicates of an earlier one.

    Parameters
    ----------
    U : numpy.ndarray
        ``(n, dim)`` encoded configurations (unit cube) in the order they were first run.
    radius : float
        Euclidean distance (unit cube) under which a configuration duplicates an earlier one.

    Returns
    -------
    near : numpy.ndarray
        ``(n,)`` bool: configuration ``i`` lies within ``radius`` of one of ``U[:i]``.
    of : numpy.ndarray
        ``(n,)`` int: the nearest earlier configuration (``-1`` for the first).
    """
    U = np.asarray(U, dtype=float)
    near = np.zeros(len(U), dtype=bool)
    of = np.full(len(U), -1)
    for i in range(1, len(U)):
        d = np.sqrt(((U[:i] - U[i]) ** 2).sum(axis=1))  # (i,)
        j = int(np.argmin(d))
        near[i], of[i] = bool(d[j] < radius), j
    return near, of


def _near_duplicates(result: Result, min_runs: int, radius: float,
                     share: float) -> Finding | None:
    space, c, h = result.space, result.configs, _counted_returns(result)
    if (space is None or space.is_finite or len(h) < min_runs or len(c) < 2
            or not set(space.names) <= set(c.columns)):
        return None
    U = np.array([space.encode({n: r[n] for n in space.names})
                  for _, r in c.iterrows()], dtype=float)  # (configs, dim) first-seen order
    near, of = near_duplicates(U, radius)
    ids = c["config_id"].to_numpy()
    runs = h["config_id"].isin(set(ids[near]))
    if float(runs.mean()) < share:
        return None
    anchor = np.bincount(of[near], minlength=len(U)).argmax()
    return Finding(
        "near_duplicates",
        f"{int(runs.sum())} of {len(h)} runs ({runs.mean():.0%}) went to {int(near.sum())} new "
        f"configuration(s) within {radius:g} (unit cube) of an earlier one, most around config "
        f"{int(ids[anchor])}: each starts its own estimate from one or two runs where the "
        "earlier configuration could have been run again. " + _replication_advice(result))


def _replication_advice(result: Result) -> str:
    """What the study's replication options did about near-duplicates, and the fix."""
    st = result.settings
    radius = st.get("replicate_within", 0.0)
    if radius and st.get("replicate_lookahead", False):
        return (f"Within replicate_within={radius:g} the lookahead (replicate_lookahead, "
                "erahbo's default on continuous spaces) chose these new configurations: their "
                "runs lower the risk measure's integrated posterior variance more than a "
                "replicate's would; replicate_lookahead=False always reruns the nearest "
                "evaluated configuration instead.")
    return ("replicate_within (erahbo's default 0.3 on continuous spaces) reruns the "
            f"evaluated configuration instead; replicate_within is {radius} in this study.")
