"""A deterministic fake optimizer and objective (same ask/tell contract as the real
optimizer), for the journal and fault tests; ``python tests/fault_injection.py JOURNAL`` runs a
journaled study of them."""

from __future__ import annotations

import hashlib
import math
import os
import time
from dataclasses import dataclass
from typing import Any


def _unit(*parts: Any) -> float:
    """Deterministic uniform number in [0, 1) from a hash of ``parts``."""
    h = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2.0**64


@dataclass
class FakeTrial:
    config: dict[str, Any]
    seeds: list[int]
    config_id: int
    round: int


class FakeOptimizer:
    """Deterministic ask/tell optimizer mimicking ERAHBO's control flow.

    A finite table of ``n_configs`` configurations. The first ``n_init`` rounds evaluate a
    seeded initial design; later rounds pick the best non-excluded configuration by
    ``mean - alpha * var + bonus`` (ties broken by a seeded RNG). A round asks ``k_min`` seeds,
    then one more at a time while the seeds disagree (std > ``spread``) and ``k < k_max``.
    Its decisions depend on every value told, so a replay that feeds other values diverges.
    ``tell(..., infeasible=True)`` excludes the configuration for good.
    """

    def __init__(
        self,
        n_configs: int = 10,
        seed: int = 0,
        *,
        k_min: int = 2,
        k_max: int = 4,
        n_init: int = 3,
        alpha: float = 1.0,
        spread: float = 0.3,
    ) -> None:
        import random

        rng = random.Random(seed)
        self.configs = [
            {"x": round(rng.random(), 6), "act": rng.choice(["tanh", "relu"])}
            for _ in range(n_configs)
        ]
        self.init_order = rng.sample(range(n_configs), n_init)
        self.rng = random.Random(seed + 1)
        self.seed, self.k_min, self.k_max, self.alpha, self.spread = (
            seed,
            k_min,
            k_max,
            alpha,
            spread,
        )
        self.obs: dict[int, list[float]] = {i: [] for i in range(n_configs)}
        self.n_seeds = dict.fromkeys(range(n_configs), 0)
        self.excluded: set[int] = set()
        self.round = -1
        self.cur: int | None = None
        self.k_round = 0
        self.more = False
        self.outstanding: FakeTrial | None = None
        self.told: list[tuple[int, list[float], bool]] = []

    def _seeds(self, cid: int, n: int) -> list[int]:
        out = []
        for _ in range(n):
            j = self.n_seeds[cid]
            self.n_seeds[cid] += 1
            out.append(1 + int(_unit("seed", self.seed, cid, j) * (2**31 - 2)))
        return out

    def _score(self, cid: int) -> float:
        ys = self.obs[cid]
        noise = 1e-3 * self.rng.random()
        if not ys:
            return 2.0 + noise
        mean = sum(ys) / len(ys)
        var = sum((y - mean) ** 2 for y in ys) / max(1, len(ys) - 1)
        return mean - self.alpha * var + 1.0 / math.sqrt(1 + len(ys)) + noise

    def ask(self) -> FakeTrial | None:
        if self.outstanding is not None:
            raise RuntimeError("FakeOptimizer is sequential: tell the previous trial first")
        if self.more:
            assert self.cur is not None
            cid, n = self.cur, 1
        else:
            self.round += 1
            if self.round < len(self.init_order):
                cid = self.init_order[self.round]
            else:
                cands = [c for c in self.obs if c not in self.excluded]
                if not cands:
                    return None
                scores = {c: self._score(c) for c in cands}
                cid = max(cands, key=lambda c: scores[c])
            n, self.cur, self.k_round = self.k_min, cid, 0
        trial = FakeTrial(dict(self.configs[cid]), self._seeds(cid, n), cid, self.round)
        self.outstanding = trial
        return trial

    def tell(self, trial: FakeTrial, returns: list[float], infeasible: bool = False) -> None:
        if trial is not self.outstanding:
            raise RuntimeError("tell got a trial that is not the outstanding one")
        self.outstanding = None
        self.told.append((trial.config_id, list(returns), infeasible))
        if infeasible:
            self.excluded.add(trial.config_id)
            self.more = False
            return
        self.obs[trial.config_id].extend(float(v) for v in returns)
        self.k_round += len(returns)
        ys = self.obs[trial.config_id][-self.k_round :]
        mean = sum(ys) / len(ys)
        std = math.sqrt(sum((y - mean) ** 2 for y in ys) / max(1, len(ys) - 1))
        self.more = self.k_round < self.k_max and std > self.spread


def fake_objective(config: dict[str, Any], seed: int) -> float:
    """Deterministic noisy return; fails on some seeds according to FAKE_FAIL (env)."""
    fail_rate = float(os.environ.get("FAKE_FAIL", "0"))
    sleep = float(os.environ.get("FAKE_SLEEP", "0"))
    if sleep:
        time.sleep(sleep)
    x = float(config["x"])
    u = _unit("fail", x, seed)
    if u < fail_rate * 0.8:
        raise RuntimeError(f"training diverged (seed {seed})")
    if u < fail_rate:
        return math.nan
    z = _unit("noise", x, seed) - 0.5
    return math.sin(3 * x) + (0.2 + x) * z * (5.0 if config["act"] == "relu" else 1.0)
