"""The risk measure of a benchmark method: the study's, or its own (``erahbo-mv3``,
``optuna-tpe-k10-cvar``: :mod:`erahbo.experiments.methods`).

A study has one risk measure (:attr:`erahbo.experiments.StudySettings.measure`): the tasks'
ground truth, hence every method's regret, is in its terms. A method optimizes it unless its
name sets its own measure (``risk`` in its options).
"""

from __future__ import annotations

from typing import Any

from erahbo.experiments.methods import MethodSpec
from erahbo.risk import MeanVariance, RiskMeasure, measure_from_json

__all__ = ["method_measure", "method_risk_options", "without_risk_options"]


def method_risk_options(method: MethodSpec, settings: Any) -> dict[str, Any]:
    """The risk options a method's optimizer runs with: the study's
    (:meth:`StudySettings.risk_options`), or the method's own when its name sets a measure
    (``risk`` in its options; ``q`` from the name, else the study's, else 0.1; MV's ``alpha``
    from the name)."""
    own = {k: method.options[k] for k in ("risk", "q", "alpha") if k in method.options}
    if "risk" not in own:
        return settings.risk_options()
    if own["risk"] == "mv":
        return {"alpha": float(own.get("alpha", settings.alpha))}
    q = own.get("q", settings.q if settings.risk in ("cvar", "quantile") else None)
    return {"risk": own["risk"], **({} if q is None else {"q": q})}


def method_measure(method: MethodSpec, settings: Any) -> RiskMeasure:
    """The risk measure a method optimizes in a study (:func:`method_risk_options`); the
    peers that have their own objective: SMAC3 with one seed a trial the mean (MV with alpha
    0, risk-neutral), BTS-RED MV with the study's ``alpha``."""
    if method.method == "smac" and int(method.options.get("seeds_per_trial", 1)) < 2:
        return MeanVariance(0.0)
    if method.method == "bts-red":
        return MeanVariance(settings.alpha)
    return measure_from_json(method_risk_options(method, settings))


def without_risk_options(options: dict[str, Any]) -> dict[str, Any]:
    """A method's options less those of its risk measure (:func:`method_risk_options`
    passes them)."""
    return {k: v for k, v in options.items() if k not in ("risk", "q", "alpha", "c")}
