"""The benchmark in the study's risk measure (issue 40, item 4): the replay's ground truth and
regret, the methods' own measures, the peers' sample CVaR, the recommendation's interval and
``benchmarks/risk_benchmark.py``."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from erahbo.datasets.format import write_task
from erahbo.datasets.synth import make_task
from erahbo.experiments import StudySettings, parse_method, prepare_task
from erahbo.experiments.measures import method_measure, method_risk_options
from erahbo.experiments.peers import sample_mv
from erahbo.experiments.runner import run_repetition
from erahbo.risk import CVaR, MeanVariance, Quantile

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def raw():
    return make_task("synth_ppo_cc_acrobot", n_configs=40, n_seeds=12, seed=5)


def _settings(**kw):
    return StudySettings(budget=40, protocol="user", outcome_processing="minmax", **kw)


def test_a_cvar_study_scores_every_configuration_by_its_sample_cvar(raw):
    """The ground truth of a CVaR study is each configuration's sample CVaR_q of its stored
    seeds, and a trace's values and regret are in it (normalized by optimum - table mean)."""
    s = _settings(risk="cvar", q=0.25)
    task = prepare_task(raw, outcome_processing="minmax", measure=s.measure)
    assert task.risk == CVaR(q=0.25)
    np.testing.assert_allclose(task.mv, CVaR(q=0.25).truth(task.returns))
    trace, meta = run_repetition(task, parse_method("erahbo"), 0, s)
    np.testing.assert_allclose(trace["config_mv"], task.mv[trace["config_id"]])
    np.testing.assert_allclose(trace["simple_regret"],
                               task.mv.max() - task.mv[trace["incumbent_id"]])
    assert meta["risk"] == {"risk": "cvar", "q": 0.25}
    assert meta["init_regret"] == pytest.approx(task.mv.max() - task.mv.mean())


def test_a_task_scored_in_another_measure_than_the_study_is_refused(raw):
    """A task prepared in MV replayed in a CVaR study would score the wrong regret: refused,
    naming both measures."""
    task = prepare_task(raw, outcome_processing="minmax")
    with pytest.raises(ValueError, match=r"MV.*CVaR_0\.1"):
        run_repetition(task, parse_method("erahbo"), 0, _settings(risk="cvar", q=0.1))


def test_study_settings_refuse_options_the_measure_does_not_read():
    """``q`` in an MV study and ``alpha`` in a CVaR study do nothing: one clear error each."""
    with pytest.raises(ValueError, match=r"q=0\.1 does nothing with risk='mv'"):
        _settings(q=0.1)
    with pytest.raises(ValueError, match=r"alpha=3\.0 does nothing with risk='cvar'"):
        _settings(risk="cvar", alpha=3.0)
    with pytest.raises(ValueError, match=r"q=0\.7"):
        _settings(risk="cvar", q=0.7)


def test_a_method_name_sets_its_own_measure_else_the_study_s():
    """``<method>-cvar[<q>]``, ``-quantile[<q>]`` and ``-mv<alpha>`` set a method's measure
    (q from the name, else the study's, else 0.1); a plain name optimizes the study's."""
    cvar = _settings(risk="cvar", q=0.25)
    mv = _settings(alpha=2.0)
    assert method_measure(parse_method("erahbo"), cvar) == CVaR(q=0.25)
    assert method_measure(parse_method("rahbo-k2-cvar"), cvar) == CVaR(q=0.25)
    assert method_measure(parse_method("rahbo-k2-cvar0.1"), cvar) == CVaR(q=0.1)
    assert method_measure(parse_method("erahbo-cvar"), mv) == CVaR(q=0.1)
    assert method_measure(parse_method("erahbo-quantile0.2"), mv) == Quantile(q=0.2)
    assert method_measure(parse_method("erahbo-mv3"), cvar) == MeanVariance(3.0)
    assert method_measure(parse_method("erahbo"), mv) == MeanVariance(2.0)
    assert method_risk_options(parse_method("erahbo"), mv) == {"alpha": 2.0}
    # the peers with an objective of their own say which
    assert method_measure(parse_method("smac"), cvar) == MeanVariance(0.0)  # risk-neutral
    assert method_measure(parse_method("smac-k5"), cvar) == CVaR(q=0.25)
    assert method_measure(parse_method("bts-red"), cvar) == MeanVariance(1.0)
    spec = parse_method("optuna-tpe-k10-cvar")
    assert (spec.method, spec.options, spec.label) == (
        "optuna-tpe", {"k": 10, "risk": "cvar"}, "Optuna TPE (k=10, CVaR)")
    assert parse_method("erahbo-mv0.3").label == "ERAHBO (MV alpha=0.3)"
    with pytest.raises(ValueError, match="-mv needs its alpha"):
        parse_method("erahbo-mv")
    with pytest.raises(ValueError, match="SMAC3 optimizes its own objective"):
        parse_method("smac-cvar")
    with pytest.raises(ValueError, match=r"q=0\.9"):
        parse_method("erahbo-cvar0.9")


def test_mv_suffix_at_the_study_s_alpha_replays_as_the_plain_method(raw):
    """``erahbo-mv1`` in an MV study with alpha 1 is erahbo itself: the same decisions."""
    s = _settings()
    task = prepare_task(raw, outcome_processing="minmax")
    a, _ = run_repetition(task, parse_method("erahbo"), 0, s)
    b, _ = run_repetition(task, parse_method("erahbo-mv1"), 0, s)
    assert a.equals(b)


def test_the_tpe_peer_s_value_is_the_sample_measure_of_its_seeds():
    """A trial's value: MV's ``mean - alpha var(ddof 1)``; CVaR's the mean of the worst
    ``q k`` of its k returns; the quantile's ``np.quantile``."""
    vals = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    assert sample_mv(vals, 0.5) == pytest.approx(4.5 - 0.5 * np.var(vals, ddof=1))
    assert sample_mv(vals, MeanVariance(0.5)) == sample_mv(vals, 0.5)
    assert sample_mv(vals, CVaR(q=0.2)) == pytest.approx(0.5)
    assert sample_mv(vals, Quantile(q=0.1)) == pytest.approx(np.quantile(vals, 0.1))


def test_a_tpe_replay_in_a_cvar_study_reports_its_sample_cvar(raw):
    """The TPE peer in a CVaR study: every trial runs k seeds and is scored in CVaR truth."""
    pytest.importorskip("optuna")
    s = _settings(risk="cvar", q=0.25)
    task = prepare_task(raw, outcome_processing="minmax", measure=s.measure)
    trace, meta = run_repetition(task, parse_method("optuna-tpe-k4-cvar"), 0, s)
    assert len(trace) == 40 and set(trace.groupby("round").size()) == {4}
    np.testing.assert_allclose(trace["incumbent_mv"], task.mv[trace["incumbent_id"]])
    assert meta["method_risk"] == {"risk": "cvar", "q": 0.25}
    assert "final_interval" not in meta  # no models, no interval


def test_the_recommendation_s_interval_brackets_the_models_estimate(raw):
    """The final 90 % interval of an erahbo replay is eq. 9's bounds of the method's measure
    at beta 1.645^2: ordered, and the truth given is the method's measure at the
    recommendation (here MV at alpha 3 in a CVaR study)."""
    s = _settings(risk="cvar", q=0.1)
    task = prepare_task(raw, outcome_processing="minmax", measure=s.measure)
    trace, meta = run_repetition(task, parse_method("erahbo-mv3"), 0, s)
    lo, hi = meta["final_interval"]
    assert lo < hi and meta["interval_level"] == 0.9
    inc = int(trace["incumbent_id"].iloc[-1])
    assert meta["final_truth"] == pytest.approx(float(MeanVariance(3.0).truth(
        task.returns[inc])))
    assert meta["final_measure"] == "MV(alpha=3)"


def _script():
    spec = importlib.util.spec_from_file_location("risk_benchmark",
                                                  ROOT / "benchmarks" / "risk_benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["risk_benchmark"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.filterwarnings("ignore:task .* stores 12 seeds")
def test_risk_benchmark_script_runs_resumes_and_prints_the_table(raw, tmp_path):
    """Smoke test of benchmarks/risk_benchmark.py on a tiny table, one repetition: a row per
    method with the IQM [CI] at 50 runs and at the end, the coverage of the models' methods,
    the best alpha in hindsight per table; a rerun resumes (writes no trace again)."""
    rb = _script()
    path = write_task(raw, tmp_path / "tiny.parquet")
    methods = ["erahbo-cvar", "rahbo-k2-cvar", "mv-best-alpha"]
    where = rb.run([str(path)], tmp_path / "out", "cvar", 0.25, 60, 1, 0, methods, 1)
    files = sorted(where.rglob("*.parquet"))
    assert len(files) == 2 + len(rb.ALPHAS)
    mtimes = [f.stat().st_mtime_ns for f in files]
    rb.run([str(path)], tmp_path / "out", "cvar", 0.25, 60, 1, 0, methods, 1)
    assert [f.stat().st_mtime_ns for f in files] == mtimes
    text = rb.report(where, 60, methods)
    header = text.splitlines()[0]
    assert header == "| method | n | @50 | final | coverage 90% |"
    rows = {line.split(" | ")[0].strip("| ") for line in text.splitlines()[2:] if "|" in line}
    assert rows == {"erahbo-cvar", "rahbo-k2-cvar", "mv-best-alpha"}
    assert f"mv-best-alpha, alpha per table: {raw.name} " in text
    df = rb.load(where, 60)
    _, chosen = rb.best_alpha(df)
    finals = {m: np.mean([c[-1] for c in g["curve"]]) for m, g in df.groupby("method")}
    assert min(finals[f"erahbo-mv{a:g}"] for a in rb.ALPHAS) == pytest.approx(
        finals[f"erahbo-mv{chosen[raw.name]}"])
    # the paired comparison: one (table, repetition) pair; a method against itself is 0
    line = rb.paired(df, "erahbo-cvar", "mv-best-alpha", 60)
    assert line.startswith("IQM regret, erahbo-cvar minus mv-best-alpha (1 pairs, 95% CI")
    assert "@50 " in line and "final " in line
    assert rb.paired(df, "erahbo-cvar", "erahbo-cvar", 60).endswith(
        "@50 +0.000 [+0.000, +0.000]; final +0.000 [+0.000, +0.000]")
    assert "no common" in rb.paired(df, "erahbo-cvar", "optuna-tpe-k10-cvar", 60)
    # benchmarks/risk_tail_check.py reads the same traces: where the regret sits
    spec = importlib.util.spec_from_file_location("risk_tail_check",
                                                  ROOT / "benchmarks" / "risk_tail_check.py")
    tc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tc)
    (fam,) = tc.family([str(path)], "cvar", 0.25)
    assert re.fullmatch(rf"CVaR_0.25 {raw.name} +variance \d\.\d{{3}}  semi-deviation "
                        r"\d\.\d{3}", fam)
    got = tc.traces(where, [str(path)], "cvar", 0.25, "erahbo-cvar", 60)
    assert got.startswith("CVaR_0.25 erahbo-cvar after 60 runs (1 studies)")


def test_coverage_per_table_counts_misses_and_widths_of_both_intervals():
    """``coverage``: per method and table, then pooled ("all"), the share of studies whose
    stated interval holds the truth, the misses below / above, the median width, and the
    same for the models' interval alone; studies without an interval are left out."""
    import pandas as pd

    rb = _script()
    nan = np.nan
    df = pd.DataFrame({
        "method": ["m"] * 5, "task": ["a", "a", "a", "b", "b"],
        "lo": [0.0, 0.0, 0.5, 0.0, nan], "hi": [1.0, 0.4, 1.0, 2.0, nan],
        "m_lo": [0.0, 0.0, 0.5, 0.5, nan], "m_hi": [0.5, 0.4, 1.0, 1.0, nan],
        "truth": [0.7, 0.45, 0.2, 0.3, 0.3]})
    cov = rb.coverage(df).set_index("task")
    assert list(cov.index) == ["a", "b", "all"]
    a, b, pooled = cov.loc["a"], cov.loc["b"], cov.loc["all"]
    assert (a["n"], b["n"], pooled["n"]) == (3, 1, 4)
    assert a["coverage"] == pytest.approx(1 / 3) and b["coverage"] == 1.0
    assert (a["below"], a["above"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert a["width"] == pytest.approx(0.5) and b["width"] == pytest.approx(2.0)
    assert a["models coverage"] == 0.0 and b["models coverage"] == 0.0
    assert pooled["coverage"] == 0.5 and pooled["models width"] == pytest.approx(0.5)


def test_smac_k_grammar():
    """``smac-k<K>``: SMAC3 with K seeds per trial; a risk suffix only with K >= 2."""
    spec = parse_method("smac-k5-cvar")
    assert (spec.method, spec.label) == ("smac", "SMAC3 (k=5, CVaR)")
    assert spec.options == {"seeds_per_trial": 5, "max_config_calls": 3, "risk": "cvar"}
    with pytest.raises(ValueError, match="K >= 2"):
        parse_method("smac-k1")
    with pytest.raises(ValueError, match="SMAC3 optimizes its own objective"):
        parse_method("smac-cvar")


def test_smac_k_replay_costs_the_sample_cvar_of_its_trials(raw):
    """SMAC3 with k seeds per trial in a CVaR study: every trial is k consecutive runs of one
    configuration, the trace spends the budget in whole trials and is scored in CVaR."""
    pytest.importorskip("smac")
    s = _settings(risk="cvar", q=0.25)
    task = prepare_task(raw, outcome_processing="minmax", measure=s.measure)
    trace, meta = run_repetition(task, parse_method("smac-k4-cvar"), 0, s)
    assert meta["seeds_per_trial"] == 4 and meta["max_config_calls"] == 3
    assert len(trace) % 4 == 0 and 0 < len(trace) <= 40
    assert (trace.groupby("round").size() % 4 == 0).all()
    np.testing.assert_allclose(trace["incumbent_mv"], task.mv[trace["incumbent_id"]])
    with pytest.raises(ValueError, match="user's protocol"):
        run_repetition(task, parse_method("smac-k4-cvar"), 0, StudySettings(
            budget=40, protocol="paper", outcome_processing="minmax", risk="cvar", q=0.25))


@pytest.mark.filterwarnings("ignore:task .* stores 12 seeds")
def test_benchmark_cli_in_cvar_and_its_report_name_the_measure(raw, tmp_path, monkeypatch):
    """`erahbo benchmark --risk cvar --q 0.25`: the traces are scored in CVaR_0.25 and the
    report says so (its objective line, section titles, tables and figures), never "MV"."""
    from matplotlib.figure import Figure
    from typer.testing import CliRunner

    from erahbo.cli import app
    from erahbo.experiments.traces import find_trace_files, read_trace

    texts: list[str] = []
    original = Figure.savefig

    def record(self, *args, **kwargs):
        out = original(self, *args, **kwargs)  # (the report renames its texts before this)
        from matplotlib.text import Text

        texts.extend(t.get_text() for t in self.findobj(Text))
        return out

    monkeypatch.setattr(Figure, "savefig", record)
    path = write_task(raw, tmp_path / "tiny.parquet")
    out = tmp_path / "bench"
    res = CliRunner().invoke(app, ["benchmark", str(path), "--methods", "erahbo,rahbo-k2",
                                   "--repetitions", "2", "--budget", "30", "--protocol",
                                   "user", "--outcome-processing", "minmax", "--risk", "cvar",
                                   "--q", "0.25", "--workers", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    task = prepare_task(raw, outcome_processing="minmax", measure=CVaR(q=0.25))
    for f in find_trace_files(out):
        trace, meta = read_trace(f)
        assert meta["risk"] == {"risk": "cvar", "q": 0.25}
        np.testing.assert_allclose(trace["incumbent_mv"], task.mv[trace["incumbent_id"]])
    md = (out / "report" / "report.md").read_text()
    assert "- Objective: CVaR_0.25: the mean return of the worst 25 % of seeds" in md
    assert "## 1. Ranks of final CVaR_0.25 regret" in md
    assert not re.search(r"\bMV\b", md)
    tex = "".join(p.read_text() for p in (out / "report" / "tables").glob("*.tex"))
    assert "CVaR\\_0.25" in tex or "CVaR_0.25" in tex
    assert texts and not any(re.search(r"\bMV\b", t) for t in texts)
    assert any("CVaR_0.25" in t for t in texts)


def test_report_labels_and_order_of_the_risk_suffixes():
    """The report labels a method with its own measure as the parser does, and lists it right
    after the method without one."""
    from erahbo.analysis.traces import method_label, sort_methods

    names = ["smac-k5-cvar", "rahbo-k2-cvar", "erahbo-mv3", "rahbo-k2", "erahbo",
             "erahbo-cvar0.25", "optuna-tpe-k10-cvar"]
    for n in names:
        assert method_label(n) == parse_method(n).label
    order = sort_methods(names)
    assert order.index("erahbo-cvar0.25") == order.index("erahbo") + 1
    assert order.index("rahbo-k2-cvar") == order.index("rahbo-k2") + 1


@pytest.mark.parametrize("method", ["erahbo-cvar", "erahbo-mv3"])
def test_the_stated_interval_joins_the_models_and_the_recommendations_own_runs(raw, method):
    """Rule: the final interval of a replay is the measure's stated interval
    (``RiskMeasure.final_interval``) of the models' interval (``final_models_interval``,
    eq. 9 at 1.645) and the recommendation's ``final_k`` own runs: under CVaR the hull with
    the runs' interval from ceil(1/q) seeds (so it holds the models'), the models' alone
    below; under MV (alpha 3 here) the models' interval itself."""
    s = StudySettings(budget=60, protocol="user", outcome_processing="minmax", risk="cvar",
                      q=0.25)
    task = prepare_task(raw, outcome_processing="minmax", measure=s.measure)
    trace, meta = run_repetition(task, parse_method(method), 0, s)
    lo, hi = meta["final_interval"]
    m_lo, m_hi = meta["final_models_interval"]
    inc = int(trace["incumbent_id"].iloc[-1])
    k = int(meta["final_k"])
    seeds = trace.loc[trace["config_id"] == inc, "seed"]
    assert k == len(seeds)  # every run counted (user protocol)
    column = {int(label): c for c, label in enumerate(task.seeds)}
    own = [float(task.returns[inc, column[int(label)]]) for label in seeds]
    measure = s.measure if method == "erahbo-cvar" else MeanVariance(3.0)
    assert (lo, hi) == measure.final_interval(m_lo, m_hi, own, 0.9)
    if method == "erahbo-mv3" or k < CVaR(0.25).own_seeds:
        assert (lo, hi) == (m_lo, m_hi)
    else:
        assert lo <= m_lo and m_hi <= hi
