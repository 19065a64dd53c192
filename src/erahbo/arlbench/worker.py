"""ARLBench training worker: a standalone script run by the ARLBench virtual environment.

This file is executed as a script (``<venv>/bin/python worker.py``) inside the dedicated
ARLBench venv (arlbench 0.1.3, jax 0.4.26, numpy 1.x).  It must therefore import nothing
from :mod:`erahbo` and nothing outside the standard library and that venv.

Protocol: line-delimited JSON on stdin/stdout (one object per line).

Requests
--------
``{"id": ..., "op": "ping"}``
    -> ``{"id", "status": "ok", "op": "ping", "versions": {...}, "pid": int}``
``{"id": ..., "op": "describe", "algorithm": "dqn"}``
    -> ``{"id", "status": "ok", "defaults": {...}, "space_names": [...]}``
``{"id": ..., "op": "train", "algorithm": "dqn"|"ppo"|"sac", "env_framework": "gymnax",
  "environment": "CartPole-v1", "hp_config": {...}, "seeds": [1, 2, ...],
  "n_total_timesteps": 100000, "n_envs": 8, "n_eval_episodes": 128,
  "vectorize_seeds": false}``
    -> one line per seed, in the order given:
    ``{"id", "seed", "status": "ok"|"failed", "return": float|null, "runtime_s": float,
    "error": str|null, "first": bool}``
    where ``first`` marks the run that paid for compilation.  A request-level problem
    (unknown algorithm, bad field) yields one ``failed`` line per seed with the message.
    With ``"n_eval_steps": C`` (C > 1, a learning curve) each line also has ``"curve"`` (the
    mean return at each of the C checkpoints, null where non-finite), ``"curve_s"`` (the
    run's wall time in seconds at each checkpoint, from the start of its ``init``, evaluations
    included, compilation excluded; rounded to 0.1 ms), ``"curve_cpu_s"`` (the same in CPU
    seconds of the worker process, all its threads: the cost, unlike the wall time, does not
    grow when other processes share the core), ``"env_steps"`` (environment steps trained by
    each checkpoint) and ``"compile_s"`` / ``"compile_cpu_s"`` (the configuration's compilation,
    wall and CPU seconds, on its first run).
``{"id": ..., "op": "shutdown"}`` -> ``{"id", "status": "ok", "op": "shutdown"}``, then exit.

Semantics (see ``shared/notes/arlbench-env.md``)
------------------------------------------------
* The algorithm object is built once per request (configuration) and its jitted ``train``
  is reused for every seed: JAX compiles once per configuration.
* Each seed starts from a fresh ``init(jax.random.key(seed))`` (no state carried over).
  Seeds must be >= 1 (ARLBench's ``AutoRLEnv`` silently maps seed 0 to its config seed).
* One evaluation at the end of training (``n_eval_steps = 1``) with ``n_eval_episodes``
  deterministic episodes; the return is the mean over those episodes (``reward_mean``).
* ``n_eval_steps = C > 1``: ARLBench's training with C evaluations (``train(..., C, ...)``:
  C segments of ``ceil(budget / n_envs / train_freq (or n_steps) / C)`` update steps, each
  followed by an evaluation). The worker runs the segments one call each (the body of
  ARLBench's ``train_eval_step``, compiled ahead of time once per configuration) to time
  every checkpoint; the returns are bit-identical to one ``train(..., C, ...)`` call
  (checked on DQN and PPO, CartPole and Acrobot). The return of the run is the last one.
* Hyperparameters not given take the algorithm's package default; inactive conditional
  hyperparameters must simply be left out.  Values are coerced to the package's types
  (ints, bools); a value that cannot be coerced fails the run with a message naming it.
* NaN/inf returns and exceptions become ``failed`` runs; the worker keeps serving.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback
from typing import Any

# --- keep stdout clean for the protocol: everything else printed goes to stderr ---------
_PROTO = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

_ALGORITHMS: dict[str, Any] = {}
_VERSIONS: dict[str, str] = {}


def _setup_jax() -> None:
    """Import JAX/ARLBench once, enable the persistent compilation cache."""
    cache = os.environ.get("ERAHBO_JAX_CACHE")
    if not cache:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        cache = os.path.join(base, "erahbo", "jax-cache")
    os.makedirs(cache, exist_ok=True)
    import warnings

    warnings.filterwarnings("ignore")
    import jax

    jax.config.update("jax_compilation_cache_dir", cache)
    try:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    except Exception:  # older/newer option names: the cache still works with defaults
        pass
    from arlbench.core.algorithms import DQN, PPO, SAC

    _ALGORITHMS.update({"dqn": DQN, "ppo": PPO, "sac": SAC})
    from importlib import metadata

    for pkg in ("arlbench", "jax", "jaxlib", "gymnax", "flax", "optax", "numpy", "scipy"):
        try:
            _VERSIONS[pkg] = metadata.version(pkg)
        except Exception:
            _VERSIONS[pkg] = "unknown"
    _VERSIONS["python"] = sys.version.split()[0]


def _send(obj: dict[str, Any]) -> None:
    _PROTO.write(json.dumps(obj) + "\n")
    _PROTO.flush()


def _package_types(algo_cls: Any) -> dict[str, tuple[str, list[Any] | None]]:
    """Map hyperparameter name -> (kind, choices) from the package's own config space."""
    out: dict[str, tuple[str, list[Any] | None]] = {}
    cs = algo_cls.get_hpo_config_space()
    for hp in cs.get_hyperparameters():
        kind = type(hp).__name__.lower()
        if "integer" in kind:
            out[hp.name] = ("int", None)
        elif "float" in kind:
            out[hp.name] = ("float", None)
        elif "categorical" in kind:
            out[hp.name] = ("cat", list(hp.choices))
        else:
            out[hp.name] = ("other", None)
    return out


def _coerce(name: str, value: Any, kind: str, choices: list[Any] | None) -> Any:
    """Coerce one JSON value to the type ARLBench expects; ValueError names the field."""
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            value = low == "true"
        else:
            try:
                value = float(value)
            except ValueError:
                raise ValueError(
                    f"hyperparameter {name!r}: cannot use value {value!r} (expected a number"
                    " or a boolean)"
                ) from None
    if kind == "int" or (kind == "cat" and choices and all(type(c) is int for c in choices)):
        if isinstance(value, bool) or not math.isfinite(float(value)):
            raise ValueError(f"hyperparameter {name!r}: expected an integer, got {value!r}")
        return round(float(value))
    if kind == "float":
        if isinstance(value, bool) or not math.isfinite(float(value)):
            raise ValueError(f"hyperparameter {name!r}: expected a finite float, got {value!r}")
        return float(value)
    if kind == "cat" and choices and all(isinstance(c, bool) for c in choices):
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and float(value) in (0.0, 1.0):
            return bool(value)
        raise ValueError(f"hyperparameter {name!r}: expected true/false, got {value!r}")
    return value


def _build_hp(algo_cls: Any, hp_config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Defaults of the package merged with ``hp_config``; returns (config, unknown names)."""
    if not isinstance(hp_config, dict):
        raise ValueError("field 'hp_config' must be a JSON object of hyperparameters")
    types = _package_types(algo_cls)
    cfg = dict(algo_cls.get_default_hpo_config())
    unknown = []
    for name, value in hp_config.items():
        if value is None:  # inactive conditional hyperparameter stored as null
            continue
        kind, choices = types.get(name, ("other", None))
        if name not in types:
            unknown.append(name)
            if isinstance(value, bool | int | float):
                cfg[name] = value
                continue
        cfg[name] = _coerce(name, value, kind, choices)
    _check_values(cfg)
    return cfg, unknown


def _check_values(cfg: dict[str, Any]) -> None:
    """Reject values no algorithm can train with (clear message instead of a JAX trace)."""
    positive_ints = (
        "buffer_size",
        "buffer_batch_size",
        "train_freq",
        "gradient_steps",
        "minibatch_size",
        "n_steps",
        "update_epochs",
        "target_update_interval",
    )
    for k in positive_ints:
        if k in cfg and int(cfg[k]) < 1:
            raise ValueError(f"hyperparameter {k!r} must be >= 1, got {cfg[k]!r}")
    if "learning_rate" in cfg and not float(cfg["learning_rate"]) > 0:
        lr = cfg["learning_rate"]
        raise ValueError(f"hyperparameter 'learning_rate' must be > 0, got {lr!r}")
    if "learning_starts" in cfg and int(cfg["learning_starts"]) < 0:
        raise ValueError("hyperparameter 'learning_starts' must be >= 0")


class _HP(dict):
    """A plain dict of hyperparameters (ARLBench indexes ``hpo_config[name]``)."""


def _make_algorithm(req: dict[str, Any]) -> tuple[Any, list[str]]:
    from arlbench.core.environments import make_env

    name = str(req.get("algorithm", "")).lower()
    if name not in _ALGORITHMS:
        raise ValueError(f"field 'algorithm': unknown {name!r}; use one of dqn, ppo, sac")
    algo_cls = _ALGORITHMS[name]
    env_name = req.get("environment") or req.get("task")
    if not env_name:
        raise ValueError("field 'environment' (e.g. 'CartPole-v1') is required")
    framework = str(req.get("env_framework", "gymnax"))
    n_envs = int(req.get("n_envs", 8))
    env_kwargs = req.get("env_kwargs") or {}
    cnn = bool(req.get("cnn_policy", False))
    hp, unknown = _build_hp(algo_cls, req.get("hp_config") or {})
    env = make_env(
        framework, env_name, n_envs=n_envs, env_kwargs=env_kwargs, cnn_policy=cnn, seed=0
    )
    eval_env = make_env(
        framework,
        env_name,
        n_envs=n_envs,
        env_kwargs=req.get("eval_env_kwargs") or {},
        cnn_policy=cnn,
        seed=1,
    )
    nas = dict(algo_cls.get_default_nas_config())
    nas.update(req.get("nas_config") or {})
    algo = algo_cls(
        _HP(hp),
        env,
        nas_config=nas,
        eval_env=eval_env,
        deterministic_eval=bool(req.get("deterministic_eval", True)),
        cnn_policy=cnn,
    )
    return algo, unknown


def _train_one(algo: Any, init: Any, seed: int, budget: int, n_eval_episodes: int) -> float:
    import jax
    import numpy as np

    state = init(jax.random.key(seed))
    _, result = algo.train(*state, budget, 1, n_eval_episodes)
    rewards = np.asarray(jax.block_until_ready(result.eval_rewards))  # (1, n_eval_episodes)
    return float(np.mean(rewards[-1]))


def _train_vectorized(algo: Any, seeds: list[int], budget: int, n_eval: int) -> list[float]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    def run(key: Any) -> Any:
        state = algo.init(key)
        _, result = algo.train(*state, budget, 1, n_eval)
        return jnp.mean(result.eval_rewards[-1])

    keys = jnp.stack([jax.random.key_data(jax.random.key(s)) for s in seeds])
    out = jax.vmap(lambda k: run(jax.random.wrap_key_data(k)))(keys)
    return [float(x) for x in np.asarray(jax.block_until_ready(out))]


def _segment(algo: Any, name: str, budget: int, n_eval_steps: int, n_eval: int) -> Any:
    """One checkpoint of ARLBench's ``train(..., n_eval_steps, ...)`` as its own function.

    The body of ARLBench 0.1.3's ``train_eval_step`` (DQN, PPO, SAC): ``ceil(budget / n_envs /
    train_freq (PPO: n_steps) / n_eval_steps)`` update steps, then an evaluation. DQN's update
    step reads the whole budget (its exploration schedule), as in ``train``.
    Returns ``seg(runner_state, buffer_state) -> ((runner_state, buffer_state), returns)``.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    per = algo.hpo_config["n_steps" if name == "ppo" else "train_freq"]
    n_up = int(np.ceil(budget / algo.env.n_envs / per / n_eval_steps))
    if name == "ppo":
        def seg_ppo(rs: Any, bs: Any) -> Any:
            rs, _ = jax.lax.scan(algo._update_step, rs, None, n_up)
            return (rs, bs), algo.eval(rs, n_eval)

        return jax.jit(seg_ppo)

    def seg(rs: Any, bs: Any) -> Any:
        xs = jnp.array([budget] * n_up) if name == "dqn" else None
        (rs, bs), _ = jax.lax.scan(algo._update_step, (rs, bs), xs, n_up)
        return (rs, bs), algo.eval(rs, n_eval)

    return jax.jit(seg, donate_argnums=(1,))


def _curve_runs(req: dict[str, Any], algo: Any, seeds: list[Any], budget: int, n_eval: int,
                n_eval_steps: int, setup_s: float, note: str | None) -> None:
    """Train every seed with ``n_eval_steps`` checkpoints; one protocol line per seed."""
    import jax
    import numpy as np

    rid = req.get("id")
    name = str(req.get("algorithm", "")).lower()
    t0, c0 = time.perf_counter(), time.process_time()
    try:  # compile once per configuration, ahead of time, so that no run pays for it
        init = jax.jit(algo.init).lower(jax.random.key(1)).compile()
        st = init(jax.random.key(1))
        seg = _segment(algo, name, budget, n_eval_steps, n_eval).lower(
            st.runner_state, getattr(st, "buffer_state", None)).compile()
        del st
    except Exception as e:
        msg = f"configuration rejected: {type(e).__name__}: {e}"[:2000]
        for s in seeds:
            _send(_failed(rid, s, msg, time.perf_counter() - t0))
        return
    compile_s, compile_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    first = True
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or s < 1:
            _send(_failed(rid, s, f"seed {s!r} invalid: seeds must be integers >= 1 "
                          "(ARLBench maps seed 0 to its default seed)"))
            continue
        curve: list[float | None] = []
        curve_s: list[float] = []
        curve_cpu: list[float] = []
        steps: list[int] = []
        t1, c1 = time.perf_counter(), time.process_time()
        try:
            st = init(jax.random.key(s))
            rs, bs = st.runner_state, getattr(st, "buffer_state", None)
            for _ in range(n_eval_steps):
                (rs, bs), ev = seg(rs, bs)
                r = float(np.mean(np.asarray(jax.block_until_ready(ev))))
                curve_s.append(round(time.perf_counter() - t1, 4))
                curve_cpu.append(round(time.process_time() - c1, 4))
                curve.append(r if math.isfinite(r) else None)
                steps.append(int(rs.global_step) * int(algo.env.n_envs))
            bad = [i + 1 for i, r in enumerate(curve) if r is None]
            out = {
                "id": rid, "seed": s, "status": "failed" if bad else "ok",
                "return": curve[-1], "runtime_s": curve_s[-1],
                "error": (f"non-finite return (NaN/inf) at checkpoint(s) {bad}: training "
                          "diverged") if bad else None,
                "first": first, "setup_s": setup_s if first else 0.0, "note": note,
                "curve": curve, "curve_s": curve_s, "curve_cpu_s": curve_cpu,
                "env_steps": steps, "compile_s": compile_s if first else 0.0,
                "compile_cpu_s": compile_cpu_s if first else 0.0,
            }
            if req.get("verify_curve"):  # ARLBench's own train with the same checkpoints
                st = init(jax.random.key(s))
                _, res = algo.train(*st, budget, n_eval_steps, n_eval)
                ref = np.asarray(jax.block_until_ready(res.eval_rewards)).mean(axis=1)
                got = np.array([np.nan if r is None else r for r in curve])
                out["train_equal"] = bool(np.array_equal(ref, got, equal_nan=True))
            _send(out)
        except Exception as e:
            tb = traceback.format_exc(limit=3).strip().splitlines()[-1]
            fail = _failed(rid, s, f"{type(e).__name__}: {e} [{tb}]"[:2000],
                           time.perf_counter() - t1)
            _send({**fail, "curve": curve, "curve_s": curve_s, "curve_cpu_s": curve_cpu,
                   "env_steps": steps})
        first = False
    jax.clear_caches()


def _failed(rid: Any, seed: Any, msg: str, runtime: float = 0.0) -> dict[str, Any]:
    return {
        "id": rid,
        "seed": seed,
        "status": "failed",
        "return": None,
        "runtime_s": runtime,
        "error": msg,
        "first": False,
    }


def _handle_train(req: dict[str, Any]) -> None:
    import jax

    rid = req.get("id")
    seeds = req.get("seeds")
    if not isinstance(seeds, list) or not seeds:
        _send(_failed(rid, None, "field 'seeds' must be a non-empty list of integers >= 1"))
        return
    budget = req.get("n_total_timesteps", req.get("budget"))
    n_eval = int(req.get("n_eval_episodes", 128))
    try:
        budget = int(float(budget))
        if budget < 1:
            raise ValueError
    except (TypeError, ValueError):
        for s in seeds:
            _send(_failed(rid, s, "field 'n_total_timesteps' must be a positive integer"))
        return
    t0 = time.perf_counter()
    try:
        algo, unknown = _make_algorithm(req)
    except Exception as e:
        msg = f"configuration rejected: {type(e).__name__}: {e}"
        for s in seeds:
            _send(_failed(rid, s, msg))
        return
    setup_s = time.perf_counter() - t0
    note = f"ignored by arlbench: {','.join(sorted(unknown))}" if unknown else None
    n_eval_steps = req.get("n_eval_steps", 1)
    if isinstance(n_eval_steps, bool) or not isinstance(n_eval_steps, int) or n_eval_steps < 1:
        for s in seeds:
            _send(_failed(rid, s, f"field 'n_eval_steps' must be an integer >= 1, got "
                          f"{n_eval_steps!r}"))
        return
    if n_eval_steps > 1:  # a learning curve: one segment per checkpoint, timed
        _curve_runs(req, algo, seeds, budget, n_eval, n_eval_steps, setup_s, note)
        return
    if (
        req.get("vectorize_seeds")
        and len(seeds) > 1
        and all(isinstance(s, int) and s >= 1 for s in seeds)
    ):
        t1 = time.perf_counter()
        try:
            rets = _train_vectorized(algo, [int(s) for s in seeds], budget, n_eval)
            per = (time.perf_counter() - t1) / len(seeds)
            for s, r in zip(seeds, rets, strict=True):
                ok = math.isfinite(r)
                _send(
                    {
                        "id": rid,
                        "seed": s,
                        "status": "ok" if ok else "failed",
                        "return": r if ok else None,
                        "runtime_s": per,
                        "error": None if ok else "non-finite return (NaN/inf)",
                        "first": False,
                        "note": note,
                        "vectorized": True,
                    }
                )
        except Exception as e:
            msg = f"{type(e).__name__}: {e}"
            for s in seeds:
                _send(_failed(rid, s, msg, time.perf_counter() - t1))
        finally:
            jax.clear_caches()
        return
    # ``init`` must be jitted too: called eagerly it builds a new optax transformation per
    # seed, a static field of the train state, so ``train`` would recompile for every seed.
    init = jax.jit(algo.init)
    first = True
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or s < 1:
            _send(
                _failed(
                    rid,
                    s,
                    f"seed {s!r} invalid: seeds must be integers >= 1 "
                    "(ARLBench maps seed 0 to its default seed)",
                )
            )
            continue
        t1 = time.perf_counter()
        try:
            r = _train_one(algo, init, s, budget, n_eval)
            dt = time.perf_counter() - t1
            if math.isfinite(r):
                _send(
                    {
                        "id": rid,
                        "seed": s,
                        "status": "ok",
                        "return": r,
                        "runtime_s": dt,
                        "error": None,
                        "first": first,
                        "setup_s": setup_s if first else 0.0,
                        "note": note,
                    }
                )
            else:
                _send(_failed(rid, s, "non-finite return (NaN/inf): training diverged", dt))
        except Exception as e:
            tb = traceback.format_exc(limit=3).strip().splitlines()[-1]
            _send(
                _failed(rid, s, f"{type(e).__name__}: {e} [{tb}]"[:2000], time.perf_counter() - t1)
            )
        first = False
    # executables of this configuration are not needed any more (they pin memory)
    jax.clear_caches()


def main() -> int:
    try:
        _setup_jax()
    except Exception as e:  # the venv is broken: say so on every request
        err = f"ARLBench import failed: {type(e).__name__}: {e}"
        for line in sys.stdin:
            try:
                rid = json.loads(line).get("id")
            except Exception:
                rid = None
            _send({"id": rid, "status": "failed", "error": err})
        return 1
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("request must be a JSON object")
        except Exception as e:
            _send({"id": None, "status": "failed", "error": f"bad request: {e}"})
            continue
        op = req.get("op")
        rid = req.get("id")
        try:
            if op == "ping":
                _send(
                    {
                        "id": rid,
                        "status": "ok",
                        "op": "ping",
                        "versions": _VERSIONS,
                        "pid": os.getpid(),
                    }
                )
            elif op == "describe":
                algo_cls = _ALGORITHMS[str(req.get("algorithm", "")).lower()]
                defaults = {
                    k: (v if isinstance(v, bool | int | float | str) else str(v))
                    for k, v in dict(algo_cls.get_default_hpo_config()).items()
                }
                _send(
                    {
                        "id": rid,
                        "status": "ok",
                        "op": "describe",
                        "defaults": defaults,
                        "space_names": sorted(_package_types(algo_cls)),
                    }
                )
            elif op == "train":
                _handle_train(req)
            elif op == "shutdown":
                _send({"id": rid, "status": "ok", "op": "shutdown"})
                return 0
            else:
                _send({"id": rid, "status": "failed", "error": f"unknown op {op!r}"})
        except Exception as e:
            _send({"id": rid, "status": "failed", "error": f"{type(e).__name__}: {e}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
