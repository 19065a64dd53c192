"""`erahbo demo` (the README's main job), at a small size."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.optimizer.options import ERAHBO_DEFAULTS


@pytest.fixture
def part1_results(monkeypatch):
    """The results of the demo's part 1 (``optimize`` on the Figure-1 task), in order."""
    import erahbo.study.run as loop

    optimize, results = loop.optimize, []

    def recorded(*a, **kw):
        results.append(optimize(*a, **kw))
        return results[-1]

    monkeypatch.setattr(loop, "optimize", recorded)
    return results


@pytest.fixture
def smaller_demo(monkeypatch, part1_results):
    """The demo's two parts made smaller still: part 1 (ERAHBO on the Figure-1 task, 300
    runs) at 40 runs, part 2 (the replay study) on 2 of the bundled tasks."""
    import erahbo.datasets.loaders as loaders
    import erahbo.study.run as loop

    optimize, tasks = loop.optimize, loaders.bundled_tasks()
    monkeypatch.setattr(loop, "optimize", lambda *a, **kw: optimize(*a, **{**kw, "budget": 40}))
    monkeypatch.setattr(loaders, "bundled_tasks", lambda: tasks[:2])
    return part1_results


def _words(text: str) -> str:
    return " ".join(text.split())  # the console wraps lines


def _check_demo(out, budget: int, results: list):
    """One run of ``erahbo demo`` into ``out`` with ``--budget budget``; what it prints and
    writes. Its sentences on the seeds are those of the run it made (``results[-1]``)."""
    small = ["demo", "--repetitions", "1", "--workers", "1", "--out", str(out)]
    res = CliRunner().invoke(app, [*small, "--budget", str(budget)])
    assert res.exit_code == 0, res.output
    assert "recommended configuration" in res.output
    run = results[-1]
    bo = run.rounds[run.rounds["phase"] != "init"]
    k_min, k_max = ERAHBO_DEFAULTS["k_min"], ERAHBO_DEFAULTS["k_max"]
    assert int(run.settings["k_min"]) == k_min  # the seeds it names are the study's own
    said = _words(res.output)
    n = int((bo["k"] == k_min).sum())
    assert (f"In this run {n} of {len(bo)} BO rounds used {k_min} seed{'s' * (k_min > 1)} "
            f"(k_min), the most seeds one round used is {int(bo['k'].max())} "
            f"(k_max = {k_max}); the most seeds any configuration got in all is "
            f"{int(run.configs['k'].max())}") in said
    if bo["k"].max() == k_min:  # nothing said that this run did not do
        assert "the promising ones get more" not in said
    assert (out / "figure1.png").is_file() and (out / "figure1_rounds.png").is_file()
    report = out / "benchmark" / "report" / "report.md"
    assert report.is_file() and f"budget: {budget}" in report.read_text()
    return res


def test_demo_writes_figure_and_report_and_replaces_an_older_demo(tmp_path, smaller_demo):
    out = tmp_path / "demo"
    _check_demo(out, 12, smaller_demo)
    # a demo with other settings replaces the earlier demo study instead of refusing
    res = _check_demo(out, 16, smaller_demo)
    assert "replacing it" in res.output


@pytest.mark.slow  # the same at the demo's own sizes (part 1: 300 runs; part 2: every task)
def test_the_whole_demo_at_a_small_budget(tmp_path, part1_results):
    _check_demo(tmp_path / "demo", 12, part1_results)


def _rounds_result(ks, phases=None, reasons=None, settings=None):
    """An erahbo.Result whose rounds used ``ks`` seeds (first two: the initial design); one
    configuration per round."""
    import pandas as pd

    from erahbo.optimizer.records import Result

    n = len(ks)
    phases = phases or ["init", "init", *["bo"] * (n - 2)]
    reasons = reasons or ["initial", "initial", *["dominated"] * (n - 2)]
    rounds = pd.DataFrame({"phase": phases, "config_id": range(n), "k": ks,
                           "stop_reason": reasons})
    configs = pd.DataFrame({"config_id": range(n), "k": ks})
    return Result(incumbent=None, incumbent_id=None, incumbent_mv=float("nan"),
                  history=pd.DataFrame(), rounds=rounds, configs=configs, method="erahbo",
                  n_evals=sum(ks), settings={"alpha": 1.0, "k_min": 1, "k_max": 20,
                                             "random_interleave": 50, "random_top": 0.1,
                                             **(settings or {})})


def test_seed_story_says_what_the_run_did():
    """Rule: the demo's sentences on the seeds are counted from the run they describe: how many
    BO rounds used k_min seeds, the most a round and a configuration got, why the rounds ended,
    the random-design and challenger rounds; a run whose BO rounds all used one seed is not told
    that the promising ones got more."""
    from erahbo.analysis.run_summary import seed_story, seeds_per_round

    flat = _rounds_result([2, 2, 1, 1, 1, 1, 1],
                          reasons=["initial", "initial", "random", "random", "dominated",
                                   "dominated", "dominated"])
    story = seed_story(flat)
    assert ("In this run 5 of 5 BO rounds used 1 seed (k_min), the most seeds one round used "
            "is 1 (k_max = 20); the most seeds any configuration got in all is 2 (config 0)."
            ) in story
    assert "BO rounds ended: 3 dominated" in story and ", 2 random" in story
    assert ("2 rounds (while fewer than 50 runs were spent) tried a random configuration with "
            "1 seed, drawn from the best 10 % of the candidates by the acquisition") in story
    assert "get more" not in story and "challenger" not in story
    assert seeds_per_round(flat) == ("9 training runs in 7 rounds; seeds per BO round: "
                                     "1 seed x 5")
    grown = _rounds_result([2, 2, 1, 7, 1, 20, 3],
                           phases=["init", "init", "bo", "bo", "bo", "bo", "challenger"],
                           reasons=["initial", "initial", "dominated", "dominated",
                                    "dominated", "k_max", "dominated"])
    story = seed_story(grown)
    assert "In this run 2 of 5 BO rounds used 1 seed (k_min), the most seeds one round used " \
           "is 20 (k_max = 20); the most seeds any configuration got in all is 20 (config 5)" \
           in story
    assert "1 k_max (it reached k_max)" in story
    assert "1 round re-ran a configuration whose own runs beat" in story
    capped = _rounds_result([2, 2, 1, 7, 1, 8, 3],
                            phases=["init", "init", "bo", "bo", "bo", "bo", "challenger"],
                            reasons=["initial", "initial", "dominated", "dominated",
                                     "dominated", "k_max", "dominated"],
                            settings={"k_max_means": 8})  # a round's cap while means differ
    story = seed_story(capped)
    assert "up to k_max = 20 (8 while the configurations differ mostly by their means)" in story
    assert "1 k_max (it reached k_max, or k_max_means = 8 while the means differ)" in story


def test_demo_ctrl_c_says_how_to_continue(tmp_path, monkeypatch, smaller_demo):
    import erahbo.experiments as experiments
    import erahbo.study.run as loop

    small = ["demo", "--repetitions", "1", "--workers", "1", "--budget", "12",
             "--out", str(tmp_path / "demo")]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:  # Ctrl-C in part 1 (the Figure-1 study)
        m.setattr(loop, "optimize", interrupted)  # erahbo.optimize is defined there
        res = CliRunner().invoke(app, small)
    assert res.exit_code == 130 and "run the same command again" in res.output
    monkeypatch.setattr(experiments, "run_study", interrupted)  # in part 2 (the replays)
    res = CliRunner().invoke(app, small)
    assert res.exit_code == 130
    assert "run the same command again to continue" in res.output


def test_seed_story_names_the_study_s_risk_measure():
    """The story of a CVaR study's rounds says UCB_CVaR_0.1 where an MV study says UCB_MV
    (a result built by hand: one initial round, two BO rounds ended dominated)."""
    from types import SimpleNamespace

    import pandas as pd

    from erahbo.analysis.run_summary import seed_story
    from erahbo.risk import CVaR, MeanVariance

    rounds = pd.DataFrame({"phase": ["init", "bo", "bo"], "k": [2, 1, 3],
                           "stop_reason": [None, "dominated", "dominated"]})
    configs = pd.DataFrame({"config_id": [0, 1, 2], "k": [2, 1, 3]})

    def story(measure):
        return seed_story(SimpleNamespace(rounds=rounds, configs=configs, method="erahbo",
                                          settings={"k_min": 1, "k_max": 20}, measure=measure))

    assert "2 dominated (its UCB_CVaR_0.1 fell below B_t" in story(CVaR(q=0.1))
    assert "2 dominated (its UCB_MV fell below B_t" in story(MeanVariance(1.0))
