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

__all__ = ["StudyMeasure", "method_measure", "method_risk_options", "without_risk_options"]


class StudyMeasure:
    """The risk measure of a study's settings (a mixin of the replay's
    :class:`~erahbo.experiments.StudySettings` and the continuous benchmark's
    ``ContinuousSettings``): both have the fields ``risk``, ``alpha`` and ``q``."""

    risk: str
    alpha: float
    q: float | None

    def check_measure_options(self) -> None:
        """Refuse ``q`` outside a tail measure and an ``alpha`` other than 1 outside MV."""
        if self.q is not None and self.risk not in ("cvar", "quantile"):
            raise ValueError(f"q={self.q!r} does nothing with risk={self.risk!r}: it is the "
                             "share of worst seeds of risk='cvar' or 'quantile'; drop q or "
                             "set risk")
        if self.risk != "mv" and float(self.alpha) != 1.0:
            raise ValueError(f"alpha={self.alpha!r} does nothing with risk={self.risk!r}: it "
                             "weighs MV's variance; drop alpha or set risk='mv'")

    @property
    def measure(self) -> RiskMeasure:
        """The study's risk measure (MV with ``alpha`` by default)."""
        given = {"alpha": self.alpha, "q": self.q}
        return measure_from_json({"risk": self.risk,
                                  **{k: v for k, v in given.items() if v is not None}})

    def risk_options(self) -> dict[str, Any]:
        """The optimizer's options of the study's measure: ``alpha`` (MV, as before measures
        were a part), or ``risk`` and ``q`` (another measure)."""
        if self.risk == "mv":
            return {"alpha": self.alpha}
        return {k: v for k, v in self.measure.to_json().items() if k in ("risk", "q", "c")}


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
