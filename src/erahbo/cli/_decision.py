"""The best configurations and why the incumbent wins, for the terminal, JSON and Markdown."""

from __future__ import annotations

import math
from typing import Any

from erahbo.cli._console import compact
from erahbo.risk import objective_name

#: Rows of the best-configurations table in the terminal, summary.json and tune.md.
TOP = 5

_COLS = (("rank", "rank"), ("config_id", "config"), ("k", "k"), ("mean", "mean"),
         ("std", "std"), ("mv", "MV"), ("lcb_mv", "LCB_MV"), ("ucb_mv", "UCB_MV"),
         ("n_failed", "failed"))


def _name(result: Any) -> str:
    """The study's objective as reports name it (``MV``, ``CVaR_0.1``, ...) of a result."""
    return objective_name(getattr(result, "measure", None))


def objective_of(opt: Any) -> str:
    """The objective's name of an optimizer (its options' measure)."""
    return objective_name(opt.options.measure)


def _heads(result: Any) -> list[str]:
    """Column heads of the best-configurations table: ``MV``, ``LCB_MV``, ``UCB_MV`` named
    after the study's risk measure (``CVaR_0.1``, ``LCB``, ``UCB`` for CVaR)."""
    name = _name(result)
    if name == "MV":
        return [h for _, h in _COLS]
    rename = {"mv": name, "lcb_mv": "LCB", "ucb_mv": "UCB"}
    return [rename.get(key, h) for key, h in _COLS]


def estimate_line(result: Any) -> str:
    """``estimated MV of the incumbent: x``, or for another measure ``estimated CVaR_0.1 of
    the incumbent: x (return units)``."""
    name = _name(result)
    text = f"estimated {name} of the incumbent: {result.incumbent_mv:.6g}"
    return text if name == "MV" else text + " (return units)"


def _cell(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, (bool, str)):
        return str(x)
    if isinstance(x, float):
        return compact(x, 4)
    try:
        return str(int(x))
    except (TypeError, ValueError):
        return str(x)


def top_rows(result: Any, n: int = TOP) -> list[dict[str, Any]]:
    """The ``n`` best-ranked configurations as JSON records (hyperparameters included)."""
    from erahbo.recommendation import top_configs

    top = top_configs(result.configs, n)
    out = []
    for rec in top.to_dict("records"):
        out.append({k: (None if v is None or (isinstance(v, float) and math.isnan(v))
                        else (v.item() if hasattr(v, "item") else v)) for k, v in rec.items()})
    return out


def why(result: Any) -> str:
    """One sentence on why the incumbent wins ("" when there is none)."""
    from erahbo.recommendation import explain_incumbent

    if result.incumbent is None or not len(result.configs):
        return ""
    return explain_incumbent(result.configs, risk_neutral=result.method == "gpucb",
                             measure=result.measure)


def print_top(result: Any, console: Any, n: int = TOP) -> None:
    """The best configurations (no hyperparameters: 9 narrow columns, fits 80 columns)."""
    from rich.table import Table

    rows = top_rows(result, n)
    if not rows:
        return
    name = _name(result)
    table = Table(title=f"best {len(rows)} of {len(result.configs)} configurations "
                  f"(rank by LCB_{name})", title_justify="left")
    for head in _heads(result):
        table.add_column(head, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(*[_cell(r.get(key)) for key, _ in _COLS])
    console.print(table)
    sentence = why(result)
    if sentence:
        console.print(sentence[0].upper() + sentence[1:], markup=False, highlight=False)


def markdown_top(result: Any, n: int = TOP) -> list[str]:
    """The best configurations as a Markdown table with their hyperparameters, then why."""
    rows = top_rows(result, n)
    if not rows:
        return []
    names = [c for c in result.configs.columns if c not in {key for key, _ in _COLS}
             and c != "var"]
    heads = _heads(result) + names
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for r in rows:
        lines.append("| " + " | ".join([_cell(r.get(key)) for key, _ in _COLS]
                                       + [_cell(r.get(nm)) for nm in names]) + " |")
    sentence = why(result)
    return lines + (["", sentence[0].upper() + sentence[1:]] if sentence else [])


def unspent_note(result: Any) -> str:
    """Why a finished study counted fewer runs than its budget ("" when it used them all):
    fewer runs left than a new configuration starts with (2 seeds, a sample variance; 1 with
    ``k_min = 1`` or ``k_init = 1``), or else a finite table with no configuration left to
    run."""
    budget = result.settings.get("budget")
    if budget is None or result.n_evals >= budget:
        return ""
    h = result.history
    spent = int(result.n_evals)
    if {"status", "phase"} <= set(h.columns):  # failed runs count toward the budget too
        skip = ("warm",) if result.settings.get("initial_in_budget", True) else ("warm", "init")
        spent = int((h["status"].isin(("ok", "penalized", "retried", "failed"))
                     & ~h["phase"].isin(skip)).sum())
    left = int(budget) - spent
    if left <= 0:
        return ""
    from erahbo.optimizer.options import min_seeds_of  # scipy, pandas: not at start-up

    st = result.settings
    need = min_seeds_of(st.get("method"), st.get("k_init"), st.get("k_min"), st.get("k"))
    if left >= need:  # a round could have started
        return (f"{left} run(s) of the budget of {budget} left unspent: no candidate "
                "configuration could take another seed (each at its seed cap or excluded)")
    return (f"{left} run(s) of the budget of {budget} left unspent: a new configuration needs "
            f"at least 2 seeds (a sample variance), so a study ends when fewer are left")
