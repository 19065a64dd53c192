"""Bad input to a search space ends in one clear message naming the entry and the fix
(issues 13 and 27: list-form specs, names reserved by the result tables, one-row and
repeated-row candidate tables, space files)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

import erahbo
from cli_helpers import run_cli
from erahbo import SearchSpace


def ok_objective(config, seed):
    return math.sin(5 * float(config["x"])) + 0.01 * (seed % 7)


_cli = run_cli  # erahbo <args> in the test's folder (tests/cli_helpers.py)


# --- issue 27: list-form specs read as the JSON form is ----------------------------------------


def test_a_python_list_spec_that_starts_with_a_type_is_that_type():
    space = SearchSpace({"lr": ["log", 1e-4, 0.1], "act": ["cat", ["tanh", "relu"]],
                         "flag": ["bool"], "gamma": ["const", 0.99], "batch": [32, 64]})
    assert space.to_json() == SearchSpace({
        "lr": ("log", 1e-4, 0.1), "act": ("cat", ["tanh", "relu"]), "flag": ("bool",),
        "gamma": ("const", 0.99), "batch": ("cat", [32, 64])}).to_json()


@pytest.mark.parametrize("entry,msg", [
    (["float", 1], r"\['float', 1\] gives 1 bound\(s\); \('float', lower, upper\) takes two"),
    (["log", 1e-4, 0.1, 1.0], r"gives 3 bound\(s\)"),
    (["int", "a", "b"], "lower bound must be a number, got 'a'"),
    (["cat", "dog"], r"takes a list of choices, got 'dog'.*write \(\"cat\", \['cat', 'dog'\]\)"),
])
def test_a_list_spec_with_a_type_and_a_wrong_shape_is_refused_with_the_tuple_form(entry, msg):
    with pytest.raises((ValueError, TypeError), match=r"hyperparameter 'lr': .*" + msg):
        SearchSpace({"lr": entry})


def test_a_space_file_with_a_missing_bound_names_the_file_and_the_form(tmp_path, monkeypatch):
    """The CLI's JSON space and the Python spec share one parser: no silent categorical."""
    (tmp_path / "space.json").write_text('{"lr": ["float", 1]}')
    res = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space",
                "space.json", "--budget", "20", "--no-progress"], tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "space file space.json: hyperparameter 'lr': ['float', 1] gives 1 bound(s)" in text
    assert '["float", 0.0, 1.0]' in text


def test_the_hydra_sweeper_reads_lists_with_the_same_parser():
    from hydra_plugins.erahbo_sweeper._space import load_search_space

    assert load_search_space({"lr": ["log", 1e-5, 0.1]}).to_json() == SearchSpace(
        {"lr": ("log", 1e-5, 0.1)}).to_json()
    with pytest.raises(ValueError, match=r"hyperparameter 'lr': lower bound must be a number, "
                       r"got '1e-5' .*YAML"):
        load_search_space({"lr": ["log", "1e-5", 0.1]})  # YAML reads 1e-5 as a string


# --- issue 27: hyperparameters named like result columns ----------------------------------------


def test_reserved_names_are_exactly_the_result_columns():
    """The space's list (spelled out below the table modules) is the tables' columns."""
    from erahbo.optimizer.records import HISTORY_COLUMNS, ROUND_COLUMNS
    from erahbo.recommendation import CONFIG_COLUMNS
    from erahbo.space.reserved import RESERVED_NAMES

    assert set(RESERVED_NAMES) == {*HISTORY_COLUMNS, "config_id", *CONFIG_COLUMNS,
                                   *ROUND_COLUMNS}


def test_result_columns_match_the_reserved_names_on_a_real_study():
    from erahbo.space.reserved import RESERVED_NAMES

    res = erahbo.optimize(ok_objective, {"x": ("float", 0.0, 1.0)}, budget=12, k_init=2,
                          n_init=5, k_max=2, seed=0)
    for table in (res.history, res.configs, res.rounds):
        assert set(table.columns) - {"x"} <= set(RESERVED_NAMES)


@pytest.mark.parametrize("name", ["mean", "k", "return", "seed", "std", "config_id", "rank"])
def test_a_hyperparameter_named_like_a_result_column_is_refused(name):
    with pytest.raises(ValueError, match=rf"name\(s\) \['{name}'\] are reserved.*Reserved: "
                       rf"\[.*'wall_time'.*\]; rename them, e.g. '{name}_hp'"):
        SearchSpace({name: ("float", 0.0, 1.0), "x": ("float", 0.0, 1.0)})


def test_a_candidate_table_column_named_like_a_result_column_is_refused():
    df = pd.DataFrame({"lr": [0.1, 0.2, 0.3], "mean": [1, 2, 3], "seed": [4, 5, 6]})
    with pytest.raises(ValueError, match=r"\['mean', 'seed'\] are reserved.*rename those "
                       r"columns of the candidate table, e.g. df.rename"):
        SearchSpace(df)
    # with a spec, only the spec's columns are hyperparameters: other columns are ignored
    space = SearchSpace(df, {"lr": ("float", 0.1, 0.3)})
    assert space.names == ["lr"]


# --- issue 27: one-row and repeated-row candidate tables ----------------------------------------


@pytest.mark.parametrize("space", [pd.DataFrame({"x": [0.4], "act": ["relu"]}),
                                   {"x": ("const", 0.4)}],
                         ids=["one-row table", "constants only"])
def test_a_space_of_one_configuration_is_run_with_its_seeds(space):
    """Nothing to choose: the study spends its seeds on the one configuration (as Optuna or
    SMAC would run it) instead of failing inside the GP fit (no input column)."""
    res = erahbo.optimize(ok_objective, space, budget=12, k_init=2, n_init=5, k_max=6,
                          seed=0)
    assert res.incumbent_id == 0 and res.incumbent["x"] == 0.4
    assert set(res.history["config_id"]) == {0} and res.n_evals >= 6
    assert np.isfinite(res.incumbent_mv)


def test_the_map_fit_of_a_gp_without_inputs_is_the_noise_or_nothing():
    from erahbo.gp.fit import fit_map

    y = np.array([0.5, -0.5, 0.2])
    learned = fit_map(np.zeros((3, 0)), y)  # learned noise: one parameter
    assert learned.lengthscales.shape == (0,) and learned.noise > 0
    fixed = fit_map(np.zeros((3, 0)), y, fixed_noise=np.full(3, 0.1))  # nothing to fit
    assert fixed.lengthscales.shape == (0,) and np.isfinite(fixed.log_posterior)


def test_repeated_rows_of_a_candidate_table_are_named_in_one_warning():
    df = pd.DataFrame({"lr": [0.1, 0.2, 0.1, 0.3, 0.2], "act": ["a", "b", "a", "b", "b"],
                       "note": ["p", "q", "r", "s", "t"]})
    with pytest.warns(UserWarning, match=r"2 row\(s\) repeat an earlier row .*: 2 = 0, 4 = 1\. "
                      r"Each row is a configuration of its own.*drop_duplicates") as got:
        SearchSpace(df, {"lr": ("float", 0.1, 0.3), "act": ("cat", ["a", "b"])})
    assert len(got) == 1
    space = SearchSpace(df[["lr", "act"]].drop_duplicates())  # the fix: no warning
    assert space.n_candidates == 3


# --- issue 38: a table read with the wrong separator, a JSON key given twice --------------------


@pytest.mark.parametrize("sep, name", [(";", "semicolons"), ("\t", "tabs")])
def test_a_space_table_separated_otherwise_than_by_commas_is_refused_naming_it(
        sep, name, tmp_path, monkeypatch):
    """Rule: a candidate table whose fields are separated by ';' (or tabs) is refused naming
    the separator, before any run (not a KeyError of the objective); in Python too."""
    rows = ["x" + sep + "y", *(f"{x / 10}{sep}{x}" for x in range(1, 6))]
    (tmp_path / "table.csv").write_text("\n".join(rows) + "\n")
    res = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space",
                "table.csv", "--budget", "10", "--no-progress"], tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code != 0 and "KeyError" not in text and "initial design" not in text
    assert f"space file table.csv has one column, {'x' + sep + 'y'!r}: the file separates " \
        f"its fields with {name} ({sep!r}), not commas" in text
    shown = re.escape(repr(sep))
    with pytest.raises(ValueError, match=rf"one column, .* hold {shown}.*sep={shown}"):
        SearchSpace(pd.read_csv(tmp_path / "table.csv"))
    assert SearchSpace(pd.read_csv(tmp_path / "table.csv", sep=sep)).names == ["x", "y"]


def test_a_json_space_with_a_key_twice_is_refused_naming_it(tmp_path, monkeypatch):
    """Rule: a JSON space that gives a hyperparameter twice is refused naming it (a JSON
    reader would keep the last silently), by the CLI and by the Hydra sweeper."""
    (tmp_path / "space.json").write_text('{"lr": ["log", 1e-5, 0.1], "x": ["float", 0, 1], '
                                         '"lr": ["float", 0, 1]}')
    res = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space",
                "space.json", "--budget", "20", "--no-progress"], tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code != 0
    assert "space file space.json: key 'lr' appears twice in one JSON object" in text
    from hydra_plugins.erahbo_sweeper._space import load_search_space

    with pytest.raises(ValueError, match="key 'lr' appears twice"):
        load_search_space(str(tmp_path / "space.json"))
