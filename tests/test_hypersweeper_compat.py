"""The one-line switch from Hypersweeper to erahbo (``override hydra/sweeper: erahbo``).

Layouts: ARLBench's ``random_search.yaml`` / ``smac.yaml`` and Hypersweeper's ``branin_rs.yaml``
(fixtures written after them: tests/fixtures/README.md names the sources). The tests marked
``real`` run the real ``hypersweeper`` 0.2.3 in an environment of its own (it pins numpy 1.24,
so it cannot share erahbo's): ``make hypersweeper-env`` makes ``.venv-hypersweeper``, or set
``ERAHBO_HYPERSWEEPER_PYTHON`` to a Python that has it; without one they are skipped.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("hydra")

import erahbo
from erahbo.cli import app
from erahbo.datasets.loaders import load_task
from erahbo.optimizer.options import Options
from forked_app import run_script
from hydra_plugins.erahbo_sweeper._hypersweeper import SWEEPER_KWARGS, TOP_LEVEL, translate
from hydra_plugins.erahbo_sweeper._outputs import INCUMBENT_COLUMNS, warm_runs
from hydra_plugins.erahbo_sweeper.config import ErahboSweeperConf

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# written by the real hypersweeper 0.2.3 with ARLBench's seed_keyword: autorl.seed
# (tests/fixtures/hypersweeper_runs/make_runhistory.py)
AUTORL_SEED = FIXTURES / "hypersweeper_runs" / "autorl_seed" / "runhistory.csv"
_HS = os.environ.get("ERAHBO_HYPERSWEEPER_PYTHON") or str(ROOT / ".venv-hypersweeper" / "bin"
                                                          / "python")
HS_PYTHON = _HS if Path(_HS).is_file() else None
real = pytest.mark.skipif(HS_PYTHON is None, reason="no Python with hypersweeper 0.2.3 (make "
                          "hypersweeper-env, or ERAHBO_HYPERSWEEPER_PYTHON)")
ARL_HPS = ["hp_config.buffer_batch_size", "hp_config.gamma", "hp_config.learning_rate",
           "hp_config.use_target_network", "hp_config.target_update_interval"]


# --- the translation, key by key ---------------------------------------------------------------
def _tr(**keys):
    return translate({**dataclasses.asdict(ErahboSweeperConf()), **keys})


def test_arlbench_random_search_keys_mean_the_same_compute():
    """Rule: n_trials x seeds training runs, maximize as given, max_parallelization x n_trials
    configurations at once; the seed values are erahbo's (a note says so)."""
    t = _tr(n_trials=16, sweeper_kwargs={"maximize": True, "max_parallelization": 1,
                                         "seeds": [42, 43, 44]})
    o = t.options
    assert (o["budget"], o["maximize"], o["n_parallel"], o["k"], o["seed_keyword"]) == (
        48, True, 16, 5, "seed")
    assert t.job_overrides == [] and t.max_budget is None and t.unused == []
    assert any("n_trials 16 x 3 seeds" in n for n in t.notes)
    assert any("own distinct seeds" in n for n in t.notes)
    assert not set(TOP_LEVEL) & set(o)  # Hypersweeper's keys are gone


def test_arlbench_smac_keys_train_every_run_at_max_budget():
    """Rule: budget_variable with max_budget: every job at full fidelity; min_budget and the
    SMAC optimizer_kwargs are not used (a note, a warning)."""
    t = _tr(n_trials=16, budget_variable="autorl.n_total_timesteps", sweeper_kwargs={
        "maximize": True, "min_budget": 10000, "max_budget": 1e5, "seeds": [42, 43, 44],
        "optimizer_kwargs": {"scenario": {"deterministic": False}}})
    assert t.options["budget"] == 48 and t.options["n_parallel"] == 1
    assert t.job_overrides == ["autorl.n_total_timesteps=100000"] and t.max_budget == 1e5
    assert any("min_budget not used" in n for n in t.notes)
    assert any("optimizer_kwargs" in u for u in t.unused)


def test_maximize_keeps_hypersweepers_default_in_a_hypersweeper_config():
    """Rule: a Hypersweeper config without maximize minimizes (its default), with a note; an
    erahbo config maximizes; a value given wins."""
    hs = _tr(n_trials=10, sweeper_kwargs={"max_parallelization": 0.8, "max_budget": 100})
    assert hs.options["maximize"] is False and any("maximize: false" in n for n in hs.notes)
    assert hs.options["n_parallel"] == 8 and hs.options["budget"] == 10
    assert _tr().options["maximize"] is True and _tr().options["budget"] == 100
    assert _tr(n_trials=10, maximize=True).options["maximize"] is True
    assert _tr(sweeper_kwargs={"maximize": True}).options["maximize"] is True


def test_budget_with_budget_variable_is_hypersweepers_summed_fidelity():
    """Rule: budget with budget_variable counts fidelity: budget // max_budget runs (the smaller
    with n_trials); without budget_variable it counts erahbo's training runs."""
    kw = {"max_budget": 1000, "seeds": [1, 2]}
    assert _tr(budget=30000, budget_variable="steps", sweeper_kwargs=kw).options["budget"] == 30
    assert _tr(budget=30000, budget_variable="steps", n_trials=10,
               sweeper_kwargs=kw).options["budget"] == 20
    assert _tr(budget=30).options["budget"] == 30
    assert _tr(method="rahbo", n_trials=8, sweeper_kwargs=kw).options["k"] == 2


@pytest.mark.parametrize("keys, match", [
    ({"opt_constructor": "hydra_plugins.hyper_rs.hyper_rs.make_rs"}, r"opt_constructor.*method"),
    ({"resume": "old/dir"}, r"resume: erahbo resumes a sweep from its journal"),
    ({"loading_variable": "load"}, r"loading_variable: erahbo trains every run from scratch"),
    ({"saving_variable": "save"}, r"saving_variable: erahbo trains every run from scratch"),
    ({"sweeper_kwargs": {"checkpoint_tf": True}}, r"checkpoint_tf: erahbo trains every run"),
    ({"sweeper_kwargs": {"load_tf": True}}, r"load_tf: erahbo trains every run"),
    ({"sweeper_kwargs": {"slurm": True}}, r"slurm: .*hydra\.launcher\.timeout_min"),
    ({"sweeper_kwargs": {"popsize": 3}}, r"unknown key\(s\) \['popsize'\]"),
    ({"budget": 50, "n_trials": 10}, r"budget=50 and n_trials=10.*give one"),
    ({"budget": 1e6, "budget_variable": "steps"}, r"summed fidelity.*max_budget"),
    ({"maximize": True, "sweeper_kwargs": {"maximize": False}}, r"maximize=True and .*differ"),
    ({"seed_keyword": "seed", "sweeper_kwargs": {"seed_keyword": "train.seed"}}, "differ"),
    ({"warm_start": "a.csv", "sweeper_kwargs": {"warmstart_file": "b.csv"}}, "differ"),
    ({"sweeper_kwargs": {"seeds": "42"}}, r"seeds must be a list of ints"),
])
def test_keys_erahbo_cannot_honour_are_refused_with_the_fix(keys, match):
    """Rule: each key erahbo cannot honour, and each ambiguous pair, is refused by name."""
    with pytest.raises(ValueError, match=match):
        _tr(**keys)


def test_warm_start_from_task_values_is_negated_for_a_cost(tmp_path):
    """Rule: a Hypersweeper runhistory holds the task's values (costs under maximize: false),
    erahbo's history.csv its returns: only the first is negated."""
    rh = tmp_path / "runhistory.csv"
    pd.DataFrame({"config_id": [0], "budget": [None], "performance": [2.0],
                  "performance_seed_1": [1.0], "performance_seed_2": [3.0],
                  "x": [0.5]}).to_csv(rh, index=False)
    assert sorted(warm_runs(rh, -1.0)["return"]) == [-3.0, -1.0]
    assert sorted(warm_runs(rh, 1.0)["return"]) == [1.0, 3.0]
    hist = tmp_path / "history.csv"
    pd.DataFrame({"x": [0.5, 0.5], "seed": [1, 2], "return": [-1.0, -3.0]}).to_csv(hist,
                                                                                  index=False)
    assert sorted(warm_runs(hist, -1.0)["return"]) == [-3.0, -1.0]


# --- the layouts, switched with one line ---------------------------------------------------------
def _layout(tmp_path: Path, name: str, config: str, sweeper: str | None = "erahbo") -> Path:
    """A copy of a fixture layout; ``sweeper``: its one override line switched to it."""
    folder = tmp_path / name
    shutil.copytree(FIXTURES / name, folder)
    if sweeper:
        path = folder / "configs" / config
        old = path.read_text()
        new = re.sub(r"override hydra/sweeper: \w+", f"override hydra/sweeper: {sweeper}", old)
        changed = [a for a, b in zip(old.splitlines(), new.splitlines(), strict=True) if a != b]
        assert len(changed) == 1  # the one line
        path.write_text(new)
    return folder


def _run(folder: Path, script: str, *args: str, python: str = sys.executable,
         erahbo: bool = True, fresh: bool = False) -> subprocess.CompletedProcess:
    """``python script -m ARGS`` in ``folder``. erahbo's sweeps run in a process of their own
    forked from a server that imported Hydra and erahbo once (tests/forked_app.py); ``fresh``
    (or another ``python``: the real hypersweeper's) starts a new interpreter."""
    env = dict(os.environ, CALLS=str(folder / "calls.jsonl"), OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]) \
        if erahbo else ""
    if erahbo and python == sys.executable and not fresh:
        return run_script(script, "-m", *args, cwd=folder, env=env, timeout=600)
    return subprocess.run([python, script, "-m", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def _calls(folder: Path) -> pd.DataFrame:
    return pd.DataFrame([json.loads(line) for line in
                         (folder / "calls.jsonl").read_text().splitlines()])


def test_arlbench_random_search_switches_with_one_line(tmp_path):
    """Rule: ARLBench's random_search.yaml, its sweeper line switched, runs as shipped: the
    same 48 training runs (16 x 3 seeds), distinct seeds per configuration, the dense
    runhistory and Hypersweeper's incumbent.csv in the sweep directory."""
    folder = _layout(tmp_path, "arlbench", "random_search.yaml")
    proc = _run(folder, "run_arlbench.py", "--config-name=random_search")
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    assert "budget: 48 training runs (n_trials 16 x 3 seeds)" in log
    assert "n_parallel: 16 configurations at once" in log
    calls = _calls(folder)
    assert 47 <= len(calls) <= 48  # (conftest.spent_budget: a 2-seed round leaves one run)
    key = ["lr", "gamma", "batch", "target"]
    assert not calls.duplicated([*key, "seed"]).any()  # no (configuration, seed) twice
    # each configuration: the seeds its rounds gave it (k_init in the design, k_min after)
    assert calls.groupby(key).size().min() >= Options(method="erahbo").min_seeds
    sweep = folder / "results" / "sobol" / "dqn_CartPole-v1" / "42"  # ${autorl.seed}: 42
    rh = pd.read_csv(sweep / "runhistory.csv")
    runs = [c for c in rh.columns if c.startswith("performance_run_")]
    assert list(rh.columns) == ["config_id", "budget", "performance", *runs, "seeds", *ARL_HPS]
    assert len(runs) == rh["seeds"].map(lambda s: len(json.loads(s))).max() <= 10  # k_max
    assert rh[runs].notna().sum().sum() == len(calls)  # every run, no empty column
    inc = pd.read_csv(sweep / "incumbent.csv")
    assert list(inc.columns) == [*INCUMBENT_COLUMNS, *ARL_HPS] and len(inc) >= 2
    assert inc["budget_used"].iloc[-1] == len(calls)
    task = load_task(sweep / "runhistory.csv")  # erahbo reads it back
    n_runs = rh["seeds"].map(lambda s: len(json.loads(s))).to_numpy()
    assert task.n_configs == len(rh)  # and each configuration's runs, NaN-padded after them
    np.testing.assert_array_equal(np.isfinite(task.returns).sum(axis=1), n_runs)
    assert all(np.isfinite(task.returns[i, :n]).all() for i, n in enumerate(n_runs))


def test_arlbench_smac_switches_with_one_line(tmp_path):
    """Rule: ARLBench's smac.yaml switched: every job trains at max_budget through
    budget_variable, SMAC's optimizer_kwargs are named as not used, the fidelity is in the
    runhistory's budget column."""
    folder = _layout(tmp_path, "arlbench", "smac.yaml")
    proc = _run(folder, "run_arlbench.py", "--config-name=smac", "hydra.sweeper.n_trials=4")
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    assert "sweeper_kwargs.optimizer_kwargs configures Hypersweeper's optimizer" in log
    assert "min_budget not used" in log
    calls = _calls(folder)
    assert 11 <= len(calls) <= 12 and (calls["steps"] == 100000.0).all()
    sweep = folder / "results" / "smac" / "dqn_CartPole-v1" / "0" / "42"
    assert (pd.read_csv(sweep / "runhistory.csv")["budget"] == 100000.0).all()


@pytest.fixture(scope="module")
def switched_branin(tmp_path_factory):
    """Hypersweeper's branin_rs.yaml, its sweeper line switched to erahbo, run once as shipped
    (``python branin.py -m``): ``(folder, process)``. The tests only read what it wrote."""
    folder = _layout(tmp_path_factory.mktemp("branin"), "hypersweeper", "branin_rs.yaml")
    return folder, _run(folder, "branin.py", fresh=True)  # a new interpreter, as shipped


def test_hypersweeper_branin_example_switches_and_still_minimizes(switched_branin):
    """Rule: Hypersweeper's branin_rs.yaml (no maximize: a cost) switched: erahbo minimizes
    the cost; runhistory.csv keeps the task's values, history.csv erahbo's negated ones."""
    folder, proc = switched_branin
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "maximize: false (Hypersweeper's default" in proc.stdout + proc.stderr
    sweep = folder / "tmp" / "branin_rs"
    rh, hist = pd.read_csv(sweep / "runhistory.csv"), pd.read_csv(sweep / "history.csv")
    assert (rh["performance"] > 0).all() and (hist["return"] < 0).all()  # costs, negated
    means = -hist.groupby("config_id")["return"].mean()
    np.testing.assert_allclose(rh.set_index("config_id")["performance"], means)
    assert (rh["budget"] == 100).all()


def test_a_key_erahbo_cannot_honour_stops_the_sweep_with_the_fix(tmp_path):
    """Rule: PBT's checkpoint passing in a switched config stops the sweep before a job runs,
    naming the key."""
    folder = _layout(tmp_path, "arlbench", "random_search.yaml")
    proc = _run(folder, "run_arlbench.py", "--config-name=random_search",
                "hydra.sweeper.loading_variable=load_checkpoint")
    assert proc.returncode != 0 and not (folder / "calls.jsonl").exists()
    assert "loading_variable: erahbo trains every run from scratch" in proc.stderr


# --- the real hypersweeper package ---------------------------------------------------------------
_KEYS = """
import dataclasses, importlib, inspect, json, pkgutil
import hydra_plugins
from hydra_plugins.hypersweeper import HypersweeperSweeper
fields = set()
for m in pkgutil.iter_modules(hydra_plugins.__path__):
    if m.name.startswith("hyper") and m.name != "hypersweeper":
        try:
            mod = importlib.import_module(f"hydra_plugins.{m.name}.config")
        except ImportError:
            continue
        for obj in vars(mod).values():
            if dataclasses.is_dataclass(obj) and "sweeper_kwargs" in {
                    f.name for f in dataclasses.fields(obj)}:
                fields |= {f.name for f in dataclasses.fields(obj)}
params = list(inspect.signature(HypersweeperSweeper.__init__).parameters)
print("KEYS", json.dumps({"fields": sorted(fields), "params": params}))
"""


@pytest.fixture(scope="module")
def real_hs_views(switched_branin):
    """What two tests read of the real hypersweeper, from one process of its Python (its start
    is most of the cost): the keys of its sweeper configs and its sweeper's parameters
    (``_KEYS``), then its own reader on the runhistory.csv of the switched branin sweep
    (``_READ``; skipped where that sweep wrote none): ``(process, keys, read or None)``."""
    ours, _ = switched_branin
    path = ours / "tmp" / "branin_rs" / "runhistory.csv"
    space = ours / "configs" / "search_space" / "branin.yaml"
    code = _KEYS + "import os, sys\nif os.path.exists(sys.argv[1]):\n" + textwrap.indent(
        _READ, "    ")
    out = subprocess.run([HS_PYTHON, "-c", code, str(path), str(space)], capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, PYTHONPATH=""))
    found = {line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1])
             for line in out.stdout.splitlines() if line.startswith(("KEYS ", "READ "))}
    return out, found.get("KEYS"), found.get("READ")


@real
def test_every_key_of_the_real_hypersweeper_is_translated_or_refused(real_hs_views):
    """Rule: the keys of Hypersweeper's sweeper configs and of its ``sweeper_kwargs`` (the
    keyword arguments of HypersweeperSweeper) are exactly those erahbo translates or refuses."""
    out, keys, _ = real_hs_views
    assert keys is not None, out.stderr[-2000:]
    assert set(keys["fields"]) == {"_target_", "search_space", "budget", *TOP_LEVEL}
    internal = {"self", "global_config", "global_overrides", "launcher", "make_optimizer",
                "budget_arg_name", "load_arg_name", "save_arg_name", "cs", "budget", "n_trials",
                "base_dir"}  # set by Hypersweeper's backend from the top-level keys
    assert set(keys["params"]) - internal == set(SWEEPER_KWARGS)


@real
def test_erahbo_reads_a_real_hypersweeper_sweep_back(tmp_path):
    """Rule: the runhistory.csv of a real HyperRS sweep (ARLBench's random_search.yaml as
    shipped) is read by erahbo (every run, its seed) and warm-starts the switched sweep with
    no 'columns ... ignored' warning; erahbo's incumbent.csv has Hypersweeper's columns."""
    theirs = _layout(tmp_path / "hs", "arlbench", "random_search.yaml", sweeper=None)
    proc = _run(theirs, "run_arlbench.py", "--config-name=random_search",
                "hydra.sweeper.n_trials=2", python=HS_PYTHON, erahbo=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sweep = theirs / "results" / "sobol" / "dqn_CartPole-v1" / "42"
    task = load_task(sweep / "runhistory.csv")
    assert (task.n_configs, sorted(task.seeds)) == (2, [42, 43, 44])
    assert np.isfinite(task.returns).all()
    ours = _layout(tmp_path / "erahbo", "arlbench", "random_search.yaml")
    proc = _run(ours, "run_arlbench.py", "--config-name=random_search",
                "hydra.sweeper.n_trials=2", "hydra.sweeper.n_init=0",
                f"hydra.sweeper.warm_start={sweep / 'runhistory.csv'}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "neither hyperparameters" not in proc.stderr
    mine = ours / "results" / "sobol" / "dqn_CartPole-v1" / "42"
    hist = pd.read_csv(mine / "history.csv")
    warm = hist[hist["phase"] == "warm"]
    assert len(warm) == 6 and set(warm["seed"]) == {42, 43, 44}
    np.testing.assert_allclose(sorted(warm["return"]), sorted(task.returns.ravel()))
    assert list(pd.read_csv(mine / "incumbent.csv").columns) == list(
        pd.read_csv(sweep / "incumbent.csv").columns)


_READ = """
import json, sys
from omegaconf import OmegaConf
from hydra_plugins.hypersweeper.search_space_encoding import search_space_to_config_space
from hydra_plugins.hypersweeper.utils import read_warmstart_data
space = search_space_to_config_space(OmegaConf.load(sys.argv[2]))
runs = read_warmstart_data(sys.argv[1], space, maximize=False)
print("READ", json.dumps([[dict(i.config), r.performance] for i, r in runs]))
"""


@real
def test_the_real_hypersweeper_reads_erahbos_runhistory_back(tmp_path, switched_branin,
                                                             real_hs_views):
    """Rule: Hypersweeper's own reader (read_warmstart_data) reads the runhistory.csv of the
    switched branin sweep: every configuration with its mean cost; a real HyperRS sweep
    warm-starts from it."""
    ours, proc = switched_branin
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = ours / "tmp" / "branin_rs" / "runhistory.csv"
    out, _, read = real_hs_views
    assert out.returncode == 0 and read is not None, out.stderr[-2000:]
    rh = pd.read_csv(path)
    assert len(read) == len(rh)
    for (config, perf), (_, row) in zip(read, rh.iterrows(), strict=True):
        np.testing.assert_allclose([config["x0"], config["x1"], perf],
                                   [row["x0"], row["x1"], row["performance"]], rtol=1e-9)
    theirs = _layout(tmp_path / "hs", "hypersweeper", "branin_rs.yaml", sweeper=None)
    proc = _run(theirs, "branin.py", "hydra.sweeper.n_trials=2",
                f"+hydra.sweeper.sweeper_kwargs.warmstart_file={path}", python=HS_PYTHON,
                erahbo=False)
    assert proc.returncode == 0, proc.stderr[-3000:]


# --- a runhistory of the real hypersweeper with seed_keyword: autorl.seed ----------------------
_SEED_COLS = [f"performance_autorl.seed_{s}" for s in (42, 43, 44)]
_DQN_SPACE = {"learning_rate": ("log", 1e-6, 0.1), "gamma": ("float", 0.8, 0.9999),
              "buffer_batch_size": ("cat", [16, 32, 64]),
              "use_target_network": ("cat", [True, False]),
              "target_update_interval": {"type": "int", "lower": 1, "upper": 1000,
                                         "condition": {"parent": "use_target_network",
                                                       "op": "in", "values": [True]}}}


def test_a_runhistory_with_any_seed_keyword_loads():
    """Rule: Hypersweeper's per-seed columns are performance_<seed_keyword>_<seed> for any
    seed keyword: the committed runhistory of the real hypersweeper 0.2.3 with ARLBench's
    ``seed_keyword: autorl.seed`` loads with its seeds 42, 43, 44 and every return."""
    rh = pd.read_csv(AUTORL_SEED)
    assert [c for c in rh.columns if c.startswith("performance_")] == _SEED_COLS
    task = load_task(AUTORL_SEED)
    assert (task.n_configs, list(task.seeds)) == (4, [42, 43, 44])
    np.testing.assert_array_equal(task.returns, rh[_SEED_COLS].to_numpy())


def test_two_seed_keywords_in_one_runhistory_are_refused(tmp_path):
    """Rule: a runhistory has one seed keyword; columns of two are refused, naming both."""
    rh = pd.read_csv(AUTORL_SEED)
    rh["performance_seed_45"] = 1.0
    path = tmp_path / "runhistory.csv"
    rh.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"2 different keys \['autorl.seed', 'seed'\]"):
        load_task(path)


def test_warm_start_from_an_autorl_seed_runhistory():
    """Rule: the real autorl.seed runhistory warm-starts a study: its 12 runs (4
    configurations x seeds 42, 43, 44) join the data with their returns and seeds."""
    opt = erahbo.Optimizer(_DQN_SPACE, budget=10, seed=0, n_init=0, warm_start=AUTORL_SEED)
    warm = opt.result().history
    rh = pd.read_csv(AUTORL_SEED)
    assert len(warm) == 12 and set(warm["phase"]) == {"warm"}
    assert set(warm["seed"]) == {42, 43, 44} and opt.data.n == 4
    np.testing.assert_allclose(sorted(warm["return"]), sorted(rh[_SEED_COLS].to_numpy().ravel()))


def test_dataset_inspect_reads_an_autorl_seed_runhistory():
    """Rule: ``erahbo dataset inspect`` reads the real autorl.seed runhistory (4 x 3 returns)."""
    from typer.testing import CliRunner

    res = CliRunner().invoke(app, ["dataset", "inspect", str(AUTORL_SEED)])
    assert res.exit_code == 0, res.output
    assert "4x3" in res.output and "no 'seed'" not in res.output


def test_the_switched_sweep_warm_starts_from_an_autorl_seed_runhistory(tmp_path):
    """Rule: the switched ARLBench sweep warm-starts from the real autorl.seed runhistory:
    its 12 runs are the sweep's warm rows, with their seeds."""
    ours = _layout(tmp_path, "arlbench", "random_search.yaml")
    proc = _run(ours, "run_arlbench.py", "--config-name=random_search",
                "hydra.sweeper.n_trials=2", "hydra.sweeper.n_init=0",
                f"hydra.sweeper.warm_start={AUTORL_SEED}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "neither hyperparameters" not in proc.stderr
    hist = pd.read_csv(ours / "results" / "sobol" / "dqn_CartPole-v1" / "42" / "history.csv")
    warm = hist[hist["phase"] == "warm"]
    assert len(warm) == 12 and set(warm["seed"]) == {42, 43, 44}
    np.testing.assert_allclose(sorted(warm["return"]),
                               sorted(pd.read_csv(AUTORL_SEED)[_SEED_COLS].to_numpy().ravel()))


@real
def test_the_autorl_seed_fixture_is_what_the_real_hypersweeper_writes(tmp_path):
    """Rule: the committed fixture is the real hypersweeper's output: its generator, run again
    with the real package, writes the same columns and configurations."""
    script = FIXTURES / "hypersweeper_runs" / "make_runhistory.py"
    proc = subprocess.run([sys.executable, str(script), str(tmp_path), "--python", HS_PYTHON],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    new, old = pd.read_csv(tmp_path / "runhistory.csv"), pd.read_csv(AUTORL_SEED)
    assert list(new.columns) == list(old.columns)
    hps = [c for c in old.columns if c.startswith("hp_config.")]
    pd.testing.assert_frame_equal(new[hps], old[hps])
