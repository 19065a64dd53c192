"""Bad input ends in one clear message naming the file, row, column or option (issue 13)."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import erahbo
from cli_helpers import run_cli
from erahbo import SearchSpace
from erahbo.cli import app

runner = CliRunner()


def ok_objective(config, seed):
    """Importable as test_bad_input:ok_objective (the CLI tests)."""
    return math.sin(5 * float(config["x"])) + 0.01 * (seed % 7)


def other_objective(config, seed):
    return math.cos(5 * float(config["x"])) + 0.01 * (seed % 7)


_cli = run_cli  # erahbo <args> in the test's folder (tests/cli_helpers.py)


# --- candidate tables ------------------------------------------------------------------------


def test_candidate_table_with_a_missing_cell_is_refused_with_row_and_column():
    df = pd.DataFrame({"x": [0.1, 0.2, 0.3], "y": [0.2, None, 0.4]})
    with pytest.raises(ValueError, match=r"row 1, column 'y' is empty"):
        SearchSpace(df)
    with pytest.raises(ValueError, match="row 1, column 'y'"):
        erahbo.optimize(lambda c, s: 1.0, df, budget=20, k_init=2, seed=0)
    space = SearchSpace(df, allow_missing=True)  # datasets: an empty cell = inactive there
    assert space.candidate_config(1) == {"x": 0.2}


def test_space_file_with_a_missing_cell_names_the_file(tmp_path, monkeypatch):
    (tmp_path / "hole.csv").write_text("x,y\n0.1,0.2\n0.3,\n")
    res = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space", "hole.csv",
                "--budget", "20", "--no-progress"], tmp_path, monkeypatch)
    assert res.exit_code != 0
    assert "space file hole.csv: candidate table row 1, column 'y' is empty" in res.output


@pytest.mark.parametrize("name", ["space.csv", "space.json", "space.parquet"])
@pytest.mark.parametrize("content", [b"", b"\x00\x01\xff\xfe garbage \x89PNG"])
def test_binary_or_empty_space_files_name_the_file(tmp_path, monkeypatch, name, content):
    (tmp_path / name).write_bytes(content)
    res = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space", name,
                "--budget", "20", "--no-progress"], tmp_path, monkeypatch)
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert f"space file {name}" in res.output
    assert "empty file" in res.output if not content else "not a" in res.output


@pytest.mark.parametrize("content", [b"", b"\x00\x01\xff\xfe garbage"])
def test_binary_or_empty_warm_start_files_name_the_file(tmp_path, content):
    path = tmp_path / "warm.csv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"warm-start file .*warm.csv"):
        erahbo.Optimizer(SearchSpace({"x": ("float", 0, 1)}), "erahbo", budget=50,
                         warm_start=path, n_init=0)


def test_extra_warm_start_columns_are_named_in_a_warning():
    warm = pd.DataFrame({"x": [0.5, 0.5], "return": [1.0, 1.2], "lr": [3, 3], "seed": [1, 2]})
    with pytest.warns(UserWarning, match=r"\['lr'\] are neither hyperparameters"):
        erahbo.Optimizer(SearchSpace({"x": ("float", 0, 1)}), "erahbo", budget=50,
                         warm_start=warm, n_init=0)


def test_configspace_or_conjunction_is_rejected_clearly():
    CS = pytest.importorskip("ConfigSpace")
    cs = CS.ConfigurationSpace()
    a = CS.CategoricalHyperparameter("a", ["x", "y", "z"])
    b = CS.UniformFloatHyperparameter("b", 0, 1)
    cs.add([a, b])
    cs.add(CS.OrConjunction(CS.EqualsCondition(b, a, "x"), CS.EqualsCondition(b, a, "y")))
    with pytest.raises(ValueError, match=r"condition on 'b' is an OrConjunction.*InCondition"):
        SearchSpace(cs)


# --- objectives and returns --------------------------------------------------------------------


def test_huge_finite_returns_fail_with_a_message_instead_of_breaking_the_models():
    def obj(c, s):
        return 1e300 if c["x"] > 0.8 else float(c["x"]) + 0.01 * (s % 5)

    res = erahbo.optimize(obj, {"x": ("float", 0.0, 1.0)}, budget=80, k_max=5, seed=0)
    assert np.isfinite(res.incumbent_mv) and res.incumbent["x"] <= 0.8
    bad = res.history[res.history.status != "ok"]
    assert len(bad) > 0 and bad.error.str.contains("beyond \\+-1e\\+150").all()
    strict = erahbo.Optimizer(SearchSpace({"x": ("float", 0, 1)}), "rahbo", k=2, budget=10)
    with pytest.raises(ValueError, match="rescale the returns"):
        strict.tell(strict.ask(), [1e300, 1.0])


def test_tell_names_a_return_that_is_not_a_number():
    opt = erahbo.Optimizer(SearchSpace({"x": ("float", 0, 1)}), "rahbo", k=2, budget=10)
    t = opt.ask()
    with pytest.raises(ValueError, match="got the str 'abc'"):
        opt.tell(t, "abc")
    with pytest.raises(ValueError, match="return 0 of trial 1 is str 'abc', not a number"):
        opt.tell(t, ["abc", 1.0])
    opt.tell(t, [1.0, 2.0])  # the trial is still pending after a refused tell


def test_a_module_whose_own_import_fails_shows_the_real_error(tmp_path, monkeypatch):
    from erahbo.study.rebuild import load_objective

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "needs_dep.py").write_text("import not_installed_xyz\ndef f(c, s): return 1.0\n")
    (tmp_path / "raises_at_import.py").write_text("raise RuntimeError('bad setting')\n")
    with pytest.raises(ImportError, match=r"was found but its own import failed.*"
                       "not_installed_xyz"):
        load_objective("needs_dep:f")
    with pytest.raises(ImportError, match="raised RuntimeError: bad setting"):
        load_objective("raises_at_import:f")
    with pytest.raises(ImportError, match="run from the folder that holds it"):
        load_objective("no_such_module_xyz:f")


def test_an_objective_given_as_a_file_path_is_imported_from_its_folder(tmp_path, monkeypatch):
    """'path/to/file.py:function' (what a shell completes) loads the file by its stem; a
    missing file is named with the fix."""
    from erahbo.study.rebuild import load_objective

    sub = tmp_path / "jobs"
    sub.mkdir()
    (sub / "train_one_seed_xyz.py").write_text("def f(c, s):\n    return 2.0 * s\n")
    monkeypatch.chdir(tmp_path)
    f, space = load_objective("jobs/train_one_seed_xyz.py:f")
    assert f({}, 3) == 6.0 and space is None
    with pytest.raises(ImportError, match=r"no file .*missing_xyz\.py; give 'file.py:function'"):
        load_objective("jobs/missing_xyz.py:f")


# --- CLI options -------------------------------------------------------------------------------


def test_out_naming_an_existing_file_is_refused_before_running(tmp_path, monkeypatch):
    (tmp_path / "space.json").write_text('{"x": ["float", 0, 1]}')
    res = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space",
                "space.json", "--budget", "20", "--k-init", "2", "--no-progress", "--out",
                "space.json"], tmp_path, monkeypatch)
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "--out space.json is an existing file, not a folder" in res.output


def test_tune_refuses_a_task_that_cannot_run_here_without_force(tmp_path, monkeypatch):
    from erahbo.arlbench.registry import get_task

    if get_task("sac_brax_halfcheetah").runnable_here:
        pytest.skip("an accelerator is present: the Brax task can run here")
    res = _cli(["tune", "--task", "sac_brax_halfcheetah", "--budget", "4"], tmp_path,
               monkeypatch)
    assert res.exit_code == 2 and "cannot run here" in res.output and "--force" in res.output


def test_generate_refuses_one_seed(tmp_path, monkeypatch):
    res = _cli(["dataset", "generate", "--task", "ppo_cc_cartpole", "--seeds", "1", "--out",
                "gen"], tmp_path, monkeypatch)
    assert res.exit_code == 2 and "--seeds 1" in res.output and "at least 2" in res.output
    assert not (tmp_path / "gen").exists()


def _table(tmp_path, name, fill):
    n, s = 12, 10
    df = pd.DataFrame({"x": np.linspace(0, 1, n)})
    rng = np.random.default_rng(0)
    for j in range(s):
        df[f"seed_{j}"] = fill(rng, n)
    df.to_csv(tmp_path / name, index=False)


def test_benchmark_refuses_more_seeds_than_the_table_stores(tmp_path, monkeypatch):
    _table(tmp_path, "ten.csv", lambda rng, n: rng.normal(size=n))
    res = _cli(["benchmark", "ten.csv", "--methods", "rahbo-k20", "--repetitions", "1",
                "--budget", "20", "--k-init", "5", "--out", "b"], tmp_path, monkeypatch)
    assert res.exit_code != 0
    text = " ".join(res.output.replace("│", " ").split())
    assert "method rahbo-k20 needs 20 seeds per configuration, but task ten stores 10" in text
    res = _cli(["benchmark", "ten.csv", "--methods", "erahbo", "--repetitions", "1",
                "--budget", "20", "--out", "b"], tmp_path, monkeypatch)  # k_init, k_max 20 > 10
    text = " ".join(res.output.split())
    assert res.exit_code == 0, res.output  # capped, and said so
    assert "ten stores 10 seeds per configuration: k_init=20 and k_max=20 run as 10" in text


@pytest.mark.parametrize("kind", ["allnan", "const"])
def test_benchmark_on_an_unusable_table_says_why(tmp_path, monkeypatch, kind):
    _table(tmp_path, f"{kind}.csv",
           (lambda rng, n: np.full(n, np.nan)) if kind == "allnan" else
           (lambda rng, n: np.ones(n)))
    res = _cli(["benchmark", f"{kind}.csv", "--methods", "rahbo-k5", "--repetitions", "1",
                "--budget", "20", "--k-init", "5", "--out", "b"], tmp_path, monkeypatch)
    assert res.exit_code != 0
    text = " ".join(res.output.replace("│", " ").split())
    assert "no usable task found" in text and "same mean return" in text
    if kind == "allnan":
        assert "NaN" in text


# --- journals ----------------------------------------------------------------------------------


def test_a_finished_journal_rerun_with_another_objective_is_refused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent))
    import test_bad_input as mod

    space = {"x": ("float", 0.0, 1.0)}
    path = tmp_path / "j.db"
    first = erahbo.optimize(mod.ok_objective, space, budget=20, k_init=2, k_max=2, seed=0,
                            journal=path)
    with pytest.raises(ValueError, match="holds a study of objective 'test_bad_input:"
                       "ok_objective', but this call optimizes 'test_bad_input:other_objective'"):
        erahbo.optimize(mod.other_objective, space, budget=20, k_init=2, k_max=2, seed=0,
                        journal=path)
    again = erahbo.optimize(mod.ok_objective, space, budget=20, k_init=2, k_max=2, seed=0,
                            journal=path)
    assert again.incumbent == first.incumbent


@pytest.mark.parametrize("flag", ["--pool-share", "--seed-share"])
def test_a_share_outside_0_1_is_refused_naming_the_option(flag, tmp_path, monkeypatch):
    (tmp_path / "space.json").write_text('{"x": ["float", 0, 1]}')
    res = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space",
                "space.json", "--budget", "20", "--no-progress", flag, "1.5"], tmp_path,
               monkeypatch)
    name = flag[2:].replace("-", "_")
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert f"{name}=1.5 must be in [0, 1)" in " ".join(res.output.split())


@pytest.mark.parametrize("content,msg", [(b"", "is an empty file"),
                                         (bytes(range(128, 256)), "is not a text CSV file")])
def test_a_bad_warm_start_file_is_named_with_the_fix(content, msg, tmp_path, monkeypatch):
    (tmp_path / "space.json").write_text('{"x": ["float", 0, 1]}')
    (tmp_path / "old.csv").write_bytes(content)
    res = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space",
                "space.json", "--budget", "20", "--no-progress", "--warm-start", "old.csv"],
               tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert f"warm-start file old.csv {msg}" in text and "history.csv works" in text


def test_benchmark_into_a_folder_of_other_defaults_says_how_to_go_on(tmp_path, monkeypatch):
    from erahbo.optimizer.options import ERAHBO_DEFAULTS

    _table(tmp_path, "ten.csv", lambda rng, n: rng.normal(size=n))
    args = ["benchmark", "ten.csv", "--methods", "erahbo", "--repetitions", "1", "--budget",
            "20", "--k-init", "2", "--k-max", "10", "--out", "b", "--no-report"]
    assert _cli(args, tmp_path, monkeypatch).exit_code == 0
    monkeypatch.setitem(ERAHBO_DEFAULTS, "random_top", 1.0)  # a new version's defaults
    res = _cli(args, tmp_path, monkeypatch)
    text = " ".join(res.output.replace("│", " ").split())
    assert res.exit_code == 2 and "Traceback" not in res.output  # a usage error, not a crash
    assert "--out" in text and "random_top differ" in text and "delete b/traces/*/erahbo" in text
    for d in (tmp_path / "b" / "traces").glob("*/erahbo"):  # the fix the message names
        shutil.rmtree(d)
    res = _cli(args, tmp_path, monkeypatch)
    assert res.exit_code == 0, res.output
    assert "1 trace(s) written, 0 already done" in " ".join(res.output.split())


# --- issue 27: worker processes and a script without a __main__ guard --------------------------

_UNGUARDED = '''import erahbo

def obj(config, seed):
    return -(config["x"] - 0.3) ** 2

result = erahbo.optimize(obj, {{"x": ("float", 0.0, 1.0)}}, budget=12, seed=0, {extra})
print("incumbent", result.incumbent)
'''


@pytest.mark.parametrize("extra", ["run_timeout=30", "workers=2, journal='study.db'"])
def test_a_script_without_a_main_guard_is_told_to_add_it(tmp_path, extra):
    """Spawned workers re-run the script's top level: the study stops at once and says why,
    instead of 'every run of the initial design failed' (JournalLockedError in each worker)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED.format(extra=extra))
    src = str(Path(erahbo.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src, "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "incumbent" not in proc.stdout
    err = proc.stderr
    assert "MainGuardMissing: worker processes re-import" in err and str(script) in err
    assert 'under `if __name__ == "__main__":`' in err
    assert "JournalLockedError" not in err and "initial design failed" not in err
    guarded = _UNGUARDED.format(extra=extra).replace("result =", 'if __name__ == "__main__":\n'
                                                      "    result =").replace(
        'print("incumbent"', '    print("incumbent"')
    script.write_text(guarded)  # the fix the message names (a journal resumes)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "incumbent {'x':" in proc.stdout


# --- issue 27: poor items (CLI options, messages, docs, figures, the SB3 example) --------------


@pytest.mark.parametrize("args", [
    ["optimize", "--objective", "test_bad_input:ok_objective", "--space", "space.json"],
    ["benchmark", "t.csv"], ["demo"], ["dataset", "synth"], ["report", "."],
    ["tune", "--task", "ppo_cc_cartpole"],
    ["dataset", "generate", "--task", "ppo_cc_cartpole"],
], ids=lambda a: " ".join(a[:2]))
def test_an_empty_out_folder_is_refused_instead_of_writing_here(args, tmp_path, monkeypatch):
    res = _cli([*args, "--out", ""], tmp_path, monkeypatch)
    text = " ".join(res.output.replace("│", " ").split())
    assert res.exit_code == 2, res.output
    assert "Invalid value for '--out': an empty path would write into the current folder" in text
    assert "results/study" in text and list(tmp_path.iterdir()) == []


def test_tune_has_no_progress_as_optimize_has(tmp_path, monkeypatch):
    import typer.main

    def progress(command):
        cmd = typer.main.get_command(app).commands[command]
        (p,) = [p for p in cmd.params if "--no-progress" in p.secondary_opts]
        return p.opts, p.secondary_opts, p.help, p.default

    assert progress("tune") == progress("optimize")
    assert progress("tune")[2] == "Show a progress bar."
    assert "--no-progress" in _cli(["tune", "--help"], tmp_path, monkeypatch).output


def test_generate_names_the_configs_option_and_value(tmp_path, monkeypatch):
    res = _cli(["dataset", "generate", "--task", "ppo_cc_cartpole", "--configs", "0", "--out",
                "gen", "--force"], tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "--configs 0: a table needs at least 1 configuration" in text
    assert "use --configs 1 or more" in text and not (tmp_path / "gen").exists()


def test_the_explanation_shows_the_digits_that_tell_two_values_apart():
    from erahbo.recommendation import explain_incumbent

    configs = pd.DataFrame({"config_id": [0, 1], "k": [10, 3], "mean": [499.8, 500.2],
                            "std": [2.0, 3.0], "var": [4.0, 9.0], "n_failed": [0, 0],
                            "mv": [492.1, 491.3], "lcb_mv": [480.0, 470.0],
                            "ucb_mv": [500.0, 510.0], "rank": [1, 2], "rule": ["lcb_mv", None]})
    text = explain_incumbent(configs)
    assert "higher sample mean (500.2 vs 499.8)" in text
    assert "MV estimate is lower (491 vs 492)" in text and "(500 vs 500)" not in text


def test_every_history_csv_column_is_documented():
    """history.csv's columns (wall_time: seconds since the study started) are in the docs."""
    from pathlib import Path

    from erahbo.space.reserved import RESERVED_NAMES

    docs = (Path(__file__).resolve().parents[1] / "docs" / "robustness.md").read_text()
    res = erahbo.optimize(ok_objective, {"x": ("float", 0.0, 1.0)}, budget=12, k_init=2,
                          n_init=5, k_max=2, seed=0)
    for column in res.history.columns.drop("x"):
        assert f"`{column}" in docs or f"{column}`" in docs or f" {column}," in docs, column
        assert column in RESERVED_NAMES
    assert "`wall_time` (seconds from the start of the study" in " ".join(docs.split())


def test_dataset_inspect_defines_degen(tmp_path, monkeypatch):
    from erahbo.datasets.loaders import bundled_tasks

    monkeypatch.setenv("COLUMNS", "140")
    res = _cli(["dataset", "inspect", str(bundled_tasks()[0])], tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code == 0, res.output
    assert "degen." in text and "degen.: degenerate task (every feasible configuration has " \
        "the same mean return" in text


def test_figures_label_what_they_show(tmp_path):
    """rounds.png at beta_stop = 0 says points, not bounds; k_vs_mv offsets methods of one k
    and gives each its own marker; seed_counts explains rounds of one seed."""
    import matplotlib

    matplotlib.use("Agg")
    from erahbo.analysis import plots, run_plots

    res = erahbo.optimize(ok_objective, {"x": ("float", 0.0, 1.0)}, budget=30, seed=0)
    assert (res.rounds.loc[res.rounds.phase == "bo", "beta_stop"] == 0).all()  # the default
    captured = {}
    real_save = run_plots._save

    def save(fig, path, **kw):
        captured["ylabel"] = fig.axes[0].get_ylabel()
        captured["legend"] = [t.get_text() for t in fig.legends[0].get_texts()]
        return real_save(fig, path, **kw)

    run_plots._save = save
    try:
        run_plots.plot_rounds(res, tmp_path / "rounds.png")
    finally:
        run_plots._save = real_save
    assert captured["ylabel"] == "posterior MV of x_t (beta_stop = 0)"
    assert "B_t = best posterior MV (incumbent; beta_stop = 0)" in captured["legend"]

    kmv = pd.DataFrame({"method": ["rahbo-k20", "gpucb-k20"] * 2, "bin": [0, 0, 1, 1],
                        "lo": [0.0, 0.0, 0.5, 0.5], "hi": [0.5, 0.5, 1.0, 1.0],
                        "center": [0.2, 0.2, 0.7, 0.7], "mean_k": [20.0] * 4,
                        "se_k": [0.0] * 4, "n": [5] * 4})
    fig_calls = []
    real_errorbar = matplotlib.axes.Axes.errorbar

    def errorbar(self, x, y, *a, **kw):
        fig_calls.append((tuple(np.round(x, 3)), kw.get("marker")))
        return real_errorbar(self, x, y, *a, **kw)

    matplotlib.axes.Axes.errorbar = errorbar
    try:
        plots.plot_k_vs_mv(kmv, ["rahbo-k20", "gpucb-k20"], tmp_path / "k_vs_mv.png")
    finally:
        matplotlib.axes.Axes.errorbar = real_errorbar
    (x1, m1), (x2, m2) = fig_calls
    assert x1 != x2 and m1 != m2  # one k, two distinguishable series

    rounds = pd.DataFrame({"task": "t", "method": "erahbo", "repetition": 0,
                           "round": [1, 2, 3, 4], "config_id": [7, 8, 7, 9],
                           "k": [2, 2, 1, 20], "stop_reason": ["dominated"] * 3 + ["k_max"],
                           "config_norm_regret": [0.1, 0.5, 0.1, 0.0]})
    assert plots._one_seed_revisits(rounds)  # the k = 1 round re-selects config 7
    assert not plots._one_seed_revisits(rounds.assign(config_id=[7, 8, 6, 9]))


def test_the_sb3_example_prints_values_and_runs_torch_on_one_thread(monkeypatch):
    import importlib.util
    import os
    from pathlib import Path

    optuna = pytest.importorskip("optuna")
    path = Path(__file__).resolve().parents[1] / "examples" / "sb3_ppo_cartpole.py"
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    spec = importlib.util.spec_from_file_location("sb3_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert os.environ["OMP_NUM_THREADS"] == "1"  # set at import, before torch
    assert "--trials 12 --timesteps 10000 --k-max 5" in mod.__doc__
    monkeypatch.setattr(mod, "train_ppo", lambda params, seed, timesteps: float(
        100 * params["clip_range"] + params["width"] / 64 + seed % 3))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = mod.ERAHBOSampler(alpha=1.0, k_min=2, k_max=3, n_init=3, seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
    study.optimize(mod.make_objective(100, 3), n_trials=4)
    table = sampler.result(study).configs  # the values the objective received
    assert set(table["n_steps"]) <= {128, 256, 512, 1024, 2048}
    assert set(table["width"]) <= {32, 64, 128}
    assert set(table["clip_range"]) <= {0.1, 0.2, 0.3, 0.4}


# --- issue 27: first contact (start-up) ---------------------------------------------------------

_STARTUP = '''import sys
sys.argv = ["erahbo", *sys.argv[1:]]
from erahbo.cli import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in ("typer", "pandas", "scipy", "matplotlib", "rliable", "ray", "torch")
               if m in sys.modules)
print("HEAVY", heavy)
'''


@pytest.mark.parametrize("args,allowed", [(["--version"], []), (["--help"], ["typer"]),
                                          (["dataset", "--help"], ["typer"])])
def test_the_cli_starts_without_the_heavy_libraries(args, allowed):
    """`erahbo --version` imports nothing heavy (not even Typer); `--help` only Typer: the
    command modules import pandas, scipy, matplotlib inside their commands (start-up < 1 s;
    timings in the issue-27 report, not here)."""
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(erahbo.__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", _STARTUP, *args], capture_output=True,
                         text=True, env={"PYTHONPATH": src, "PATH": ""}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"HEAVY {allowed}" in out.stdout
    if args == ["--version"]:
        assert out.stdout.startswith(f"erahbo {erahbo.__version__}\n")
