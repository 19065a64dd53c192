"""Journals written before the strategy redesign (erahbo at 0b211cc) still resume.

The fixtures in ``tests/data/journals_main`` are interrupted studies written by that commit
(``make_fixtures.py`` there says how). Rules checked:

* the settings today's code computes for the same study (schema 2: every setting explicit)
  say the same as the stored ones (schema 1: settings at their defaults left out), for every
  method and preset, but for the defaults changed since (``CHANGED_SINCE``): the journal
  keeps its value of then, the same call is refused naming them, and the same call with them
  opens the journal (a resumed study is the same study, never one that silently decides
  differently);
* a resumed journal continues to the same history as an uninterrupted study of today's code.
  Checked on the random-search fixture, whose decisions involve no floating-point model (a
  journal of a model-based study replays the decisions of the machine that wrote it).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import erahbo
from erahbo.optimizer.options import SETTINGS_SCHEMA, normalize_settings
from erahbo.runtime.journal import Journal, SettingsMismatchError

FIXTURES = Path(__file__).resolve().parent / "data" / "journals_main"
sys.path.insert(0, str(FIXTURES))
from make_fixtures import ARGS, table, table_objective  # noqa: E402

sys.path.pop(0)


def _stored(path: Path) -> dict:
    with Journal.open(path) as j:
        return dict(j.settings)


# Defaults changed since 0b211cc (the session that changed them): a study started today with
# the journal's call differs from it in these settings only, and with them given it is the
# journal's study again; the journal itself keeps the value of its time (the Param's absent).
CHANGED_SINCE = {
    # var_noise_prior: -1 for ERAHBO's defaults in session 18, the journals' -4 again since 19
    "k_min": 2,  # session 19: ERAHBO's new configurations start with one seed
    "recommend_min_seeds": 1,  # session 20: the recommendation is a replicated configuration
    "replicate_within": 0.0,  # session 20: a proposal within the resolution replicates
    "var_noise": "fitted",  # session 24: the variance GP models log sample variances
    "refit_evidence": 0.0,  # session 25: a refit keeps the hyperparameters the data favour
    "refit_growth": 0.0,  # session 26: ERAHBO refits them at each doubling (0: never)
}


@pytest.mark.parametrize("name", sorted(ARGS))
def test_settings_of_today_match_the_journal_of_main(name, tmp_path):
    kw, _ = ARGS[name]
    path = tmp_path / f"{name}.db"
    shutil.copy(FIXTURES / f"{name}.db", path)
    today = erahbo.Optimizer(table(), failures="penalize", **kw).study_settings()
    stored = _stored(path)
    assert "schema" not in stored and today["schema"] == SETTINGS_SCHEMA  # schema 1 -> 2
    old, new = normalize_settings(stored), normalize_settings(today)
    changed = {k for k in set(old) | set(new) if old.get(k) != new.get(k)}
    assert changed <= set(CHANGED_SINCE), sorted(changed)
    assert all(old[k] == CHANGED_SINCE[k] for k in CHANGED_SINCE)  # the journal's own value
    pinned = erahbo.Optimizer(table(), failures="penalize", **kw, **CHANGED_SINCE)
    assert normalize_settings(pinned.study_settings()) == old
    if changed:  # the journal's call alone is refused, naming the setting and its two values
        with pytest.raises(SettingsMismatchError) as info:
            erahbo.Optimizer(table(), journal=path, **kw)
        lines = [ln.strip() for ln in str(info.value).splitlines()[1:-1]]
        assert lines == [f"{k}: {old[k]!r} in the journal, {new[k]!r} now" for k in sorted(changed)]
    with erahbo.Optimizer(table(), journal=path, **kw, **CHANGED_SINCE) as opt:  # resumed
        assert opt.journal.settings == stored  # the journal keeps its own settings
    assert json.loads((FIXTURES / "ARGS.json").read_text())["commit"] == "0b211cc"


def _run(path: Path, kw: dict) -> erahbo.Result:
    with erahbo.Optimizer(table(), journal=path, **kw) as opt:
        while (t := opt.ask()) is not None:
            opt.tell(t, [table_objective(t.config, s) for s in t.seeds])
        return opt.result()


def test_a_journal_of_main_resumes_to_the_uninterrupted_history(tmp_path):
    kw, stop = ARGS["random"]
    old = tmp_path / "old.db"
    shutil.copy(FIXTURES / "random.db", old)
    with Journal.open(old) as j:
        assert stop <= j.n_counted() < kw["budget"]  # interrupted half-way
    resumed = _run(old, kw).history.drop(columns=["wall_time", "worker"])
    fresh = _run(tmp_path / "new.db", kw).history.drop(columns=["wall_time", "worker"])
    assert kw["budget"] - kw["k"] < len(resumed) <= kw["budget"]  # a round needs k runs
    assert resumed.equals(fresh)
