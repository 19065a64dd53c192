"""The grammar of benchmark method names, shared by parsing and display.

``erahbo-<variant><value>`` (``exp``, ``sig``, ``bs``, ``b`` and the codes of the strategy parts'
options; the parser decides which variants exist), ``<base>-k<K>`` (fixed seeds per
configuration), the peers named without a k (``smac``, ``bts-red``), ``bts-red-n<N>``
(BTS-RED with a batch budget of N runs), a ``-p<Q>`` suffix (Q configurations in flight) and a
risk suffix (the method's own risk measure: ``-cvar``, ``-cvar<q>``, ``-quantile``,
``-quantile<q>``, ``-mv<alpha>``).
The parser
(:mod:`erahbo.experiments.methods`) and the labels and ordering of reports
(:mod:`erahbo.analysis.traces`) read names with these patterns only; :func:`parallel_label`
is the label of a method run ``q`` configurations at a time.
"""

from __future__ import annotations

import re

ERAHBO_VARIANT_RE = re.compile(r"^erahbo-([a-z]+)(\d+(?:\.\d+)?)$")
FIXED_K_RE = re.compile(r"^(rahbo|gpucb|random|optuna-tpe)-k(\d+)$")
PARALLEL_RE = re.compile(r"^(.+)-p(\d+)$")
FIXED_K_LABELS = {"rahbo": "RAHBO", "gpucb": "GP-UCB", "random": "Random",
                  "optuna-tpe": "Optuna TPE"}
BTS_RED_RE = re.compile(r"^bts-red-n(\d+)$")
BTS_RED_BATCH = 10  # N, the batch budget of ``bts-red``
PEER_LABELS = {"smac": "SMAC3", "bts-red": f"Mean-Var-BTS-RED (N={BTS_RED_BATCH})"}
RISK_SUFFIX_RE = re.compile(r"^(.+)-(cvar|quantile|mv)(\d+(?:\.\d+)?)?$")
SMAC_K_RE = re.compile(r"^smac-k(\d+)$")  # SMAC3 with K seeds per trial (a sample measure)
RISK_NEUTRAL_PEERS = ("smac",)  # peers that optimize the mean return whatever alpha is


def bts_red_label(n: int) -> str:
    """Label of Mean-Var-BTS-RED with a batch budget of ``n`` runs."""
    return f"Mean-Var-BTS-RED (N={int(n)})"


def risk_label(label: str, risk: str, value: str | None) -> str:
    """``RAHBO (k=2)`` -> ``RAHBO (k=2, CVaR)``, ``ERAHBO`` -> ``ERAHBO (MV alpha=3)``: the
    label of a method with its own risk measure (``value``: its ``q`` or MV's ``alpha``)."""
    name = {"cvar": "CVaR", "quantile": "quantile", "mv": "MV"}[risk]
    text = name if value is None else (f"MV alpha={value}" if risk == "mv"
                                       else f"{name}_{value}")
    if label.endswith(")"):
        return f"{label[:-1]}, {text})"
    return f"{label} ({text})"


def parallel_label(label: str, q: int) -> str:
    """``RAHBO (k=2)`` -> ``RAHBO (k=2, 4 in parallel)``, ``ERAHBO`` -> ``ERAHBO (4 in
    parallel)``: the label of a method with ``q`` configurations in flight."""
    if label.endswith(")"):
        return f"{label[:-1]}, {q} in parallel)"
    return f"{label} ({q} in parallel)"
