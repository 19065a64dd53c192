"""Two Optuna worker processes on one SQLite storage share ERAHBOSampler's seed claims.

The study runs in real processes (``benchmarks/optuna_two_workers.py``: the same sampler
options and seed in both workers, the worst case); the rules checked hold for any
interleaving of the two workers.
"""

import json
import os
from pathlib import Path

import pytest

from forked_app import run_script

pytest.importorskip("optuna")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "optuna_two_workers.py"


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    out = tmp_path_factory.mktemp("workers") / "figures.json"
    db = out.parent / "study.db"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    # ``python SCRIPT ...`` in a process forked from the server that imported erahbo once
    # (tests/forked_app.py); its two workers are new interpreters (the script starts them)
    done = run_script(str(SCRIPT), "--runs", "60", "--db", str(db), "--json", str(out),
                      cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def test_two_worker_processes_never_train_the_same_configuration_and_seed(figures):
    assert figures["runs"] >= 60
    assert len(figures["trials_per_worker"]) == 2  # both workers trained
    assert all(n >= 2 for n in figures["trials_per_worker"].values())
    assert figures["duplicated_pairs"] == 0
    assert set(figures["states"]) <= {"COMPLETE", "PRUNED"}


def test_the_recommendations_spread_is_the_spread_of_its_distinct_runs(figures):
    rec = figures["recommendation"]
    assert rec["study_attribute_trial"] == rec["trial"]  # recommended_trial(study) agrees
    assert rec["k"] == rec["distinct_runs"] >= 2  # every pooled run is a distinct seed
    assert rec["std_erahbo"] == pytest.approx(rec["std_distinct_runs"], rel=1e-9)
