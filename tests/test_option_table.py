"""erahbo's extension options, one table: for each, the value in force under each preset and
method, what journals store (an option at its value from before it existed is not stored,
so older journals resume unchanged), the values refused with the fix, and the CLI flag that
sets it (checked on the parsed options: no study runs).

Each option's behaviour in a study is tested in its own file (test_random_design.py,
test_random_top.py, test_challengers.py, test_reselection.py, test_recommendation.py,
test_variance_prior.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import erahbo
from erahbo.study.rebuild import study_options

SPACE = {"x": ("float", 0.0, 1.0)}


@dataclass(frozen=True)
class Row:
    """One option. ``erahbo``, ``paper``, ``rahbo``: the value in force for ERAHBO under
    preset "default" and "paper", and for RAHBO (the fixed-k methods and random search) with
    ``k_max`` 20;
    ``before``: the value of journals written before the option existed (never stored);
    ``given``: a value away from the default; ``bad``: refused options and the message;
    ``flag``: the CLI arguments that set ``given``; ``bad_flag``: CLI arguments refused and
    the message."""

    name: str
    erahbo: object
    paper: object
    rahbo: object
    before: object
    given: object
    bad: tuple[tuple[dict, str], ...]
    flag: tuple[str, ...]
    bad_flag: tuple[tuple[str, ...], str]


ROWS = [
    Row("random_interleave", 20, 0, 0, 0, 10,  # SPACE is continuous (a table's: 50,
        # test_random_design.py)
        (({"random_interleave": -1}, "random_interleave=-1 must be an int >= 0"),
         ({"random_interleave": 2.5}, "random_interleave must be an int"),
         ({"method": "random", "random_interleave": 10},
          "every round of method='random' is random")),
        ("--random-interleave", "10"),
        (("--random-interleave", "-3"), "random_interleave=-3 must be an int >= 0")),
    Row("random_top", 0.1, 1.0, 1.0, 1.0, 0.5,
        (({"random_top": 0}, r"random_top=0 must be in \(0, 1\]"),
         ({"random_top": 1.5}, r"random_top=1.5 must be in \(0, 1\]"),
         ({"random_top": "half"}, "random_top must be a number"),
         ({"method": "random", "random_top": 0.5}, "method='random' has no acquisition")),
        ("--random-top", "0.5"),
        (("--random-top", "0"), "random_top=0.0 must be in (0, 1]")),
    Row("challengers", True, False, False, False, False,
        (({"challengers": "yes"}, "challengers='yes' must be True or False"),
         ({"challengers": 2}, "challengers=2 must be True or False"),
         ({"method": "random", "challengers": True},
          "method='random' has no recommendation")),
        ("--no-challengers",),
        (("--challengers", "--method", "random"), "method='random' has no recommendation")),
    Row("max_seeds", 20, 0, 20, 0, 6,
        (({"max_seeds": -1}, "max_seeds=-1 must be an int >= 0"),
         ({"max_seeds": 2.5}, "max_seeds must be an int"),
         ({"method": "rahbo", "k": 5, "max_seeds": 3},
          "max_seeds=3 is below the seeds of one round")),
        ("--max-seeds", "6"),
        (("--max-seeds", "-1"), "max_seeds=-1 must be an int >= 0")),
    Row("pool_share", 0.25, 0, 0, 0, 0.2,
        (({"pool_share": 1.5}, r"pool_share=1.5 must be in \[0, 1\)"),
         ({"pool_share": -0.1}, r"pool_share=-0.1 must be in \[0, 1\)")),
        ("--pool-share", "0.2"),
        (("--pool-share", "1.5"), "pool_share=1.5 must be in [0, 1)")),
    Row("seed_share", 0, 0, 0, 0, 0.05,
        (({"seed_share": 1}, r"seed_share=1 must be in \[0, 1\)"),),
        ("--seed-share", "0.05"),
        (("--seed-share", "1"), "seed_share=1.0 must be in [0, 1)")),
    Row("recommend_seeds", 20, 0, 0, 0, 5,  # ERAHBO: max_seeds (k_max without a cap)
        (({"recommend_seeds": -1}, "recommend_seeds=-1 must be an int >= 0"),
         ({"recommend_seeds": 1.5}, "recommend_seeds must be an int")),
        ("--recommend-seeds", "5"),
        (("--recommend-seeds", "-1"), "recommend_seeds=-1 must be an int >= 0")),
    Row("var_noise", "log", "fitted", "fitted", "fitted", "chi2",
        (({"var_noise": "gamma"}, "var_noise='gamma' must be one of"),
         ({"var_noise": "chi2", "var_noise_prior": -1.0}, "drop var_noise_prior")),
        ("--var-noise", "chi2"),
        (("--var-noise", "gamma"), "var_noise='gamma' must be one of")),
    Row("var_noise_prior", -4.0, -4.0, -4.0, -4.0, -2.0,
        (({"var_noise_prior": 5}, r"var_noise_prior=5 must be in \[-10, 3\]"),
         ({"var_noise_prior": "low"}, "var_noise_prior must be a number")),
        ("--var-noise-prior", "-2"),
        (("--var-noise-prior", "9"), "var_noise_prior=9.0 must be in [-10, 3]")),
]
IDS = [r.name for r in ROWS]
# an option that acts only together with another (given with it wherever a study sets it):
# a prior of the variance GP's noise needs a fitted noise (ERAHBO's default is "log" since
# session 24: the prior alone is refused with the fix named)
WITH: dict[str, dict] = {"var_noise_prior": {"var_noise": "fitted"}}


def in_force(**kw) -> dict:
    """The options an Optimizer built with ``kw`` runs with, as a resume rebuilds them from
    its journaled settings."""
    return study_options(erahbo.Optimizer(SPACE, budget=100, **kw).study_settings())


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_the_value_in_force_under_each_preset_and_method(row):
    assert in_force()[row.name] == row.erahbo
    assert in_force(preset="paper")[row.name] == row.paper
    assert in_force(method="rahbo")[row.name] == row.rahbo
    assert in_force(**{row.name: row.given}, **WITH.get(row.name, {}))[row.name] == row.given
    assert in_force(method="rahbo", preset="paper")[row.name] == row.paper
    assert in_force(method="random")[row.name] == row.rahbo


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_older_journals_resume_with_the_value_from_before_the_option(row):
    """A journal written before the option (settings schema 1: no ``schema`` key) has no
    entry for it: the study resumes as it ran then. A study today (schema 2) stores the value
    in force explicitly, whatever it is."""
    settings = erahbo.Optimizer(SPACE, budget=100).study_settings()
    settings.pop(row.name, None)
    settings.pop("schema")
    assert study_options(settings)[row.name] == row.before
    for kw, value in (({}, row.erahbo), ({"preset": "paper"}, row.paper),
                      ({"method": "rahbo"}, row.rahbo), ({row.name: row.before}, row.before),
                      ({row.name: row.given}, row.given)):
        kw = {**kw, **WITH.get(row.name, {})} if row.name in kw else kw
        stored = erahbo.Optimizer(SPACE, budget=100, **kw).study_settings()
        assert stored["schema"] == 2 and stored[row.name] == value, kw


@pytest.mark.parametrize(("row", "kw", "match"),
                         [(r, kw, m) for r in ROWS for kw, m in r.bad],
                         ids=[f"{r.name}-{i}" for r in ROWS for i in range(len(r.bad))])
def test_bad_values_are_refused_with_the_fix(row, kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        erahbo.Optimizer(SPACE, **kw)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_the_cli_flag_sets_the_option(row, cli_options):
    if row.name in WITH:  # refused alone under ERAHBO's defaults, with the fix named
        res, opts = cli_options(*row.flag)
        assert res.exit_code != 0 and opts is None
        fix = next(iter(WITH[row.name]))
        assert fix in res.output.replace("\n", " ")
    extra = tuple(a for k, v in WITH.get(row.name, {}).items()
                  for a in ("--" + k.replace("_", "-"), str(v)))
    res, opts = cli_options(*row.flag, *extra)
    assert res.exit_code == 0, res.output
    assert opts[row.name] == row.given
    # a flag wins over the preset (k_init 2: the paper's 20 is above max_seeds 6); an option
    # the paper's preset gives nothing to act on is refused with the fix, and wins with it
    paper = ("--preset", "paper", "--k-init", "2")
    needs = {"random_top": ("--random-interleave", "50"), "pool_share": ("--max-seeds", "20")}
    if row.name in needs:
        res, opts = cli_options(*row.flag, *paper)
        assert res.exit_code != 0 and "give " + needs[row.name][0][2:].replace("-", "_") in (
            res.output.replace("\n", " "))
    res, opts = cli_options(*row.flag, *paper, *needs.get(row.name, ()))
    assert opts[row.name] == row.given
    args, message = row.bad_flag
    bad, opts = cli_options(*args)
    assert bad.exit_code != 0 and opts is None
    assert message in bad.output


def test_without_flags_the_cli_runs_the_presets_values(cli_options):
    res, opts = cli_options()
    assert res.exit_code == 0, res.output
    assert {r.name: opts[r.name] for r in ROWS} == {r.name: r.erahbo for r in ROWS}
    res, opts = cli_options("--preset", "paper")
    assert {r.name: opts[r.name] for r in ROWS} == {r.name: r.paper for r in ROWS}
