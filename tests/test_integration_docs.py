"""The integration docs' examples run as written; the SB3 example at least compiles."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.xdist_group("ray")  # with the other Ray modules (conftest.py)


def _blocks(name: str) -> list[str]:
    text = (ROOT / "docs" / "integrations" / name).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_optuna_doc_example_runs_and_resumes(tmp_path, monkeypatch, capsys):
    pytest.importorskip("optuna")
    monkeypatch.chdir(tmp_path)
    (block,) = _blocks("optuna.md")
    ns: dict = {}
    exec(compile(block, "docs/integrations/optuna.md", "exec"), ns)
    assert len(ns["study"].trials) == 12 and ns["sampler"].recommend(ns["study"])
    ns2: dict = {}
    exec(compile(block.replace("n_trials=12", "n_trials=2"), "optuna.md", "exec"), ns2)
    assert len(ns2["study"].trials) == 14  # the second run resumed the stored study
    assert "lr" in capsys.readouterr().out


def test_ray_tune_doc_example_runs(tmp_path, monkeypatch, capsys, no_shared_ray):
    pytest.importorskip("ray.tune")
    monkeypatch.chdir(tmp_path)
    (block,) = _blocks("ray_tune.md")
    ns: dict = {}
    exec(compile(block, "docs/integrations/ray_tune.md", "exec"), ns)
    results, opt = ns["results"], ns["searcher"].optimizer
    assert not results.errors and len(results) == opt.n_evals >= 11  # budget 12
    # (a new configuration needs 2 seeds: with 1 run left the searcher says FINISHED)
    assert ns["searcher"].recommend()["lr"] > 0
    assert "stop_reason" in capsys.readouterr().out


def test_sb3_example_compiles():
    path = ROOT / "examples" / "sb3_ppo_cartpole.py"
    compile(path.read_text(), str(path), "exec")
