"""Warm start from files whose hyperparameter columns drop or add ARLBench's ``hp_config.``."""

import warnings

import pandas as pd
import pytest

import erahbo
from erahbo import SearchSpace

SPACE = {"hp_config.x": ("float", 0.0, 1.0), "hp_config.act": ("cat", ["good", "bad"])}


def test_a_hypersweeper_runhistory_warm_starts_without_a_false_ignored_warning(tmp_path):
    """Rule: a column that matches a hyperparameter up to the ``hp_config.`` prefix is used,
    so it is not reported as ignored (the loader strips the prefix; the space keeps it)."""
    path = tmp_path / "runhistory.csv"
    pd.DataFrame({"config_id": [0, 1], "performance": [0.1, 0.2],
                  "performance_seed_42": [0.1, 0.1], "performance_seed_43": [0.1, 0.3],
                  "budget": [None, None], "hp_config.x": [0.1, 0.3],
                  "hp_config.act": ["good", "good"]}).to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt = erahbo.Optimizer(SearchSpace(SPACE), "erahbo", budget=40, warm_start=path)
    hist = opt.result().history
    assert (hist["phase"] == "warm").sum() == 4
    assert sorted(hist["hp_config.x"].unique()) == [0.1, 0.3]


def test_a_truly_unknown_column_is_still_named():
    """Rule: the warning stays for a column that is no hyperparameter, prefixed or not."""
    warm = pd.DataFrame({"x": [0.5, 0.5], "act": ["good", "good"], "return": [1.0, 1.2],
                         "lr": [3, 3], "seed": [1, 2]})
    with pytest.warns(UserWarning, match=r"\['lr'\] are neither hyperparameters"):
        erahbo.Optimizer(SearchSpace(SPACE), "erahbo", budget=40, warm_start=warm)
