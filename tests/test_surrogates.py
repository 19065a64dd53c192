"""The stochastic surrogates of real tables and the known-truth tasks of the continuous
benchmark (:mod:`erahbo.objectives.surrogate`, :mod:`erahbo.objectives.known_truth`)."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from erahbo.datasets.format import TaskData
from erahbo.objectives.known_truth import ReadmeTask, make_task, task_names
from erahbo.objectives.surrogate import TableSurrogate, table_hash
from erahbo.objectives.surrogate_model import MixtureModel, loo_loss, pairwise_d2
from erahbo.space import SearchSpace

ROOT = Path(__file__).resolve().parents[1]
SPEC = {"lr": ("log", 1e-4, 1e-1), "width": ("int", 1, 8), "act": ("cat", ["tanh", "relu"])}
LS = {"lr": 0.15, "width": 0.5, "act": 0.7}


def rl_table(n: int = 48, seeds: int = 20) -> TaskData:
    """An RL-like table: runs that never learn return exactly the floor (-100), the others a
    skewed return that depends on lr and act, capped at 100 (an atom too)."""
    space = SearchSpace(SPEC)
    U = space.sobol_unit(n, seed=3)
    configs = pd.DataFrame([space.decode(u) for u in U])
    rng = np.random.default_rng(7)
    lr = np.log10(configs["lr"].to_numpy())
    relu = (configs["act"] == "relu").to_numpy()
    p_fail = 1.0 / (1.0 + np.exp(-2.5 * (np.abs(lr + 2.5) - 0.8)))  # (n,)
    level = 60 + 25 * relu - 20 * np.abs(lr + 2.5)  # (n,)
    fail = rng.random((n, seeds)) < p_fail[:, None]
    learn = level[:, None] - rng.gamma(2.0, 8.0, (n, seeds))  # left-skewed below the level
    R = np.where(fail, -100.0, np.minimum(learn + 20 * rng.random((n, seeds)), 100.0))
    meta = {"task": "rl_table", "search_space": space.to_json(), "domain": "cc"}
    return TaskData(configs=configs, returns=R, seeds=list(range(seeds)),
                    config_ids=np.arange(n), meta=meta)


@pytest.fixture(scope="module")
def surrogate() -> TableSurrogate:
    return TableSurrogate.from_table(rl_table(), lengthscales=LS)


def test_returns_are_deterministic_per_config_and_seed(surrogate):
    """The same (configuration, seed) always returns the same value, however it is asked
    (one call, a batch, another task object); other seeds or configurations differ."""
    c = surrogate.space.decode(surrogate.space.sobol_unit(3, seed=1)[1])
    batch = surrogate.sample(c, [5, 6, 7])
    assert [surrogate(c, s) for s in (5, 6, 7)] == batch
    again = TableSurrogate.from_table(rl_table(), lengthscales=LS)
    assert again.sample(dict(c), [5, 6, 7]) == batch
    assert len(set(surrogate.sample(c, range(40)))) > 10
    other = surrogate.space.decode(surrogate.space.sobol_unit(3, seed=1)[2])
    assert surrogate.sample(other, [5, 6, 7]) != batch


def test_exact_moments_match_many_draws(surrogate):
    """f and rho2 are the mean and variance of the seed distribution: over n draws the
    sample mean is within 5 standard errors of f, and the sample variance within 5 of its
    standard errors of rho2 (returns on [0, 1]: Var((y - f)^2) <= rho2)."""
    n = 4000
    for u in surrogate.space.sobol_unit(2, seed=11):
        c = surrogate.space.decode(u)
        y = np.asarray(surrogate.sample(c, range(n)))
        f, r2 = surrogate.f(c), surrogate.rho2(c)
        assert 0.0 <= y.min() and y.max() <= 1.0
        assert abs(y.mean() - f) <= 5 * math.sqrt(r2 / n) + 1e-12
        assert abs(y.var() - r2) <= 5 * math.sqrt(r2 / n) + 1.0 / n


def test_the_table_atoms_and_modes_survive(surrogate):
    """Where the kernel is sharp the surrogate returns each table configuration's own share
    of runs at the floor and its mode shapes: the floor is an atom (exactly 0 on the min-max
    scale) with the table's probability."""
    table = rl_table()
    sharp = TableSurrogate.from_table(table, lengthscales={k: 0.02 for k in LS})
    R = (table.returns - table.returns.min()) / np.ptp(table.returns)
    P, _, _ = sharp.model.predict(sharp.model.X)
    share = (R <= 0.0).mean(1)
    np.testing.assert_allclose(P[:, 0], share, atol=0.02)
    i = int(np.argmin(np.abs(share - 0.5)))
    y = np.asarray(sharp.sample(sharp.space.decode(sharp.model.X[i]), range(4000)))
    assert abs((y == 0.0).mean() - share[i]) < 0.05
    f, _ = sharp.model.moments(sharp.model.X)
    np.testing.assert_allclose(f, R.mean(1), atol=0.02)


def test_mv_star_beats_random_and_nearby_points(surrogate):
    """MV* (the mixed global search) is at least the MV of thousands of uniform points and of
    random perturbations of the argmax, for several alpha."""
    rng = np.random.default_rng(0)
    for alpha in (1.0, 10.0):
        star, u = surrogate.mv_max(alpha), surrogate.space.encode(surrogate.mv_argmax(alpha))
        U = surrogate.space.sample_unit(4000, rng)
        near = surrogate.space.project(np.clip(u + rng.normal(0, 0.03, (2000, len(u))), 0, 1))
        assert surrogate.mv(np.vstack([U, near]), alpha).max() <= star + 1e-9
        assert surrogate.regret(surrogate.mv_argmax(alpha), alpha) == pytest.approx(0, abs=1e-12)


def test_normalization_maps_uniform_mean_to_one_and_optimum_to_zero(surrogate):
    """regret_norm is 0 at the argmax and averages to 1 over the uniform draws that define the
    normalizer; an independent uniform sample agrees with the stored mean within its error."""
    for task in (surrogate, make_task("figure1")):
        alpha = 1.0
        assert task.regret_norm(task.mv_argmax(alpha), alpha) == pytest.approx(0, abs=1e-12)
        star, mean = task.mv_max(alpha), task.mv_uniform_mean(alpha)
        assert np.mean((star - task.uniform_mv(alpha)) / (star - mean)) == pytest.approx(1.0)
        U = task.space.sample_unit(2**14, np.random.default_rng(99))
        other = task.mv(U, alpha)
        se = math.hypot(task.mv_uniform_se(alpha), other.std(ddof=1) / math.sqrt(len(other)))
        assert abs(other.mean() - mean) <= 5 * se


def test_lengthscale_gradient_is_exact():
    """The analytic gradient of the leave-one-out loss equals central differences."""
    table = rl_table(n=24, seeds=10)
    space = SearchSpace(SPEC)
    X = np.stack([space.encode(c) for c in table.configs.to_dict("records")])
    R = (table.returns - table.returns.min()) / np.ptp(table.returns)
    groups = np.array([0, 1, 2, 2])
    m = MixtureModel.from_table(X, R, groups, np.zeros(3))
    args = (pairwise_d2(X, groups), m.C, m.Q0, m.Q1, m.lo, m.hi, R.mean(1), R.std(1, ddof=1))
    th = np.log([0.2, 0.6, 0.4])
    _, g = loo_loss(th, *args)
    eps = 1e-6
    num = [(loo_loss(th + eps * e, *args)[0] - loo_loss(th - eps * e, *args)[0]) / (2 * eps)
           for e in np.eye(3)]
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-8)


def test_bundled_fit_is_checked_against_its_table(tmp_path):
    """A stored fit is used only for the table it was fitted on: a missing fit or a changed
    table is refused with the command that refits."""
    src = ROOT / "data" / "arlbench" / "ppo_cc_acrobot.parquet"
    shutil.copy(src, tmp_path / "ppo_cc_acrobot.parquet")
    with pytest.raises(ValueError, match=r"no stored fit.*--write-fits"):
        TableSurrogate.bundled("ppo_cc_acrobot", tmp_path)
    fits = json.loads((ROOT / "data" / "arlbench" / "surrogates.json").read_text())
    fit = dict(fits["ppo_cc_acrobot"], table_sha256=table_hash(np.zeros(3)))
    (tmp_path / "surrogates.json").write_text(json.dumps({"ppo_cc_acrobot": fit}))
    with pytest.raises(ValueError, match="changed since its fit"):
        TableSurrogate.bundled("ppo_cc_acrobot", tmp_path)
    task = TableSurrogate.bundled("ppo_cc_acrobot", ROOT / "data" / "arlbench")
    assert task.name == "surr-ppo_cc_acrobot" and task.space.dim == 12


def test_readme_task_is_the_readme_objective():
    """The readme task returns exactly what the README's objective returns, and its truth is
    the closed form: MV* = 0.5 - alpha (0.1 + 16/512)^2 at lr 1e-3, relu, batch 16."""
    text = (ROOT / "README.md").read_text()
    code = re.search(r"(def objective\(config: dict, seed: int\) -> float:.*?)\n\n", text,
                     re.S).group(1)
    ns: dict = {}
    exec(code, ns)
    task = ReadmeTask()
    for u in task.space.sample_unit(20, np.random.default_rng(5)):
        c = task.space.decode(u)
        assert task.sample(c, [0, 3, 12]) == [ns["objective"](c, s) for s in (0, 3, 12)]
    for alpha in (1.0, 3.0):
        assert task.mv_max(alpha) == pytest.approx(0.5 - alpha * (0.1 + 16 / 512) ** 2)
        assert task.mv(task.space.sample_unit(3000, np.random.default_rng(1)), alpha).max() \
            <= task.mv_max(alpha)


def test_task_names_and_unknown_task():
    """--tasks groups expand to the 8 surrogates and the known tasks; an unknown name is
    refused naming the known ones."""
    assert len(task_names("surrogates")) == 8
    assert task_names("known,readme") == ["readme", "figure1", "branin"]
    with pytest.raises(ValueError, match=r"unknown task 'nope'.*readme"):
        make_task("nope")
