"""The Hydra sweeper (hydra_plugins/erahbo_sweeper): a tiny real Hydra app in multirun mode."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

pytest.importorskip("hydra")

from erahbo.datasets.loaders import load_task
from erahbo.datasets.run_rows import read_runs
from erahbo.runtime.journal import Journal
from forked_app import run_script
from hydra_plugins.erahbo_sweeper._space import load_search_space

SRC = Path(__file__).resolve().parents[1] / "src"

# The task: noisy return peaking at x = 0.3, noise growing with x; act=bad raises, act=nan
# returns a string (both failed runs); every call is logged, CRASH_AFTER kills the process.
APP = '''
import json, os, random

import hydra
from omegaconf import DictConfig


@hydra.main(version_base=None, config_path=".", config_name="config")
def main(cfg: DictConfig):
    hp, seed = cfg.hp_config, int(cfg.train.seed)
    with open(os.environ["CALLS"], "a") as fh:
        fh.write(json.dumps([hp.x, hp.act, seed]) + "\\n")
    n = sum(1 for _ in open(os.environ["CALLS"]))
    if n > int(os.environ.get("CRASH_AFTER", "1000000")):
        os._exit(3)  # the whole sweep dies, as after a power cut
    if hp.act == "bad":
        raise RuntimeError("diverged")
    if hp.act == "text":
        return "not a number"
    noise = random.Random(seed).gauss(0.0, 0.05 + 0.5 * hp.x)
    return SIGN * (-((hp.x - 0.3) ** 2) + noise)


if __name__ == "__main__":
    main()
'''

CONFIG = """
defaults:
  - override hydra/sweeper: erahbo
  - _self_
hp_config:
  x: 0.5
  act: good
train:
  seed: 0
hydra:
  sweep:
    dir: sweep
  sweeper:
    budget: 14
    n_init: 2
    k_max: 3
    seed_keyword: train.seed
"""


def _app(tmp_path: Path, sign: float, sweeper: str) -> Path:
    (tmp_path / "app.py").write_text(APP.replace("SIGN", repr(sign)))
    (tmp_path / "config.yaml").write_text(CONFIG + textwrap.indent(sweeper, "    "))
    return tmp_path


def _run(folder: Path, *args: str, crash_after: int | None = None,
         fresh: bool = False) -> subprocess.CompletedProcess:
    """``python app.py -m ARGS`` in ``folder``: in a process of its own, forked from a server
    that imported Hydra and erahbo once (tests/forked_app.py); ``fresh``: a new interpreter."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
               CALLS=str(folder / "calls.jsonl"), OPENBLAS_NUM_THREADS="1")
    if crash_after is not None:
        env["CRASH_AFTER"] = str(crash_after)
    if not fresh:
        return run_script("app.py", "-m", *args, cwd=folder, env=env, timeout=300)
    return subprocess.run([sys.executable, "app.py", "-m", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)


def _calls(folder: Path) -> list[tuple]:
    return [tuple(json.loads(line)) for line in (folder / "calls.jsonl").read_text().splitlines()]


def test_sweep_minimizes_cost_and_writes_hypersweeper_runhistory(tmp_path):
    folder = _app(tmp_path, -1.0, """maximize: false
search_space:
  hp_config.x: [float, 0.0, 1.0]
  hp_config.act: [good, bad, text]
""")
    proc = _run(folder, fresh=True)  # a new interpreter, as a user runs it
    assert proc.returncode == 0, proc.stderr[-3000:]
    sweep = folder / "sweep"
    calls = _calls(folder)
    # one job per training run (conftest.spent_budget: where a round needs 2 seeds, the last
    # run may stay unspent)
    assert 13 <= len(calls) <= 14
    hist = pd.read_csv(sweep / "history.csv")
    assert len(hist) == len(calls) and set(hist["seed"]) == {c[2] for c in calls}
    assert set(hist["status"]) <= {"ok", "penalized"}
    failed = hist[hist["hp_config.act"].isin(["bad", "text"])]
    assert (failed["status"] == "penalized").all()  # exception / non-number = failed run
    errors = " ".join(failed["error"].astype(str))
    if (failed["hp_config.act"] == "bad").any():
        assert "diverged" in errors
    if (failed["hp_config.act"] == "text").any():
        assert "must return its run's return as a number" in errors
    # Hypersweeper's layout, dense: one column per run index (not per seed value), on the
    # task's own scale (costs), failed runs left empty, each configuration's seeds listed
    rh = pd.read_csv(sweep / "runhistory.csv")
    run_cols = [c for c in rh.columns if c.startswith("performance_run_")]
    assert list(rh.columns) == ["config_id", "budget", "performance", *run_cols, "seeds",
                                "hp_config.x", "hp_config.act"]
    assert len(rh) == hist["config_id"].nunique()
    counted = hist[hist["status"].isin(["ok", "penalized"])]
    per_config = counted.groupby("config_id").size()
    assert len(run_cols) == per_config.max()
    # the seed cap (max_seeds: k_max = 3): seeds beyond it only within pool_share (default
    # 0.25) of the runs
    assert (per_config - 3).clip(lower=0).sum() <= 0.25 * len(counted)
    for cid, g in counted.groupby("config_id"):
        row = rh[rh["config_id"] == cid].iloc[0]
        assert json.loads(row["seeds"]) == list(g["seed"])
        ok = g["status"] == "ok"
        if ok.any():
            np.testing.assert_allclose(row["performance"], -g.loc[ok, "return"].mean())
        for j, (r, good) in enumerate(zip(g["return"], ok, strict=True)):
            if good:
                np.testing.assert_allclose(row[f"performance_run_{j}"], -r)
            else:
                assert np.isnan(row[f"performance_run_{j}"])
        assert row[run_cols[len(g):]].isna().all()
    # the recommendation: a configuration that ran, with overrides that reproduce it
    inc = yaml.safe_load((sweep / "incumbent.yaml").read_text())
    assert inc["config"]["hp_config.act"] == "good" and inc["n_evals"] == len(calls)
    assert inc["overrides"][0].startswith("hp_config.x=")
    assert inc["overrides"][1] == "hp_config.act='good'"
    assert (sweep / "rounds.csv").is_file() and (sweep / "erahbo_journal.db").is_file()
    journal = Journal.open(sweep / "erahbo_journal.db")
    assert journal.settings["challengers"] is True  # erahbo's defaults reach the study
    assert journal.settings["random_top"] == 0.1
    journal.close()
    # erahbo reads its own runhistory.csv back: a task (runs by position), and as runs for a
    # warm start, each with its own seed
    task = load_task(sweep / "runhistory.csv")
    assert task.n_configs == len(rh) and task.seeds == list(range(len(run_cols)))
    runs = read_runs(sweep / "runhistory.csv")
    mine = hist[hist["status"] == "ok"]
    assert sorted(zip(runs["seed"], -runs["return"], strict=True)) == sorted(
        zip(mine["seed"], mine["return"], strict=True))


def test_sweep_resumes_from_its_journal_after_a_crash(tmp_path):
    folder = _app(tmp_path, 1.0, "n_parallel: 2\n")
    # ARLBench's way: a search_space config group file packaged into the sweeper's key
    config = (folder / "config.yaml").read_text()
    (folder / "config.yaml").write_text(config.replace("  - override", "  - search_space: arl\n"
                                                       "  - override"))
    (folder / "search_space").mkdir()
    (folder / "search_space" / "arl.yaml").write_text("""# @package hydra.sweeper.search_space
seed: 0
hyperparameters:
  hp_config.x: {type: uniform_float, lower: 0.0, upper: 1.0, default: 0.5}
  hp_config.act: {type: categorical, choices: [good]}
""")
    proc = _run(folder, crash_after=7)
    assert proc.returncode != 0  # killed in the middle of the sweep
    first = _calls(folder)
    assert len(first) == 8
    proc = _run(folder)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "resuming from" in proc.stderr + proc.stdout
    calls = _calls(folder)
    hist = pd.read_csv(folder / "sweep" / "history.csv")
    counted = hist[hist["status"] == "ok"]
    assert 13 <= len(counted) <= 14
    # runs finished before the crash are not launched again: only the cut batch is rerun
    later = calls[len(first):]
    done_before = set(first) - set(later)
    assert len(done_before) >= 4 and len(calls) <= 14 + 4
    ran = {(round(x, 9), a, s) for x, a, s in calls}
    assert {(round(x, 9), a, int(s)) for x, a, s in zip(
        counted["hp_config.x"], counted["hp_config.act"], counted["seed"], strict=True)} == ran
    # the same sweep again: nothing left to run
    proc = _run(folder)
    assert proc.returncode == 0 and len(_calls(folder)) == len(calls)
    # a larger budget continues the sweep: the journal is replayed, then more runs launched
    proc = _run(folder, "hydra.sweeper.budget=20")
    assert proc.returncode == 0, proc.stderr[-3000:]
    more = _calls(folder)[len(calls):]
    assert 5 <= len(more) <= 6 and not set(more) & set(ran)  # new runs only
    hist = pd.read_csv(folder / "sweep" / "history.csv")
    assert 19 <= (hist["status"] == "ok").sum() <= 20
    # other settings on the same journal: a clear refusal
    proc = _run(folder, "hydra.sweeper.budget=20", "hydra.sweeper.alpha=2.0")
    assert proc.returncode != 0
    assert "in the journal" in proc.stderr and "alpha" in proc.stderr
    assert "another hydra.sweep.dir" in proc.stderr


@pytest.fixture(scope="module")
def options_sweep(tmp_path_factory):
    """A sweep of the app (its seed_keyword train.seed, a key of its config) with a strategy
    part's option set by each key: ``(folder, process)``. The tests only read it."""
    folder = _app(tmp_path_factory.mktemp("options"), 1.0, """search_space:
  hp_config.x: [float, 0.0, 1.0]
""")
    return folder, _run(folder, "hydra.sweeper.budget=6", "hydra.sweeper.challengers=false",
                        "hydra.sweeper.random_interleave=0", "hydra.sweeper.random_top=1",
                        "hydra.sweeper.max_seeds=6")  # every strategy part's option is a key


def test_sweep_options_reach_the_optimizer(options_sweep):
    folder, proc = options_sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    journal = Journal.open(folder / "sweep" / "erahbo_journal.db")
    settings = journal.settings
    journal.close()
    assert settings["challengers"] is False and settings["random_interleave"] == 0  # off
    assert settings["random_top"] == 1  # 1: uniform
    assert settings["max_seeds"] == 6


def test_sweep_in_cvar_names_the_measure_in_its_recommendation(tmp_path):
    """``hydra.sweeper.risk=cvar q=0.2``: the study is in CVaR_0.2 (journaled settings) and
    incumbent.yaml names the measure its estimate is in."""
    folder = _app(tmp_path, 1.0, """search_space:
  hp_config.x: [float, 0.0, 1.0]
""")
    proc = _run(folder, "hydra.sweeper.budget=8", "hydra.sweeper.risk=cvar",
                "hydra.sweeper.q=0.2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    journal = Journal.open(folder / "sweep" / "erahbo_journal.db")
    settings = journal.settings
    journal.close()
    assert settings["risk"] == "cvar" and settings["q"] == 0.2
    inc = yaml.safe_load((folder / "sweep" / "incumbent.yaml").read_text())
    assert inc["risk"] == {"risk": "cvar", "q": 0.2} and inc["objective"] == "CVaR_0.2"
    assert isinstance(inc["estimated_mv"], float)


def test_sweep_refuses_sweep_overrides_on_the_command_line(tmp_path):
    folder = _app(tmp_path, 1.0, "search_space: {hp_config.x: [float, 0.0, 1.0]}\n")
    proc = _run(folder, "hp_config.act=good,bad")
    assert proc.returncode != 0
    assert "is a sweep; the erahbo sweeper chooses the values itself" in proc.stderr


def test_a_key_added_with_plus_that_the_sweeper_lacks_is_refused(tmp_path):
    """Rule: Hydra refuses an unknown hydra.sweeper key unless it is added with +; the sweeper
    then refuses it itself, naming the key and the one it resembles, before any job runs."""
    folder = _app(tmp_path, 1.0, "search_space: {hp_config.x: [float, 0.0, 1.0]}\n")
    proc = _run(folder, "hydra.sweeper.budget=4", "+hydra.sweeper.alpah=0.01")
    assert proc.returncode != 0
    assert "hydra.sweeper: unknown key(s) 'alpah' (did you mean 'alpha'?)" in proc.stderr
    assert not (folder / "calls.jsonl").exists()  # no job ran


def test_search_space_forms(tmp_path):
    a = load_search_space({"lr": ["log", 1e-5, 0.1], "act": ["tanh", "relu"],
                           "n": ["int", 1, 8]})
    assert a.names == ["lr", "act", "n"] and a.dim == 1 + 2 + 1
    b = load_search_space({"hyperparameters": {
        "hp_config.lr": {"type": "uniform_float", "lower": 1e-5, "upper": 0.1, "log": True,
                         "default": 1e-3},
        "hp_config.opt": {"type": "categorical", "choices": ["adam", "sgd"]}}})
    assert sorted(b.names) == ["hp_config.lr", "hp_config.opt"]
    path = tmp_path / "space.yaml"
    path.write_text("hyperparameters:\n  lr: {type: uniform_float, lower: 0.1, upper: 1.0}\n")
    assert load_search_space(str(path)).names == ["lr"]
    (tmp_path / "space.json").write_text(json.dumps({"lr": ["float", 0.1, 1.0]}))
    assert load_search_space(str(tmp_path / "space.json")).names == ["lr"]
    with pytest.raises(ValueError, match="search_space is not set"):
        load_search_space(None)
    with pytest.raises(ValueError, match=r"file .*nope.yaml does not exist"):
        load_search_space(str(tmp_path / "nope.yaml"))
    with pytest.raises(ValueError, match=r"hydra.sweeper.search_space: .*'lr'"):
        load_search_space({"lr": ["float", 1.0, 0.1]})


def test_sweep_warm_starts_from_a_hypersweeper_runhistory(tmp_path):
    rh = pd.DataFrame({"config_id": [0, 1, 2], "performance": [0.0, 0.0, 0.0],
                       "performance_seed_0": [-0.2, -0.01, -0.3],
                       "performance_seed_1": [-0.1, 0.02, -0.5], "budget": [None] * 3,
                       "hp_config.x": [0.1, 0.3, 0.9], "hp_config.act": ["good"] * 3})
    rh.to_csv(tmp_path / "runhistory.csv", index=False)
    folder = _app(tmp_path, 1.0, """warm_start: runhistory.csv
search_space: {hp_config.x: [float, 0.0, 1.0], hp_config.act: [good, bad]}
""")
    proc = _run(folder, "hydra.sweeper.budget=4", "hydra.sweeper.n_init=0",
                "hydra.sweeper.k_max=2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    hist = pd.read_csv(folder / "sweep" / "history.csv")
    assert (hist["phase"] == "warm").sum() == 6 and len(_calls(folder)) == 4
    np.testing.assert_allclose(sorted(hist.loc[hist.phase == "warm", "return"]),
                               sorted(rh[["performance_seed_0", "performance_seed_1"]].stack()))


def test_a_seed_keyword_the_task_config_lacks_is_warned_about(tmp_path, options_sweep):
    """Rule: a seed_keyword that is not a key of the task config (ARLBench reads autorl.seed,
    not seed) is named with the fix; one the config has is not."""
    folder = _app(tmp_path, 1.0, "search_space: {hp_config.x: [float, 0.0, 1.0]}\n")
    proc = _run(folder, "hydra.sweeper.budget=4", "hydra.sweeper.seed_keyword=seed")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "seed_keyword 'seed' is not a key of the task config" in out
    assert "set hydra.sweeper.seed_keyword: autorl.seed" in out
    _, proc = options_sweep  # the same app's sweep with train.seed: a key of the config
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "is not a key of the task config" not in proc.stdout + proc.stderr


def test_a_hypersweeper_sweep_is_extended_by_raising_n_trials(tmp_path):
    """Rule: in a Hypersweeper-style config n_parallel is derived from max_parallelization x
    n_trials; raising n_trials extends the budget of the journaled sweep (n_parallel stays
    the journal's, a note says so), while a changed max_parallelization or an explicit
    n_parallel is still refused as a changed option."""
    folder = _app(tmp_path, 1.0, """sweeper_kwargs:
  maximize: true
  max_parallelization: 0.5
  seeds: [1, 2]
search_space: {hp_config.x: [float, 0.0, 1.0]}
""")
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("    budget: 14\n", ""))
    proc = _run(folder, "hydra.sweeper.n_trials=4")  # 8 runs, n_parallel 2
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "n_parallel: 2 configurations at once" in proc.stdout + proc.stderr
    first = _calls(folder)
    assert 7 <= len(first) <= 8
    proc = _run(folder, "hydra.sweeper.n_trials=6")  # 12 runs: 3 from n_trials now
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "n_parallel: 2 as in the journal" in out and "extends the sweep" in out
    more = _calls(folder)[len(first):]
    assert 3 <= len(more) <= 5 and not set(more) & set(first)
    hist = pd.read_csv(folder / "sweep" / "history.csv")
    assert 11 <= (hist["status"] == "ok").sum() <= 12
    with Journal.open(folder / "sweep" / "erahbo_journal.db") as j:
        assert j.settings["n_parallel"] == 2
    for changed in ("hydra.sweeper.sweeper_kwargs.max_parallelization=1.0",
                    "hydra.sweeper.n_parallel=3"):
        proc = _run(folder, "hydra.sweeper.n_trials=8", changed)
        assert proc.returncode != 0, changed
        assert "n_parallel" in proc.stderr and "in the journal" in proc.stderr


def test_the_docs_preset_defaults_are_the_presets():
    """Rule: every preset value docs/integrations/hydra.md's key table names ("the preset's
    (DEFAULT; paper PAPER)", and the examples of the parts' options) is the value erahbo's
    ERAHBO runs with under that preset (k_max: k_init resolved to k_max; an option resolved
    from the others, random_interleave: its value in force on a sweep's space, which is never
    a candidate table)."""
    from erahbo.optimizer import parts
    from erahbo.optimizer.options import Options

    text = (SRC.parent / "docs" / "integrations" / "hydra.md").read_text()
    claims = []  # (name, preset, value as written)
    for names, mine, paper in re.findall(
            r"^\| ((?:`\w+`(?:, )?)+) \| the preset's \(([^;)]+); paper ([^)]+)\)", text, re.M):
        keys = re.findall(r"`(\w+)`", names)
        for preset, values in (("default", mine), ("paper", paper)):
            claims += [(k, preset, v) for k, v in zip(keys, values.split(", "), strict=False)]
    row = next(line for line in text.splitlines() if "every option of the strategy's" in line)
    for name, mine, paper in re.findall(r"`(\w+)`: [^(]*\(([^;)]+); paper ([^)]+)\)", row):
        claims += [(name, "default", mine), (name, "paper", paper)]
    assert {n for n, _, _ in claims} >= {"beta", "beta_stop", "k_min", "n_init", "k_init",
                                         "random_interleave", "random_top", "challengers"}
    for name, preset, written in claims:
        o = Options(method="erahbo", preset=preset)
        value = parts.settings(o).get(name, getattr(o, name))
        if written == "k_max":
            assert value is None or value == o.k_max, (name, preset)
        elif written in ("true", "false"):
            assert value is (written == "true"), (name, preset)
        else:
            assert float(value) == float(written), (name, preset, value, written)
