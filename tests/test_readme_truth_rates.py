"""`benchmarks/readme_truth.py` counts the studies meeting each of issue 37's four targets.

Rule: a study meets a target when its Spearman is at least 0.85, its largest overestimate at
most 1.0, its largest ``B_t - MV*`` at most 0 and its regret at most 0.06; the line names each
count out of the number of studies. The rows are built by hand (no study runs).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from readme_truth import target_rates


def test_each_target_is_counted_at_its_threshold():
    rows = [  # on the thresholds: meets all four
        {"spearman": 0.85, "over": 1.0, "bt_over": 0.0, "regret": 0.06},
        # just past each threshold: meets none
        {"spearman": 0.849, "over": 1.001, "bt_over": 0.001, "regret": 0.061},
        # meets the first two only
        {"spearman": 0.99, "over": -0.2, "bt_over": 0.3, "regret": 0.5},
    ]
    assert target_rates(rows) == ("per study: spearman >= 0.85 in 2 of 3, over <= 1.0 in 2 of 3, "
                                  "B_t <= MV* in 1 of 3, regret <= 0.06 in 1 of 3")


def test_set_takes_pairs_after_one_flag_or_over_repeated_flags_and_refuses_bad_ones(capsys):
    """Rule: ``--set a=1 b=2`` and ``--set a=1 --set b=2`` give the same options (a repeated
    flag adds, it does not replace: session 46 lost an option that way); a pair without ``=``
    or a name given twice ends the script with a message naming it."""
    import argparse

    import pytest

    from readme_truth import add_set_option, set_options

    p = argparse.ArgumentParser(prog="bench")
    add_set_option(p)
    want = {"acquisition_beta_var": 1, "k_max_means": 10, "var_noise": "log"}
    for argv in (["--set", "acquisition_beta_var=1", "k_max_means=10", "var_noise=log"],
                 ["--set", "acquisition_beta_var=1", "--set", "k_max_means=10",
                  "--set", "var_noise=log"]):
        assert set_options(p, p.parse_args(argv).set) == want
    assert set_options(p, p.parse_args([]).set) == {}
    for argv, msg in ((["--set", "k_min"], "--set 'k_min': give NAME=VALUE"),
                      (["--set", "k_min=2", "--set", "k_min=3"],
                       "--set k_min is given twice (2 and 3); give it once")):
        with pytest.raises(SystemExit):
            set_options(p, p.parse_args(argv).set)
        assert msg in capsys.readouterr().err
