"""ARLBench pipeline: registry, Sobol decoding, client protocol, resumable shards.

Most tests use a fake worker (a stdlib script speaking the same JSON-lines protocol), so
they run without ARLBench.  Tests marked ``real`` use the ARLBench venv and are skipped
with a reason when it is not present (``erahbo arlbench setup`` creates it).
"""

from __future__ import annotations

import json
import math
import os
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from erahbo.arlbench.client import ArlClient
from erahbo.arlbench.generate import (
    decode_unit,
    generate,
    merge_shards,
    shard_status,
    sobol_configs,
)
from erahbo.arlbench.registry import TASKS, get_task
from erahbo.arlbench.venv import venv_python, worker_script
from erahbo.datasets.format import read_task

FAKE_WORKER = textwrap.dedent(
    r'''
    import json, math, os, sys, time
    calls = os.environ.get("FAKE_CALLS")
    for line in sys.stdin:
        req = json.loads(line)
        rid, op = req.get("id"), req.get("op")
        if op == "ping":
            print(json.dumps({"id": rid, "status": "ok", "versions": {"arlbench": "fake"},
                              "pid": os.getpid()}), flush=True)
            continue
        if op == "shutdown":
            print(json.dumps({"id": rid, "status": "ok"}), flush=True)
            break
        hp = req["hp_config"]
        if calls:
            with open(calls, "a") as f:
                f.write(json.dumps({"hp": hp, "seeds": req["seeds"]}) + "\n")
            # lose the process driving this worker (a Ray actor) at the N-th training
            # request, once per mark file (or every time without one)
            kill_at = os.environ.get("FAKE_KILL_PARENT_AT")
            if kill_at:
                at, _, mark = kill_at.partition(":")
                with open(calls) as f:
                    n_calls = sum(1 for _ in f)
                if n_calls >= int(at) and not (mark and os.path.exists(mark)):
                    if mark:
                        open(mark, "w").close()
                    os.kill(os.getppid(), 9)
                    os._exit(0)
        for k, s in enumerate(req["seeds"]):
            if hp.get("crash_at_seed") == s:
                os._exit(3)
            if hp.get("hang_at_seed") == s:
                time.sleep(60)
            time.sleep(float(hp.get("sleep_s", 0.0)))
            x = float(hp.get("learning_rate", 0.5))
            r = 100.0 * x + s
            ok = not hp.get("nan")
            print(json.dumps({"id": rid, "seed": s, "status": "ok" if ok else "failed",
                              "return": r if ok else None, "runtime_s": 0.01,
                              "error": None if ok else "non-finite return (NaN/inf)",
                              "first": k == 0}), flush=True)
    '''
)


@pytest.fixture
def fake_cmd(tmp_path: Path) -> list[str]:
    p = tmp_path / "fake_worker.py"
    p.write_text(FAKE_WORKER)
    return [sys.executable, "-u", str(p)]


# -- registry and spaces ---------------------------------------------------------------------
def test_registry_has_the_papers_19_tasks() -> None:
    assert len(TASKS) == 19
    algos = {t.algorithm for t in TASKS.values()}
    assert algos == {"dqn", "ppo", "sac"}
    counts = {a: sum(t.algorithm == a for t in TASKS.values()) for a in algos}
    assert counts == {"dqn": 5, "ppo": 10, "sac": 4}
    for t in TASKS.values():
        assert t.name.startswith(f"{t.algorithm}_{t.domain}_")
        assert t.n_total_timesteps > 0 and t.n_envs > 0
        if not t.runnable_here:
            assert t.note, f"{t.name} must say why it cannot run here"
    with pytest.raises(ValueError, match="registered tasks"):
        get_task("nope")


def test_search_spaces_match_the_note() -> None:
    sizes = {"ppo": 9, "dqn": 14, "sac": 15}
    for t in TASKS.values():
        sp = t.search_space
        json.dumps(sp)  # JSON form
        names = [h["name"] for h in sp["hyperparameters"]]
        assert len(names) == len(set(names)) == sizes[t.algorithm]
        for h in sp["hyperparameters"]:
            assert h["type"] in {"float", "log", "int", "cat"}
            if h["type"] != "cat":
                assert h["low"] < h["high"]
        for c in sp.get("conditions", []):
            assert c["child"] in names and c["parent"] in names
    dqn = get_task("dqn_cc_cartpole").search_space
    conds = {c["child"] for c in dqn["conditions"]}
    assert conds == {"tau", "target_update_interval"}
    ppo = {h["name"]: h for h in get_task("ppo_cc_cartpole").search_space["hyperparameters"]}
    assert ppo["learning_rate"]["type"] == "log" and ppo["learning_rate"]["low"] == 1e-6
    assert ppo["minibatch_size"]["choices"] == [128, 256, 512]


def test_decode_unit_bounds_types_and_conditions() -> None:
    sp = get_task("dqn_cc_cartpole").search_space
    lo = decode_unit(sp, np.zeros(14))
    hi = decode_unit(sp, np.ones(14))
    assert lo["learning_rate"] == pytest.approx(1e-6) and hi["learning_rate"] == pytest.approx(0.1)
    assert lo["buffer_size"] == 1024 and hi["buffer_size"] == 100000
    assert lo["use_target_network"] is True and "tau" in lo
    assert hi["use_target_network"] is False and "tau" not in hi
    assert "target_update_interval" not in hi
    with pytest.raises(ValueError, match="coordinates"):
        decode_unit(sp, np.zeros(3))


def test_sobol_configs_seeded_prefix_and_in_range() -> None:
    sp = get_task("ppo_cc_cartpole").search_space
    a = sobol_configs(sp, 16, seed=3)
    b = sobol_configs(sp, 32, seed=3)
    assert a == b[:16]  # a longer run extends the same sequence
    assert a != sobol_configs(sp, 16, seed=4)
    for c in b:
        assert 1e-6 <= c["learning_rate"] <= 0.1
        assert c["minibatch_size"] in (128, 256, 512)
        assert isinstance(c["normalize_advantage"], bool)
    # a balanced Sobol design hits every categorical choice
    assert {c["minibatch_size"] for c in b} == {128, 256, 512}


# -- client protocol with the fake worker ----------------------------------------------------
def test_client_train_results_in_seed_order(fake_cmd: list[str]) -> None:
    with ArlClient(1, worker_cmd=fake_cmd) as cl:
        assert cl.ping()["versions"]["arlbench"] == "fake"
        res = cl.train("ppo_cc_cartpole", {"learning_rate": 0.25, "tau": None}, [3, 1, 2])
    assert [r.seed for r in res] == [3, 1, 2]
    assert [r.return_ for r in res] == [28.0, 26.0, 27.0]
    assert all(r.status == "ok" and r.error is None for r in res)
    assert [r.first for r in res] == [True, False, False]


def test_client_nan_becomes_failed_run(fake_cmd: list[str]) -> None:
    with ArlClient(1, worker_cmd=fake_cmd) as cl:
        res = cl.train("ppo_cc_cartpole", {"nan": True}, [1, 2])
    assert all(r.status == "failed" and math.isnan(r.return_) for r in res)
    assert "non-finite" in res[0].error


def test_client_survives_worker_crash_and_hang(fake_cmd: list[str]) -> None:
    with ArlClient(1, worker_cmd=fake_cmd, run_timeout_s=1.0, compile_timeout_s=2.0) as cl:
        res = cl.train("ppo_cc_cartpole", {"learning_rate": 0.0, "crash_at_seed": 2}, [1, 2, 3])
        assert [r.status for r in res] == ["ok", "failed", "ok"]
        assert "worker died" in res[1].error and "exit code 3" in res[1].error
        res = cl.train("ppo_cc_cartpole", {"learning_rate": 0.0, "hang_at_seed": 1}, [1, 2])
        assert res[0].status == "failed" and "timeout" in res[0].error
        assert res[1].status == "ok" and res[1].return_ == 2.0
        assert cl.restarts == 2
        # the pool still works afterwards
        assert cl.train("ppo_cc_cartpole", {}, [5])[0].return_ == 55.0


def test_client_parallel_workers(fake_cmd: list[str]) -> None:
    cfgs = [{"learning_rate": k / 10} for k in range(6)]
    with ArlClient(2, worker_cmd=fake_cmd) as cl:
        out = dict(cl.train_many("dqn_cc_cartpole", cfgs, [1, 2]))
    assert sorted(out) == list(range(6))
    for k, res in out.items():
        assert [r.return_ for r in res] == pytest.approx([10.0 * k + 1, 10.0 * k + 2])


def test_missing_venv_gives_clear_error(tmp_path: Path) -> None:
    from erahbo.arlbench.client import WorkerError

    with pytest.raises(WorkerError, match="arlbench setup"):
        ArlClient(1, venv=tmp_path / "no-venv")


# -- resumable shards ------------------------------------------------------------------------
def test_generate_resumes_without_loss_or_duplicates(
    fake_cmd: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_CALLS", str(calls))
    out = tmp_path / "data"
    with ArlClient(1, worker_cmd=fake_cmd) as cl:
        r1 = generate("ppo_cc_cartpole", out, cl, n_configs=10, n_seeds=3, shard_size=4,
                      max_shards=2, versions={"arlbench": "fake"})
        assert r1["written"] == [0, 1] and r1["n_shards"] == 3
        st = shard_status(out, "ppo_cc_cartpole")
        assert st["done"] == [0, 1] and st["n_shards"] == 3
        with pytest.raises(ValueError, match="missing"):
            merge_shards(out, "ppo_cc_cartpole")
        part = read_task(merge_shards(out, "ppo_cc_cartpole", allow_partial=True))
        assert part.n_configs == 8 and part.meta["partial"] is True
        # simulate a crash that left a temporary file behind: it must be ignored
        (out / "shards" / "ppo_cc_cartpole" / "shard-00002.parquet.tmp").write_text("junk")
        r2 = generate("ppo_cc_cartpole", out, cl, n_configs=10, n_seeds=3, shard_size=4)
        assert r2["written"] == [2] and r2["skipped"] == [0, 1]
        with pytest.raises(ValueError, match="different generation run"):
            generate("ppo_cc_cartpole", out, cl, n_configs=10, n_seeds=4, shard_size=4)
    lines = [json.loads(x) for x in calls.read_text().splitlines()]
    assert len(lines) == 10  # every configuration trained exactly once
    task = read_task(merge_shards(out, "ppo_cc_cartpole"))
    assert task.n_configs == 10 and task.seeds == [1, 2, 3]
    assert list(task.config_ids) == list(range(10))
    expected = sobol_configs(get_task("ppo_cc_cartpole").search_space, 10, 0)
    lr = task.configs["learning_rate"].to_numpy()
    assert lr == pytest.approx([c["learning_rate"] for c in expected])
    assert task.returns[:, 0] == pytest.approx(100 * lr + 1)
    m = task.meta
    assert m["synthetic"] is False and m["generator"] == "erahbo.arlbench"
    assert m["algorithm"] == "ppo" and m["domain"] == "cc" and m["training_budget"] == 100_000
    assert m["search_space"]["hyperparameters"][0]["name"] == "learning_rate"
    assert m["n_eval_episodes"] == 128 and m["partial"] is False and m["n_failed_runs"] == 0


def test_train_many_slides_past_a_slow_configuration(fake_cmd: list[str]) -> None:
    """A slow configuration occupies one worker; the others take the next ones meanwhile."""
    configs = [{"learning_rate": 0.9, "sleep_s": 0.4}] + [
        {"learning_rate": i / 10} for i in range(6)
    ]
    with ArlClient(2, worker_cmd=fake_cmd) as cl:
        order = [k for k, _ in cl.train_many("ppo_cc_cartpole", configs, [1, 2])]
        assert sorted(order) == list(range(7)) and order[-1] == 0
        it = cl.train_many("ppo_cc_cartpole", configs, [1, 2, 3])
        k, res = next(it)
        assert k != 0 and [r.return_ for r in res] == pytest.approx([10 * k - 9, 10 * k - 8,
                                                                      10 * k - 7])
        t0 = time.perf_counter()
        it.close()  # cancels the rest; does not wait for the slow configuration in flight
        assert time.perf_counter() - t0 < 0.5


def test_relative_cost_follows_gradient_work() -> None:
    dqn, ppo = get_task("dqn_cc_cartpole"), get_task("ppo_cc_cartpole")
    cheap = {"train_freq": 128, "gradient_steps": 1, "buffer_batch_size": 64}
    heavy = {"train_freq": 1, "gradient_steps": 10, "buffer_batch_size": 256}
    assert dqn.relative_cost(cheap) == pytest.approx(1.035)
    assert dqn.relative_cost(heavy) / dqn.relative_cost(cheap) > 100
    assert dqn.relative_cost({}) == pytest.approx(1 + 0.07 * 1 * 128 / 4)  # space defaults
    assert ppo.relative_cost(heavy) == ppo.relative_cost({}) == 1.0


class _ShuffledClient:
    """Duck-typed client: returns configurations in reverse order (as parallel workers may)."""

    def __init__(self) -> None:
        self.n_calls = 0

    def train_many(self, request, configs, seeds):
        from erahbo.arlbench.client import RunResult

        self.n_calls += 1
        for k in reversed(range(len(configs))):
            x = float(configs[k].get("learning_rate", 0.5))
            yield k, [RunResult(100.0 * x + s, "ok", 0.5, None, s, j == 0)
                      for j, s in enumerate(seeds)]


def test_generate_writes_shards_finished_out_of_order(tmp_path: Path) -> None:
    cl = _ShuffledClient()
    seen: list[tuple[int, float, float]] = []
    res = generate("ppo_cc_cartpole", tmp_path, cl, n_configs=10, n_seeds=2, shard_size=4,
                   progress=lambda done, total, info: seen.append(
                       (done, info["cost_done"], info["cost_total"])))
    assert res["written"] == [0, 1, 2] and cl.n_calls == 1  # one stream for every shard
    assert [d for d, _, _ in seen] == list(range(1, 11))
    assert [c for _, c, _ in seen] == pytest.approx(range(1, 11))  # PPO: equal costs
    assert seen[-1][2] == pytest.approx(10.0)
    task = read_task(merge_shards(tmp_path, "ppo_cc_cartpole"))
    lr = task.configs["learning_rate"].to_numpy()
    assert task.returns == pytest.approx(np.stack([100 * lr + 1, 100 * lr + 2], 1))
    assert task.meta["wall_time_s"] == pytest.approx(10 * 2 * 0.5)  # worker-seconds
    again = generate("ppo_cc_cartpole", tmp_path, cl, n_configs=10, n_seeds=2, shard_size=4)
    assert again["written"] == [] and again["skipped"] == [0, 1, 2]


def test_generate_refuses_a_second_concurrent_run(tmp_path: Path) -> None:
    from erahbo._lockfile import acquire

    d = tmp_path / "shards" / "ppo_cc_cartpole"
    d.mkdir(parents=True)
    held = acquire(d / "generate.lock", RuntimeError)  # another generation holds the folder
    cl = _ShuffledClient()
    with pytest.raises(RuntimeError, match=r"another generation into .* is running"):
        generate("ppo_cc_cartpole", tmp_path, cl, n_configs=4, n_seeds=2)
    assert cl.n_calls == 0  # nothing trained, nothing written
    held.close()
    assert generate("ppo_cc_cartpole", tmp_path, cl, n_configs=4, n_seeds=2)["written"] == [0]


class _FailingClient:
    """Duck-typed client whose workers fail on the first configuration."""

    def train_many(self, request, configs, seeds):
        raise RuntimeError("worker crashed")
        yield  # a generator, as the real client's train_many


def test_generate_leaves_no_lock_file_behind(tmp_path: Path) -> None:
    """generate.lock exists only while a generation runs: gone after a normal finish and
    after an error, and the next run locks the folder again (the lock still excludes)."""
    from erahbo._lockfile import acquire

    d = tmp_path / "shards" / "ppo_cc_cartpole"
    seen: list[bool] = []
    generate("ppo_cc_cartpole", tmp_path, _ShuffledClient(), n_configs=4, n_seeds=2,
             progress=lambda *_: seen.append((d / "generate.lock").exists()))
    assert seen and all(seen)  # held during the run
    assert not (d / "generate.lock").exists()
    with pytest.raises(RuntimeError, match="worker crashed"):
        generate("ppo_cc_cartpole", tmp_path, _FailingClient(), n_configs=8, n_seeds=2)
    assert not (d / "generate.lock").exists()
    assert sorted(p.name for p in d.iterdir()) == ["plan.json", "shard-00000.parquet"]
    held = acquire(d / "generate.lock", RuntimeError)
    with pytest.raises(RuntimeError, match="another generation"):
        generate("ppo_cc_cartpole", tmp_path, _ShuffledClient(), n_configs=8, n_seeds=2)
    held.close()


def test_lock_released_between_open_and_lock_is_retaken_on_the_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that opened the lock file just before its holder removed it (release)
    must not lock the removed file: it locks a new one, which then excludes a third."""
    from erahbo import _lockfile

    path = tmp_path / "generate.lock"
    first = _lockfile.acquire(path, RuntimeError)
    real_open = open
    opened: list[str] = []

    def racing_open(p, mode="r", *a, **k):  # the holder finishes between open and flock
        fh = real_open(p, mode, *a, **k)
        if not opened:
            _lockfile.release(first)
        opened.append(str(p))
        return fh

    monkeypatch.setattr(_lockfile, "open", racing_open, raising=False)
    second = _lockfile.acquire(path, RuntimeError)
    assert len(opened) == 2  # the removed file was dropped, the new one locked
    assert path.exists() and path.read_text() == f"pid {os.getpid()}"
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match=f"pid {os.getpid()}"):
        _lockfile.acquire(path, lambda holder: RuntimeError(holder))
    _lockfile.release(second)
    assert not path.exists()


def test_a_file_system_without_locks_is_not_blamed_on_another_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flock refused by the file system (ENOLCK: NFS without a lock service) says so, rather
    than "another generation is running"; nothing is trained."""
    import errno
    import fcntl

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    cl = _ShuffledClient()
    with pytest.raises(RuntimeError, match=r"generate.lock: cannot lock it \(No locks "
                       r"available\): this file system does not support flock") as info:
        generate("ppo_cc_cartpole", tmp_path, cl, n_configs=4, n_seeds=2)
    assert "another generation" not in str(info.value) and cl.n_calls == 0


def test_generate_conditional_inactive_is_null(fake_cmd: list[str], tmp_path: Path) -> None:
    with ArlClient(1, worker_cmd=fake_cmd) as cl:
        generate("dqn_cc_cartpole", tmp_path, cl, n_configs=8, n_seeds=1, shard_size=8)
    task = read_task(merge_shards(tmp_path, "dqn_cc_cartpole"))
    off = ~task.configs["use_target_network"].astype(bool).to_numpy()
    assert off.any() and (~off).any()
    assert task.configs.loc[off, "tau"].isna().all()
    assert task.configs.loc[~off, "tau"].notna().all()


# -- the real ARLBench worker (skipped without the venv) -------------------------------------
_HAS_VENV = venv_python().exists()
real = pytest.mark.skipif(
    not _HAS_VENV,
    reason=f"ARLBench venv not found at {venv_python()}; run `erahbo arlbench setup`",
)


@real
def test_real_worker_tiny_budget_deterministic_and_failing_config() -> None:
    extra = {"n_total_timesteps": 2048, "n_eval_episodes": 8}
    with ArlClient(1, log_dir=None) as cl:
        ping = cl.ping()
        assert ping["versions"]["arlbench"] == "0.1.3"
        cfg = {"learning_rate": 1e-3, "buffer_batch_size": 64, "train_freq": 8,
               "gradient_steps": 1, "learning_starts": 64, "use_target_network": False}
        res = cl.train("dqn_cc_cartpole", cfg, [1, 2, 1], extra=extra)
        assert [r.status for r in res] == ["ok"] * 3, [r.error for r in res]
        assert res[0].return_ == res[2].return_  # same seed, same return
        assert all(np.isfinite(r.return_) and r.return_ > 0 for r in res)
        bad = cl.train("dqn_cc_cartpole", {"buffer_size": "many"}, [1, 2], extra=extra)
        assert [r.status for r in bad] == ["failed", "failed"]
        assert "buffer_size" in bad[0].error
        zero = cl.train("dqn_cc_cartpole", {"train_freq": 0}, [1], extra=extra)
        assert zero[0].status == "failed" and "train_freq" in zero[0].error


def test_worker_script_is_standalone() -> None:
    # The worker runs in the ARLBench venv: no erahbo, and only stdlib at module level.
    import ast

    tree = ast.parse(worker_script().read_text())
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module.split(".")[0])
    assert "erahbo" not in mods
    top = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module.split(".")[0])
    assert top <= {"__future__", "json", "math", "os", "sys", "time", "traceback", "typing"}


# -- CLI (thin layer) --------------------------------------------------------------------------
def test_cli_tasks_and_merge_shards(fake_cmd: list[str], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from erahbo.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["dataset", "tasks"], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "dqn_cc_cartpole" in res.output and "xminigrid" in res.output
    with ArlClient(1, worker_cmd=fake_cmd) as cl:
        generate("ppo_cc_pendulum", tmp_path, cl, n_configs=8, n_seeds=2, shard_size=4,
                 max_shards=1)
    args = ["dataset", "merge-shards", "--task", "ppo_cc_pendulum", "--out", str(tmp_path)]
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "missing" in res.output
    res = runner.invoke(app, [*args, "--partial"])
    assert res.exit_code == 0, res.output
    assert read_task(tmp_path / "ppo_cc_pendulum.parquet").n_configs == 4
    res = runner.invoke(app, ["dataset", "generate", "--task", "sac_brax_fast"])
    assert res.exit_code == 2 and "cannot run here" in res.output


def test_client_accepts_numpy_values(fake_cmd: list[str]) -> None:
    with ArlClient(1, worker_cmd=fake_cmd) as cl:
        res = cl.train("ppo_cc_cartpole", {"learning_rate": np.float64(0.5),
                                           "minibatch_size": np.int64(128)}, [np.int64(1)])
    assert res[0].status == "ok" and res[0].return_ == 51.0


def test_unstartable_worker_fails_runs_not_caller(tmp_path: Path) -> None:
    with ArlClient(1, worker_cmd=[str(tmp_path / "no-such-python")]) as cl:
        res = cl.train("dqn_cc_cartpole", {}, [1, 2])
    assert [r.status for r in res] == ["failed", "failed"]
    assert "cannot start the ARLBench worker" in res[0].error


def test_every_registry_space_is_a_valid_search_space() -> None:
    from erahbo.space import SearchSpace

    for name, task in TASKS.items():
        space = SearchSpace(task.search_space)
        assert space.dim > 0, name
        if task.algorithm in ("dqn", "sac"):  # tau is conditional on the target network
            cfg = space.decode(space.sobol_unit(8, seed=0)[0])
            assert ("tau" in cfg) == bool(cfg["use_target_network"]), name


def test_cli_generate_logs_progress_by_work_and_resumes(
    fake_cmd: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    import erahbo.arlbench.client as client_mod
    from erahbo.cli import app

    real_client = client_mod.ArlClient

    def fake_client(workers: int, **kw: object) -> ArlClient:
        return real_client(workers, worker_cmd=fake_cmd)

    monkeypatch.setattr(client_mod, "ArlClient", fake_client)
    args = ["dataset", "generate", "--task", "dqn_cc_cartpole", "--configs", "6", "--seeds", "2",
            "--out", str(tmp_path), "--workers", "2"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    # not a terminal: one plain line per configuration, the share of the expected work and ETA
    lines = [ln for ln in res.output.splitlines() if "configs (" in ln]
    assert len(lines) == 6 and "6/6 configs (100.0 % of the work)" in lines[-1]
    assert "eta=" in lines[0] and "merged:" in res.output
    assert read_task(tmp_path / "dqn_cc_cartpole.parquet").returns.shape == (6, 2)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and "0 shards written, 2 already present" in res.output


def test_status_reports_work_done_and_merged_stats(fake_cmd: list[str], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from erahbo.arlbench.status import generation_status, generation_tasks
    from erahbo.cli import app

    with ArlClient(1, worker_cmd=fake_cmd) as cl:
        generate("dqn_cc_cartpole", tmp_path, cl, n_configs=12, n_seeds=3, shard_size=4,
                 max_shards=2)
    assert generation_tasks(tmp_path) == ["dqn_cc_cartpole"]
    s = generation_status(tmp_path, "dqn_cc_cartpole")
    assert (s.planned_configs, s.done_configs, s.merged_configs) == (12, 8, 0)
    t = get_task("dqn_cc_cartpole")
    cost = [t.relative_cost(c) for c in sobol_configs(t.search_space, 12, 0)]
    assert s.work_done == pytest.approx(sum(cost[:8]) / sum(cost))
    assert s.worker_hours == pytest.approx(8 * 3 * 0.01 / 3600)  # the fake runs take 0.01 s
    assert s.hours_left == pytest.approx(s.worker_hours * (1 - s.work_done) / s.work_done)
    merge_shards(tmp_path, "dqn_cc_cartpole", allow_partial=True)
    s = generation_status(tmp_path, "dqn_cc_cartpole")
    assert s.merged_configs == 8 and s.partial and s.n_nan == 0
    assert s.std[0] == pytest.approx(1.0)  # fake returns 100 x + seed: std of 1, 2, 3
    res = CliRunner().invoke(app, ["dataset", "status", "--out", str(tmp_path), "--markdown"])
    assert res.exit_code == 0, res.output
    row = next(ln for ln in res.output.splitlines() if ln.startswith("| dqn_cc_cartpole"))
    assert "| 12 x 3 |" in row and "| 8 x 3 (prefix) |" in row and "| 0 |" in row
    for width in (80, 120):  # the terminal view fits, every value readable
        res = CliRunner().invoke(app, ["dataset", "status", "--out", str(tmp_path)],
                                 env={"COLUMNS": str(width)})
        assert res.exit_code == 0, res.output
        lines = [ln for ln in res.output.splitlines() if str(tmp_path) not in ln]
        assert max(map(len, lines)) <= width
        assert "dqn_cc_cartpole: 8 of 12 x 3 done" in res.output
        assert "merged: 8 x 3 (prefix)" in res.output and "NaN runs 0" in res.output
    res = CliRunner().invoke(app, ["dataset", "status", "--out", str(tmp_path / "none")])
    assert res.exit_code == 2 and "no generation plan" in res.output
    # --update writes the same table between the markers of a README, the rest untouched
    readme = tmp_path / "README.md"
    readme.write_text("# Data\n\n<!-- status -->\nold table\n<!-- /status -->\n\nFindings.\n")
    res = CliRunner().invoke(app, ["dataset", "status", "--out", str(tmp_path), "--update",
                                   str(readme)])
    assert res.exit_code == 0, res.output
    text = readme.read_text()
    assert "old table" not in text and row in text
    assert text.startswith("# Data\n\n<!-- status -->\n| task |")
    assert text.endswith("|\n<!-- /status -->\n\nFindings.\n")
    readme.write_text("no markers\n")
    res = CliRunner().invoke(app, ["dataset", "status", "--out", str(tmp_path), "--update",
                                   str(readme)])
    assert res.exit_code == 2 and "no <!-- status -->" in res.output
    assert readme.read_text() == "no markers\n"  # nothing lost


@real
def test_arlbench_setup_prints_a_line_per_step() -> None:
    """On an existing venv: the check is announced before its silent minute."""
    from typer.testing import CliRunner

    from erahbo.cli import app

    res = CliRunner().invoke(app, ["arlbench", "setup"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert any("checking the venv" in ln for ln in lines)
    assert "already present" in res.output
