"""The sweep loop: erahbo's ask/tell driving Hydra's launcher, one job per training run.

Each :class:`erahbo.Trial` (a configuration and its seeds) becomes one job per seed, with the
overrides ``<hyperparameter>=<value> ... <seed_keyword>=<seed>`` on top of the command line's
own (non-sweep) overrides. Up to ``n_parallel`` trials are asked at once and all their jobs
go to the launcher in one ``launch`` call, so the basic, joblib, submitit and ray launchers
all work. A job's return value is its run's return; a job that raised, or returned something
that is not a finite number, is a failed run (erahbo's ``failures`` policy). Every trial and
run is committed to erahbo's SQLite journal, so running the same sweep again (same
``hydra.sweep.dir`` and sweeper keys) resumes it: the finished runs are not launched again.
"""

from __future__ import annotations

import difflib
import logging
import math
import time
from numbers import Real
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.plugins import Plugins
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

import erahbo
from erahbo.optimizer.parts import HOST_PARAMS
from erahbo.runtime.journal import Journal, JournalError, SettingsMismatchError

from ._hypersweeper import kept_parallel, translate
from ._outputs import Outputs, warm_runs
from ._space import load_search_space

log = logging.getLogger(__name__)

JOURNAL_NAME = "erahbo_journal.db"
FAILURES = ("penalize", "exclude")
_ABSENT = object()


class ErahboSweeperImpl(Sweeper):
    """See the module docstring; the keys are those of ``ErahboSweeperConf``."""

    def __init__(self, **options: Any) -> None:
        self.options = {k: v for k, v in options.items() if not k.startswith("_")}
        self.config: DictConfig | None = None
        self.launcher: Any = None
        self.hydra_context: HydraContext | None = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.hydra_context, self.config = hydra_context, config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    # ------------------------------------------------------------------ the sweep
    def sweep(self, arguments: list[str]) -> Any:
        """Run the study; returns the :class:`erahbo.Result`."""
        assert self.config is not None and self.launcher is not None
        _refuse_unknown_keys(self.options)
        tr = translate({k: _container(v) for k, v in self.options.items()})
        for note in tr.notes:
            log.info(f"erahbo: {note}")
        for note in tr.unused:
            log.warning(f"erahbo: {note}")
        o = tr.options
        if o["failures"] not in FAILURES:
            raise ValueError(f"hydra.sweeper.failures={o['failures']!r}: use one of {FAILURES}")
        fixed = self._fixed_overrides(arguments)
        space = load_search_space(o["search_space"])
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
        journal = Path(o["journal"]) if o["journal"] else sweep_dir / JOURNAL_NAME
        if (kept := kept_parallel(tr, _journal_settings(journal))) is not None:
            o["n_parallel"] = kept[0]  # a sweep extended through n_trials
            log.info(f"erahbo: {kept[1]}")
        self.sign = 1.0 if o["maximize"] else -1.0
        self.seed_key = str(o["seed_keyword"])
        if OmegaConf.select(self.config, self.seed_key, default=_ABSENT) is _ABSENT:
            log.warning(f"erahbo: seed_keyword {self.seed_key!r} is not a key of the task config, "
                        f"so each job gets ++{self.seed_key}=<seed>; a task that reads its seed "
                        "elsewhere trains every run of a configuration alike (no spread between "
                        "seeds). ARLBench reads autorl.seed: set hydra.sweeper.seed_keyword: "
                        "autorl.seed")
        self.names = list(space.names)
        self.max_budget = tr.max_budget
        taken = {a.split("=", 1)[0].lstrip("+~") for a in fixed}
        fixed = [*fixed, *(self._key(k) + "=" + v for k, v in
                           (ov.split("=", 1) for ov in tr.job_overrides) if k not in taken)]
        if o["warm_start"] is not None:
            o["warm_start"] = warm_runs(o["warm_start"], self.sign)
        self.outputs = Outputs(sweep_dir, self.names, self.sign, tr.max_budget)
        try:
            opt = self._optimizer(space, o, journal, sweep_dir, fixed)
        except SettingsMismatchError as exc:
            first = str(exc).split("To resume it")[0].rstrip()
            raise ValueError(
                f"{first}\nTo resume this sweep, run it with the same hydra.sweeper keys; for a "
                "new study, set another hydra.sweep.dir (or hydra.sweeper.journal)."
            ) from None
        except ValueError as exc:
            if tr.budget_from and "budget" in str(exc):  # the user gave n_trials, not budget
                raise ValueError(f"{exc} (hydra.sweeper.budget = {o['budget']} training runs "
                                 f"from {tr.budget_from})") from None
            raise
        with opt:
            done = opt.n_evals
            if done:
                log.info(f"erahbo: resuming from {journal}: {done} run(s) already done")
            job_idx = _next_job_idx(sweep_dir, len(opt.result().history))
            validated = False
            while True:
                trials = []
                clock = time.perf_counter()
                # (after a resume, the first asks hand out the trials cut by the crash)
                while len(trials) < opt.n_parallel and (t := opt.ask()) is not None:
                    trials.append(t)
                self.outputs.opt_time += time.perf_counter() - clock
                if not trials:
                    break
                batch = [[*fixed, *self._overrides(t.config), self._seed_override(s)]
                         for t in trials for s in t.seeds]
                if not validated:  # composition errors (typos) before the first job runs
                    self.validate_batch_is_legal(batch[:1])
                    validated = True
                results = self.launcher.launch(batch, initial_job_idx=job_idx)
                job_idx += len(batch)
                clock = time.perf_counter()
                pos = 0
                for t in trials:
                    values, errors = [], []
                    for r in results[pos: pos + len(t.seeds)]:
                        v, err = _job_value(r)
                        values.append(v * self.sign)
                        errors.append(err)
                    pos += len(t.seeds)
                    opt.tell(t, values, errors=errors)
                self.outputs.opt_time += time.perf_counter() - clock
                self._write(opt.result(), trajectory=True)
            result = opt.result()
        self._write(result)
        log.info(f"erahbo: {result.n_evals} runs; recommendation in {sweep_dir / 'incumbent.yaml'}")
        return result

    # ------------------------------------------------------------------ helpers
    def _optimizer(self, space: Any, o: dict[str, Any], journal: Path,
                   sweep_dir: Path, fixed: list[str]) -> Any:
        given = {n: o[n] for n in ("beta", "beta_stop", "k_min", "k_max", "n_init", "k_init",
                                   *(p.name for p in HOST_PARAMS))  # the parts' options
                 if o.get(n) is not None}
        return erahbo.Optimizer(
            space, method=o["method"], budget=int(o["budget"]), seed=int(o["seed"]),
            alpha=o["alpha"], preset=o.get("preset", "default"), k=int(o["k"]),
            **given, seed_batch=o["seed_batch"], n_parallel=o["n_parallel"],
            failures=o["failures"], warm_start=o["warm_start"], journal=journal,
            journal_info={"sweeper": "hydra", "sweep_dir": str(sweep_dir.resolve()),
                          "fixed_overrides": fixed},
        )

    def _write(self, result: Any, trajectory: bool = False) -> None:
        inc = result.incumbent
        overrides = None if inc is None else self._overrides(inc)
        self.outputs.write(result, overrides, trajectory=trajectory)

    def _fixed_overrides(self, arguments: list[str]) -> list[str]:
        """The command line's overrides, passed to every job; sweeps are refused."""
        assert self.hydra_context is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        out = []
        for ov in parser.parse_overrides(arguments):
            if ov.is_sweep_override():
                raise ValueError(
                    f"override {ov.input_line!r} is a sweep; the erahbo sweeper chooses the "
                    "values itself: put the hyperparameter in hydra.sweeper.search_space"
                )
            out.append(ov.input_line)
        return out

    def _key(self, name: str) -> str:
        """``name``, or ``++name`` when the task config has no such key (it is added)."""
        assert self.config is not None
        found = OmegaConf.select(self.config, name, default=_ABSENT)
        return name if found is not _ABSENT else f"++{name}"

    def _overrides(self, config: dict[str, Any]) -> list[str]:
        return [f"{self._key(k)}={_value(v)}" for k, v in config.items()]

    def _seed_override(self, seed: int) -> str:
        return f"{self._key(self.seed_key)}={int(seed)}"


def _job_value(r: Any) -> tuple[float, str | None]:
    """A job's return as a float (NaN when it failed) and why it failed (None if it did not)."""
    try:
        v = r.return_value  # re-raises the task's exception
    except Exception as exc:
        return math.nan, f"job failed: {type(exc).__name__}: {exc}"
    if isinstance(v, bool) or not isinstance(v, Real):
        return math.nan, (f"job returned {type(v).__name__} {v!r:.80}; the task function "
                          "must return its run's return as a number")
    v = float(v)
    return (v, None) if math.isfinite(v) else (math.nan, f"job returned {v}")


def _value(v: Any) -> str:
    """A value in Hydra's override grammar (strings quoted, so '1e-3' stays a string)."""
    if hasattr(v, "item") and not isinstance(v, str):  # numpy scalars
        v = v.item()
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    s = str(v).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{s}'"


def _container(v: Any) -> Any:
    return OmegaConf.to_container(v, resolve=True) if OmegaConf.is_config(v) else v


def _journal_settings(path: Path) -> dict[str, Any] | None:
    """The study settings in the sweep's journal (None: no journal yet, or one the optimizer
    will report on)."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        with Journal.open(path) as j:
            return dict(j.settings)
    except JournalError:
        return None


def _next_job_idx(sweep_dir: Path, n_runs: int) -> int:
    """First job number of this session: after the runs and job folders of earlier ones."""
    nums = [int(p.name) for p in sweep_dir.iterdir() if p.is_dir() and p.name.isdigit()]
    return max([n_runs, *(n + 1 for n in nums)])


def _refuse_unknown_keys(options: dict[str, Any]) -> None:
    """ValueError naming the keys of ``options`` that are not the sweeper's: a key added with
    ``+hydra.sweeper.KEY=...`` (Hydra itself refuses an unknown key without ``+``) would
    otherwise be ignored. The keys are those of the config registered as
    ``hydra/sweeper: erahbo`` (read from Hydra's ConfigStore)."""
    from hydra.core.config_store import ConfigStore

    try:
        known = set(ConfigStore.instance().load("hydra/sweeper/erahbo.yaml").node.keys())
    except Exception:  # pragma: no cover - not registered: nothing to compare with
        return
    unknown = sorted(set(options) - known)
    if not unknown:
        return
    near = [m for u in unknown for m in difflib.get_close_matches(u, sorted(known), n=1)]
    hint = f" (did you mean {', '.join(map(repr, near))}?)" if near else ""
    raise ValueError(
        f"hydra.sweeper: unknown key(s) {', '.join(map(repr, unknown))}{hint}; the erahbo "
        f"sweeper's keys are {', '.join(k for k in sorted(known) if not k.startswith('_'))}"
    )
