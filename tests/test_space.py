"""Tests of erahbo.space.SearchSpace: specs, encoding, projection, Sobol, JSON, tables."""

from __future__ import annotations

import json
import math

import ConfigSpace as CS
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from erahbo.space import SearchSpace
from erahbo.space.kinds import IMPUTE_NUMERIC

MIXED = {
    "lr": ("log", 1e-5, 1e-1),
    "gamma": ("float", 0.9, 0.9999),
    "batch": ("int", 16, 256),
    "buffer": ("logint", 1024, 100000),
    "act": ("cat", ["tanh", "relu", "elu"]),
    "norm": ("cat", [True, False]),
    "size": ("ord", [64, 128, 256]),
    "arch": ("const", "mlp"),
}


def dqn_configspace() -> CS.ConfigurationSpace:
    """A DQN-like space as in ARLBench: tau, target_update_interval need a target network."""
    cs = CS.ConfigurationSpace(seed=0)
    cs.add(
        CS.UniformFloatHyperparameter("learning_rate", 1e-6, 0.1, log=True),
        CS.UniformIntegerHyperparameter("train_freq", 1, 128),
        CS.CategoricalHyperparameter("buffer_batch_size", [64, 128, 256]),
        CS.CategoricalHyperparameter("use_target_network", [True, False]),
        CS.UniformFloatHyperparameter("tau", 0.01, 1.0),
        CS.UniformIntegerHyperparameter("target_update_interval", 1, 1000),
    )
    cs.add(
        CS.EqualsCondition(cs["tau"], cs["use_target_network"], True),
        CS.EqualsCondition(cs["target_update_interval"], cs["use_target_network"], True),
    )
    return cs


def assert_valid(space: SearchSpace, U: np.ndarray) -> None:
    """Every row of U is a valid encoding: a fixed point of project, decodes and re-encodes."""
    assert U.shape[1] == space.dim
    assert np.all((U >= 0) & (U <= 1))
    np.testing.assert_array_equal(space.project(U), U)
    for u in U:
        np.testing.assert_allclose(space.encode(space.decode(u)), u, atol=1e-9)


# ---------------------------------------------------------------------- dict specs
def test_dict_spec_layout() -> None:
    s = SearchSpace(MIXED)
    assert s.names == list(MIXED)
    # lr, gamma, batch, buffer: 1 each; act 3; norm 2; size 1; arch 0
    assert s.dim == 4 + 3 + 2 + 1
    np.testing.assert_array_equal(
        s.continuous_mask, [True, True, False, False] + [False] * 6
    )
    assert not s.is_finite and s.n_candidates is None


def test_encode_decode_types_and_values() -> None:
    s = SearchSpace(MIXED)
    c = {"lr": 1e-3, "gamma": 0.99, "batch": 64, "buffer": 5000, "act": "relu",
         "norm": False, "size": 128, "arch": "mlp"}
    u = s.encode(c)
    assert u.shape == (s.dim,)
    assert u[0] == pytest.approx(0.5)  # log-uniform midpoint of [1e-5, 1e-1]
    assert u[2] == pytest.approx((64 - 16) / 240)
    back = s.decode(u)
    assert type(back["batch"]) is int and back["batch"] == 64
    assert type(back["buffer"]) is int and back["buffer"] == 5000
    assert back["norm"] is False and back["act"] == "relu" and back["size"] == 128
    assert back["arch"] == "mlp"
    assert back["lr"] == pytest.approx(1e-3, rel=1e-12)


@st.composite
def mixed_configs(draw: st.DrawFn) -> dict:
    return {
        "lr": draw(st.floats(1e-5, 1e-1)),
        "gamma": draw(st.floats(0.9, 0.9999)),
        "batch": draw(st.integers(16, 256)),
        "buffer": draw(st.integers(1024, 100000)),
        "act": draw(st.sampled_from(["tanh", "relu", "elu"])),
        "norm": draw(st.booleans()),
        "size": draw(st.sampled_from([64, 128, 256])),
        "arch": "mlp",
    }


@settings(max_examples=60, deadline=None)
@given(mixed_configs())
def test_encode_decode_round_trip(config: dict) -> None:
    s = SearchSpace(MIXED)
    back = s.decode(s.encode(config))
    assert set(back) == set(config)
    for k, v in config.items():
        if isinstance(v, float):
            assert back[k] == pytest.approx(v, rel=1e-9, abs=1e-12)
        else:
            assert back[k] == v and type(back[k]) is type(v)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (5, 10), elements=st.floats(-0.5, 1.5)))
def test_project_is_idempotent_and_valid(U: np.ndarray) -> None:
    s = SearchSpace(MIXED)
    P = s.project(U)
    np.testing.assert_array_equal(s.project(P), P)
    assert_valid(s, P)
    onehot = P[:, 4:7]
    np.testing.assert_array_equal(onehot.sum(1), 1.0)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 40))
def test_sobol_points_valid_and_deterministic(seed: int, n: int) -> None:
    s = SearchSpace(MIXED)
    U = s.sobol_unit(n, seed)
    assert U.shape == (n, s.dim)
    assert_valid(s, U)
    np.testing.assert_array_equal(U, s.sobol_unit(n, seed))


def test_sobol_seeds_differ_and_cover() -> None:
    s = SearchSpace({"a": ("float", 0, 1), "b": ("int", 1, 4), "c": ("cat", ["x", "y"])})
    U0, U1 = s.sobol_unit(64, 0), s.sobol_unit(64, 1)
    assert not np.array_equal(U0, U1)
    vals = [s.decode(u) for u in U0]
    assert {v["b"] for v in vals} == {1, 2, 3, 4}  # each int hit equally often
    assert sum(v["b"] == 1 for v in vals) == 16
    assert sum(v["c"] == "x" for v in vals) == 32


def test_sample_unit_valid_and_seeded() -> None:
    s = SearchSpace(MIXED)
    U = s.sample_unit(50, np.random.default_rng(3))
    assert_valid(s, U)
    np.testing.assert_array_equal(U, s.sample_unit(50, np.random.default_rng(3)))


def test_json_dict_spec_with_default_and_condition() -> None:
    s = SearchSpace({
        "opt": {"type": "cat", "choices": ["sgd", "adam"], "default": "adam"},
        "momentum": {"type": "float", "lower": 0.0, "upper": 0.99,
                     "condition": {"parent": "opt", "op": "in", "values": ["sgd"]}},
        "depth": {"type": "int", "lower": 1, "upper": 8},
        "width": {"type": "logint", "lower": 8, "upper": 512,
                  "condition": {"parent": "depth", "op": ">", "values": [2]}},
    })
    assert s.decode(s.encode({"opt": "adam", "depth": 1})) == {"opt": "adam", "depth": 1}
    u = s.encode({"opt": "sgd", "momentum": 0.5, "depth": 4, "width": 64})
    assert s.decode(u) == pytest.approx({"opt": "sgd", "momentum": 0.5, "depth": 4, "width": 64})
    assert s.to_json()["hyperparameters"][0]["default"] == "adam"


# ---------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"a": ("float", 1.0, 1.0)}, r"'a'.*lower bound 1.0 must be smaller"),
        ({"a": ("float", 2.0, 1.0)}, r"'a'.*swap"),
        ({"a": ("log", 0.0, 1.0)}, r"'a'.*log-scaled range needs lower > 0"),
        ({"a": ("logint", -1, 10)}, r"'a'.*lower > 0"),
        ({"a": ("cat", [])}, r"'a'.*empty choices"),
        ({"a": ("cat", ["x", "x"])}, r"'a'.*duplicate choices"),
        ({"a": ("uniform", 0, 1)}, r"'a'.*unknown type 'uniform'"),
        ({"a": ("float", 0, math.inf)}, r"'a'.*not finite"),
        ({"a": ("float", 0, float("nan"))}, r"'a'.*not finite"),
        ({"a": ("int", 0.5, 3)}, r"'a'.*whole numbers"),
        ({"a": ("float", 0, 1, 2)}, r"'a'.*two bounds"),
        ({}, r"spec is empty"),
        ({"a": {"type": "float", "lower": 0, "upper": 1, "default": 3}}, r"'a'.*default"),
        ({"a": {"type": "float", "lower": 0, "upper": 1, "scale": 3}}, r"'a'.*unknown keys"),
        ({"a": {"type": "float", "lower": 0, "upper": 1,
                "condition": {"parent": "b", "values": [1]}}}, r"parent 'b' is not in"),
        ({"b": ("cat", [1, 2]), "a": {"type": "float", "lower": 0, "upper": 1,
                                       "condition": {"parent": "b", "values": [3]}}},
         r"value 3 is not a choice of 'b'"),
    ],
)
def test_bad_specs_raise_one_clear_error(spec: dict, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        SearchSpace(spec)


def test_other_bad_inputs() -> None:
    with pytest.raises(TypeError, match="cannot read a spec"):
        SearchSpace(42)
    with pytest.raises(ValueError, match="duplicate hyperparameter names"):
        SearchSpace({"hyperparameters": [{"name": "a", "type": "float", "lower": 0, "upper": 1},
                                         {"name": "a", "type": "int", "lower": 0, "upper": 1}]})
    with pytest.raises(ValueError, match="cycle"):
        SearchSpace({
            "a": {"type": "cat", "choices": [0, 1], "condition": {"parent": "b", "values": [1]}},
            "b": {"type": "cat", "choices": [0, 1], "condition": {"parent": "a", "values": [1]}},
        })
    s = SearchSpace(MIXED)
    with pytest.raises(ValueError, match="unknown hyperparameters"):
        s.encode({"zzz": 1})
    with pytest.raises(ValueError, match="lacks active hyperparameter 'lr'"):
        s.encode({k: v for k, v in s.decode(s.sobol_unit(1, 0)[0]).items() if k != "lr"})
    with pytest.raises(ValueError, match=r"gamma.*outside"):
        s.encode({**s.decode(s.sobol_unit(1, 0)[0]), "gamma": 2.0})
    with pytest.raises(ValueError, match="shape"):
        s.project(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="name_order"):
        SearchSpace({"a": ("float", 0, 1)}, name_order=["b"])


def test_json_aliases_and_top_level_conditions() -> None:
    s = SearchSpace({
        "hyperparameters": [
            {"name": "use_tn", "type": "cat", "choices": [True, False]},
            {"name": "tau", "type": "float", "low": 0.01, "high": 1.0, "default": 0.5},
        ],
        "conditions": [{"child": "tau", "parent": "use_tn", "values": [True]}],
    })
    assert s.to_json()["hyperparameters"][1] == {
        "name": "tau", "type": "float", "lower": 0.01, "upper": 1.0, "default": 0.5,
        "condition": [{"parent": "use_tn", "op": "in", "values": [True]}],
    }
    assert s.decode(s.encode({"use_tn": False})) == {"use_tn": False}
    with pytest.raises(ValueError, match="needs a 'child'"):
        SearchSpace({"hyperparameters": [{"name": "a", "type": "cat", "choices": [1, 2]}],
                     "conditions": [{"parent": "a", "values": [1]}]})


def test_name_order() -> None:
    s = SearchSpace({"a": ("float", 0, 1), "b": ("cat", ["x", "y"])}, name_order=["b", "a"])
    assert s.names == ["b", "a"] and not s.continuous_mask[0] and s.continuous_mask[2]


# ---------------------------------------------------------------------- ConfigSpace
def test_configspace_conditional_dqn_space() -> None:
    s = SearchSpace(dqn_configspace())
    assert set(s.names) == {"learning_rate", "train_freq", "buffer_batch_size",
                            "use_target_network", "tau", "target_update_interval"}
    hp = {h["name"]: h for h in s.to_json()["hyperparameters"]}
    assert hp["learning_rate"]["type"] == "log" and hp["train_freq"]["type"] == "int"
    assert hp["tau"]["condition"] == [
        {"parent": "use_target_network", "op": "in", "values": [True]}
    ]
    off = {"learning_rate": 1e-3, "train_freq": 4, "buffer_batch_size": 128,
           "use_target_network": False}
    u = s.encode(off)
    cols = {n: s.columns(n).start for n in s.names}
    assert s.columns("buffer_batch_size").stop - s.columns("buffer_batch_size").start == 3
    assert u[cols["tau"]] == IMPUTE_NUMERIC and u[cols["target_update_interval"]] == 0.5
    assert s.decode(u) == pytest.approx(off)
    # inactive values handed in are ignored
    np.testing.assert_array_equal(s.encode({**off, "tau": 0.3}), u)
    on = {**off, "use_target_network": True, "tau": 0.3, "target_update_interval": 100}
    assert s.decode(s.encode(on)) == pytest.approx(on)
    with pytest.raises(ValueError, match="lacks active hyperparameter 'tau'"):
        s.encode({**off, "use_target_network": True, "target_update_interval": 100})
    # Sobol points: both branches occur; inactive ones imputed and left out
    U = s.sobol_unit(32, 0)
    assert_valid(s, U)
    dec = [s.decode(v) for v in U]
    assert {d["use_target_network"] for d in dec} == {True, False}
    for d, v in zip(dec, U, strict=True):
        assert ("tau" in d) == d["use_target_network"]
        if not d["use_target_network"]:
            assert v[cols["tau"]] == 0.5
    # projection imputes inactive children even when they were moved
    V = U.copy()
    V[:, cols["tau"]] = 0.9
    P = s.project(V)
    for d, p in zip(dec, P, strict=True):
        assert p[cols["tau"]] == (0.9 if d["use_target_network"] else 0.5)


def test_configspace_other_types_and_conditions() -> None:
    cs = CS.ConfigurationSpace(seed=0)
    cs.add(
        CS.Constant("algo", "ppo"),
        CS.OrdinalHyperparameter("n_layers", [1, 2, 3]),
        CS.UniformIntegerHyperparameter("batch", 8, 1024, log=True),
        CS.CategoricalHyperparameter("opt", ["sgd", "adam", "rmsprop"]),
        CS.UniformFloatHyperparameter("momentum", 0.0, 0.99),
        CS.UniformFloatHyperparameter("beta", 0.0, 0.99),
    )
    cs.add(
        CS.InCondition(cs["momentum"], cs["opt"], ["sgd", "rmsprop"]),
        CS.AndConjunction(
            CS.NotEqualsCondition(cs["beta"], cs["opt"], "sgd"),
            CS.GreaterThanCondition(cs["beta"], cs["batch"], 100),
        ),
    )
    s = SearchSpace(cs)
    types = {h["name"]: h["type"] for h in s.to_json()["hyperparameters"]}
    assert types == {"algo": "const", "n_layers": "ord", "batch": "logint", "opt": "cat",
                     "momentum": "float", "beta": "float"}
    for u in s.sobol_unit(64, 3):
        d = s.decode(u)
        assert d["algo"] == "ppo"
        assert ("momentum" in d) == (d["opt"] in ("sgd", "rmsprop"))
        assert ("beta" in d) == (d["opt"] != "sgd" and d["batch"] > 100)
        # agrees with ConfigSpace's own notion of a valid configuration
        CS.Configuration(cs, values=d).check_valid_configuration()


def test_configspace_forbidden_rejected() -> None:
    cs = CS.ConfigurationSpace({"a": ["x", "y"], "b": ["u", "v"]})
    cs.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(cs["a"], "y"),
                                      CS.ForbiddenEqualsClause(cs["b"], "v")))
    with pytest.raises(ValueError, match="forbidden"):
        SearchSpace(cs)


# ---------------------------------------------------------------------- JSON
@pytest.mark.parametrize("spec", [MIXED, "dqn"])
def test_json_round_trip(spec: object) -> None:
    s = SearchSpace(dqn_configspace() if spec == "dqn" else spec)
    d = json.loads(json.dumps(s.to_json()))
    s2 = SearchSpace.from_json(d)
    assert s2.to_json() == s.to_json() and s2.names == s.names and s2.dim == s.dim
    U = s.sobol_unit(16, 0)
    np.testing.assert_array_equal(s2.sobol_unit(16, 0), U)
    assert [s2.decode(u) for u in U] == [s.decode(u) for u in U]
    assert SearchSpace(s).to_json() == s.to_json()


def test_repr_is_readable() -> None:
    r = repr(SearchSpace(dqn_configspace()))
    assert r.startswith("SearchSpace(6 hyperparameters, dim=")
    assert "tau: float[0.01, 1] if use_target_network in [True]" in r
    assert "learning_rate: log[1e-06, 0.1]" in r


# ---------------------------------------------------------------------- tables
def make_table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 40
    use_tn = rng.random(n) < 0.5
    return pd.DataFrame({
        "learning_rate": 10 ** rng.uniform(-6, -1, n),
        "gamma": rng.uniform(0.9, 0.99, n),
        "train_freq": rng.integers(1, 129, n),
        "activation": rng.choice(["tanh", "relu"], n),
        "use_target_network": use_tn,
        "tau": np.where(use_tn, rng.uniform(0.01, 1, n), np.nan),
    })


def test_table_inference_and_rows() -> None:
    df = make_table()
    with pytest.raises(ValueError, match="column 'tau' is empty"):  # issue 13: no silent holes
        SearchSpace(df)
    s = SearchSpace(df, allow_missing=True)  # empty cells: tau inactive there (datasets)
    assert s.is_finite and s.n_candidates == 40 and s.names == list(df.columns)
    types = {h["name"]: h["type"] for h in s.to_json()["hyperparameters"]}
    assert types == {"learning_rate": "log", "gamma": "float", "train_freq": "int",
                     "activation": "cat", "use_target_network": "cat", "tau": "float"}
    U = s.candidates_unit()
    assert U.shape == (40, s.dim) and np.all((U >= 0) & (U <= 1))
    with pytest.raises(ValueError, match="read-only"):
        U[0, 0] = 0.3
    for i in range(40):
        c = s.candidate_config(i)
        assert type(c["train_freq"]) is int and type(c["gamma"]) is float
        assert type(c["use_target_network"]) is bool and type(c["activation"]) is str
        assert ("tau" in c) == c["use_target_network"]
        assert c["learning_rate"] == df["learning_rate"].iloc[i]
        assert s.decode(U[i]) == c
        np.testing.assert_allclose(s.encode(c), U[i])
    # projection snaps to the nearest row
    P = s.project(U + 0.01)
    np.testing.assert_array_equal(P, U)


def test_table_sobol_indices() -> None:
    s = SearchSpace(make_table(), allow_missing=True)
    idx = s.sobol_indices(10, seed=4)
    assert idx.shape == (10,) and len(set(idx.tolist())) == 10
    np.testing.assert_array_equal(idx, s.sobol_indices(10, seed=4))
    assert not np.array_equal(idx, s.sobol_indices(10, seed=5))
    assert sorted(s.sobol_indices(40, seed=1).tolist()) == list(range(40))
    np.testing.assert_array_equal(s.sobol_unit(10, 4), s.candidates_unit()[idx])
    with pytest.raises(ValueError, match="n=41"):
        s.sobol_indices(41, seed=0)
    U = s.sample_unit(5, np.random.default_rng(0))
    assert len({tuple(u) for u in U}) == 5


def test_table_with_spec_uses_true_bounds() -> None:
    df = pd.DataFrame({"lr": [1e-4, 1e-3], "act": ["relu", "tanh"], "extra": [1, 2]})
    spec = {"lr": ("log", 1e-6, 1e-1), "act": ("cat", ["tanh", "relu", "elu"])}
    s = SearchSpace(df, spec)
    assert s.names == ["lr", "act"] and s.dim == 4
    np.testing.assert_allclose(s.candidates_unit()[:, 0], [0.4, 0.6])
    assert s.candidate_config(0) == {"lr": 1e-4, "act": "relu"}
    s2 = SearchSpace.from_table(df, SearchSpace(spec).to_json())
    np.testing.assert_array_equal(s2.candidates_unit(), s.candidates_unit())
    with pytest.raises(ValueError, match=r"lr=.*outside"):
        SearchSpace(df, {"lr": ("log", 1e-3, 1e-1)})
    with pytest.raises(ValueError, match="not one of the choices"):
        SearchSpace(df, {"act": ("cat", ["tanh"])})
    with pytest.raises(ValueError, match="lacks columns"):
        SearchSpace(df, {"zz": ("float", 0, 1)})


def test_table_edge_cases() -> None:
    with pytest.raises(ValueError, match="no rows"):
        SearchSpace(pd.DataFrame({"a": pd.Series([], dtype=float)}))
    with pytest.raises(ValueError, match="column 'a' has no values"):
        SearchSpace(pd.DataFrame({"a": [np.nan, np.nan], "b": [1, 2]}))
    # int column with NaN (pandas upcasts to float) stays int; constants take no column
    df = pd.DataFrame({"n": [1.0, np.nan, 7.0], "c": ["x", "x", "x"], "v": [0.1, 0.5, 0.2]})
    s = SearchSpace(df, allow_missing=True)
    assert [h["type"] for h in s.to_json()["hyperparameters"]] == ["int", "const", "float"]
    assert s.dim == 2
    assert s.candidate_config(1) == {"c": "x", "v": 0.5}
    assert s.candidate_config(2) == {"n": 7, "c": "x", "v": 0.2}
    assert s.candidates_unit()[1, 0] == IMPUTE_NUMERIC
