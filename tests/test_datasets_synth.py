"""Tests of erahbo.datasets: synthetic tasks."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from erahbo.datasets.synth import PAPER_LIKE, SynthSpec, make_suite, make_task
from erahbo.datasets.tradeoff import tradeoff_stats
from erahbo.datasets.validate import check_task, validate_task
from erahbo.datasets.warping import process_outcomes

# -- synthetic tasks ------------------------------------------------------------------


def test_synth_shapes_determinism_metadata():
    a = make_task("synth_ppo_brax_halfcheetah", n_configs=64, n_seeds=10, seed=5)
    b = make_task("synth_ppo_brax_halfcheetah", n_configs=64, n_seeds=10, seed=5)
    c = make_task("synth_ppo_brax_halfcheetah", n_configs=64, n_seeds=10, seed=6)
    assert a.returns.shape == (64, 10) and a.seeds == list(range(1, 11))
    np.testing.assert_array_equal(a.returns, b.returns)
    pd.testing.assert_frame_equal(a.configs, b.configs)
    assert not np.array_equal(np.nan_to_num(a.returns), np.nan_to_num(c.returns))
    m = a.meta
    assert m["synthetic"] is True and m["domain"] == "synthetic" and m["domain_like"] == "brax"
    assert m["generator"] == "erahbo.datasets.synth" and "not real RL data" in m["provenance"]
    infeasible = np.isnan(a.returns).any(axis=1).sum()
    assert infeasible == m["n_nan_configs"] == round(182 / 512 * 64)
    check_task(a)


def test_synth_space_and_outcome_shape():
    space_mod = pytest.importorskip("erahbo.space")
    task = make_task("synth_ppo_cc_pendulum", seed=0)
    space = space_mod.SearchSpace.from_json(task.meta["search_space"])
    assert space.names == list(task.configs.columns)
    lr = task.configs["learning_rate"]
    assert lr.min() >= 1e-6 and lr.max() <= 0.1
    r = validate_task(task)[0].returns
    mean, std = r.mean(axis=1), r.std(axis=1, ddof=1)
    assert std.max() > 10 * np.median(std[mean < np.quantile(mean, 0.1)])  # heteroscedastic
    assert np.median(stats.skew(r, axis=1)) < 0  # left-skewed (collapses)
    low = task.meta["synth_spec"]["low"]
    near_low = (r < low + 0.1 * (task.meta["synth_spec"]["high"] - low)).mean(axis=1)
    assert ((near_low > 0.05) & (near_low < 0.9) & (mean > np.median(mean))).any()  # bimodal


def test_synth_risk_knob_and_tradeoff():
    # The generator (not only the bundled files): with risk = 1 the best-mean configuration
    # collapses on some seeds and loses MV; with risk = 0 there is no trade-off.
    strong, none = [], []
    for name in ("synth_ppo_cc_pendulum", "synth_dqn_cc_cartpole", "synth_sac_brax_fast"):
        spec = next(s for s in PAPER_LIKE if s.name == name)
        for risk, out in ((1.0, strong), (0.0, none)):
            task = make_task(replace(spec, risk=risk), n_configs=256, n_seeds=30, seed=11)
            out.append(tradeoff_stats(task, n_designs=2))
            clean = validate_task(task)[0]
            best = int(np.argmax(process_outcomes(clean, "vizier").returns.mean(axis=1)))
            collapsed = (clean.returns[best] == spec.low).mean()  # collapsed runs end at low
            assert (0.03 < collapsed < 0.4) if risk else collapsed == 0.0
    assert all(s.best_mean_rank > 1 for s in strong)
    assert np.mean([s.best_mean_regret for s in strong]) >= 0.1
    assert max(s.best_mean_regret for s in none) < 0.02


def test_synth_spec_validation():
    with pytest.raises(ValueError, match="algorithm 'a2c' is unknown"):
        SynthSpec("a2c", "cc", "x", 0.0, 1.0)
    with pytest.raises(ValueError, match="low < high"):
        SynthSpec("ppo", "cc", "x", 1.0, 0.0)
    with pytest.raises(ValueError, match="risk=-1"):
        SynthSpec("ppo", "cc", "x", 0.0, 1.0, risk=-1.0)
    with pytest.raises(ValueError, match=r"nan_frac=1\.5"):
        SynthSpec("ppo", "cc", "x", 0.0, 1.0, nan_frac=1.5)
    tiny = make_task(SynthSpec("sac", "cc", "x", 0.0, 1.0, nan_frac=1.0), n_configs=4, n_seeds=2)
    assert np.isnan(tiny.returns).any(axis=1).all()


def test_make_suite_names_and_domains():
    suite = make_suite(21, seed=2, n_configs=16, n_seeds=3)
    names = [t.name for t in suite]
    assert len(set(names)) == 21 and names[19] == PAPER_LIKE[0].name + "_r1"
    first19 = [t.meta["domain_like"] for t in suite[:19]]
    assert (first19.count("cc"), first19.count("brax"), first19.count("xland")) == (10, 4, 5)
    with pytest.raises(ValueError, match="n_tasks"):
        make_suite(0)
