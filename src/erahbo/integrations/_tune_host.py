"""What :class:`~erahbo.integrations.ray_tune.ERAHBOSearch` needs to know about its Tune host.

* :func:`host_scheduler` finds the trial scheduler of the running experiment, so that a
  scheduler that stops or changes trials early is refused before the first trial runs;
* :func:`ran_to_end` tells a run that ended on its own from one cut by a scheduler;
* :func:`refuse_repeater` refuses Tune's ``Repeater`` around the searcher (it would train
  every seed the searcher asks for several times and tell it only their mean);
* :func:`category_choices` keeps a ``tune.choice``'s values in erahbo's space where erahbo's
  categorical can hold them (the study's tables then show them), else its indices;
* :func:`erahbo_point` and :func:`warm_runs` turn Tune's ``points_to_evaluate`` /
  ``evaluated_rewards`` into erahbo's initial design and warm-start records, and
  :func:`grid_points` a ``ResultGrid`` into evaluated points.

Tune gives a searcher no reference to its scheduler: ``set_search_properties`` receives the
metric, the mode, the ``param_space`` and the experiment's public spec (``stop``,
``num_samples``, ``time_budget_s``), and a result that a scheduler stopped carries
``done=True`` like the last result of a trial that ended on its own. What does differ: Tune
calls ``on_trial_result`` only for results after which the trial goes on, so the last result
of a trial that ended on its own was seen there, while the result on which a scheduler
stopped a trial was not.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from ray.tune.search.sample import Categorical, Domain

# a trial's last result was never passed to on_trial_result
NOT_SEEN = object()


def host_scheduler() -> Any | None:
    """The trial scheduler of the Tune experiment calling the searcher, or None.

    ``tune.run`` creates the scheduler (``FIFOScheduler`` when none is given) before it sets
    the searcher's properties, and holds it while it asks for trials: it is found among the
    locals of Tune's own frames on the call stack. Best effort (Tune has no public way): None
    when no Tune frame holds one (the searcher driven by hand, or a future Tune).
    """
    from ray.tune.schedulers import TrialScheduler

    frame = sys._getframe(1)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("ray.tune."):
            for value in frame.f_locals.values():
                if isinstance(value, TrialScheduler):
                    return value
        frame = frame.f_back
    return None


def refuse_scheduler(scheduler: Any) -> None:
    """Raise ValueError unless ``scheduler`` is None or Tune's plain ``FIFOScheduler``."""
    from ray.tune.schedulers import FIFOScheduler

    if scheduler is None or type(scheduler) is FIFOScheduler:
        return
    name = type(scheduler).__name__
    raise ValueError(
        f"ERAHBOSearch cannot run under the trial scheduler {name} (TuneConfig(scheduler=...)): "
        "a scheduler that stops, pauses or mutates trials (ASHA, HyperBand, "
        "MedianStoppingRule, PBT, ...) cuts training runs whose final return ERAHBO needs, "
        "and their partial returns would count as final. ERAHBO decides itself how many "
        "seeds a configuration gets and drops the hopeless ones between runs. Remove "
        "scheduler= (Tune's default FIFOScheduler); a training length goes in "
        "RunConfig(stop={...}) or in the trainable."
    )


def refuse_repeater(searcher: Any) -> None:
    """Raise ValueError when Tune's ``Repeater`` wraps ``searcher`` (found, as the scheduler
    is, among the locals of Tune's frames on the call stack)."""
    from ray.tune.search import Repeater

    frame = sys._getframe(1)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("ray.tune."):
            for value in frame.f_locals.values():
                if isinstance(value, Repeater) and _wraps(value, searcher):
                    raise ValueError(
                        f"ERAHBOSearch cannot run inside Repeater(searcher, {value.repeat}): "
                        f"Repeater trains every seed ERAHBOSearch asks for {value.repeat} "
                        "times and tells it only their mean, so each seed would be trained "
                        f"{value.repeat} times and the variance between seeds, which ERAHBO "
                        "models, would be lost. ERAHBOSearch chooses the seeds itself (one "
                        "Tune trial = one seed): pass it as search_alg directly (in "
                        "ConcurrencyLimiter if you like) and set k_min / k_max (or k) for the "
                        "seeds per configuration."
                    )
        frame = frame.f_back


def _wraps(wrapper: Any, searcher: Any) -> bool:
    """Whether ``searcher`` is inside ``wrapper`` (Tune's wrappers keep it as ``.searcher``)."""
    inner, depth = getattr(wrapper, "searcher", None), 0
    while inner is not None and depth < 16:
        if inner is searcher:
            return True
        inner, depth = getattr(inner, "searcher", None), depth + 1
    return False


def category_choices(name: str, categories: list[Any]) -> list[Any] | None:
    """The choices of a ``tune.choice`` as erahbo's categorical holds them, or None where it
    cannot (None, a list, a dict, ... among them: the space then holds their indices).

    The encoding is the same either way (one-hot in the order of the choices)."""
    from erahbo.space.kinds import make_hp

    try:
        hp = make_hp(name, "cat", choices=list(categories))
    except (TypeError, ValueError):
        return None
    return list(hp.choices)


def grid_points(results: Any, metric: str) -> list[dict[str, Any]]:
    """``add_evaluated_point`` keywords of each Tune result of a ``ResultGrid`` (or of a list
    of ``ray.tune.Result``): its config, its last ``metric`` (None when missing), whether it
    errored, and whether it was stopped before its end (``done`` False: pruned)."""
    points = []
    for r in results:
        metrics = dict(getattr(r, "metrics", None) or {})
        error = getattr(r, "error", None) is not None
        points.append({"parameters": dict(r.config or {}), "value": metrics.get(metric),
                       "error": error or metric not in metrics,
                       "pruned": not error and metrics.get("done") is False})
    return points


def ran_to_end(result: dict[str, Any], seen: Any, stop: Any, scheduler_known: bool) -> bool:
    """True when ``result`` (a trial's last, ``done``) is the final result of its run.

    Parameters
    ----------
    result : dict
        The flattened last result given to ``on_trial_complete`` (Tune adds
        ``training_iteration`` to every result).
    seen : Any
        The ``training_iteration`` of the last result given to ``on_trial_result`` for this
        trial, or :data:`NOT_SEEN`.
    stop : dict or Any
        The experiment's ``stop`` (from ``set_search_properties``): a dict of criteria is a
        training length.
    scheduler_known : bool
        The experiment's scheduler was found and is a plain FIFOScheduler, which stops no
        trial: a trial stopped on an unseen result met ``stop`` or a Stopper, or its
        trainable returned ``done``: the run's own end.
    """
    if scheduler_known or "training_iteration" not in result:
        return True  # (no iteration: not a result of Tune's controller, nothing to check)
    if seen is not NOT_SEEN and seen == result.get("training_iteration"):
        return True  # Tune let this result go on: the trainable ended by itself after it
    if isinstance(stop, dict):
        for key, limit in stop.items():
            v = result.get(key)
            if isinstance(v, int | float) and isinstance(limit, int | float) and v >= limit:
                return True  # the experiment's own training length
    return False


def stop_message(trial_id: str, iteration: Any, metric: str, value: Any) -> str:
    """Why a run cut by a scheduler (or a Stopper) is a failed run, with the fix."""
    return (
        f"stopped early at training_iteration {iteration} by the trial scheduler (or a "
        f"Stopper): its last {metric} ({value}) is a partial return, not used. ERAHBO needs "
        "each run's final return: remove TuneConfig(scheduler=...) (Tune's default "
        f"FIFOScheduler) and give a training length in RunConfig(stop={{...}}) [trial {trial_id}]"
    )


# ---------------------------------------------------------------------- points to evaluate
def _flat(config: dict[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple, Any]:
    out: dict[tuple, Any] = {}
    for key, v in config.items():
        path = (*prefix, str(key))
        if isinstance(v, dict):
            out.update(_flat(v, path))
        else:
            out[path] = v
    return out


def category_index(d: Categorical, v: Any, name: str) -> int:
    """Position of ``v`` among the choices of ``d`` (type and value first, then value)."""
    same = [i for i, c in enumerate(d.categories) if c == v and type(c) is type(v)]
    same = same or [i for i, c in enumerate(d.categories) if c == v]
    if not same:
        raise ValueError(f"{name}={v!r} is not one of its choices {list(d.categories)}")
    return same[0]


def erahbo_point(point: dict[str, Any], domains: dict[tuple, Domain] | None,
                 constants: set[tuple], seed_key: str, where: str,
                 by_index: set[tuple] | None = None) -> tuple[dict, int | None]:
    """A Tune config (nested, real values) as an erahbo config, and its seed (or None).

    ``domains`` None: the searcher was given an erahbo space; the point is erahbo's flat
    config already (its seed key taken out). ``by_index``: the categorical parameters the
    space holds by index (None: every categorical; the others hold their values).
    """
    if not isinstance(point, dict):
        raise ValueError(f"{where} must be a dict of parameter values, got {point!r}")
    seed = point.get(seed_key)
    if domains is None:
        cfg = {k: v for k, v in point.items() if k != seed_key}
        return cfg, None if seed is None else int(seed)
    flat = _flat(point)
    seed = flat.pop((seed_key,), None)
    cfg: dict[str, Any] = {}
    for path, v in flat.items():
        name = "/".join(path)
        d = domains.get(path)
        if d is None:
            if path in constants:
                continue  # a constant of the param_space
            raise ValueError(f"{where}: {name!r} is not a parameter of the param_space "
                             f"(its parameters: {sorted('/'.join(p) for p in domains)})")
        try:
            if isinstance(d, Categorical):
                i = category_index(d, v, name)
                v = i if by_index is None or path in by_index else d.categories[i]
            cfg[name] = v
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    missing = sorted("/".join(p) for p in domains if "/".join(p) not in cfg)
    if missing:
        raise ValueError(f"{where}: no value for {missing}; give every parameter of the "
                         "param_space")
    return cfg, None if seed is None else int(seed)


def warm_runs(points: list[tuple[dict, int | None]], rewards: list[Any], sign: float,
              min_runs: int = 2) -> list[dict[str, Any]]:
    """Warm-start records of evaluated points: equal configurations pooled (one run each, or
    a list of per-seed rewards); ``sign`` -1 negates a metric that is minimized; a point needs
    ``min_runs`` runs (2: its variance between seeds; 1 with one seed first,
    :mod:`erahbo.gp.one_seed`)."""
    groups: dict[str, dict[str, Any]] = {}
    for i, ((cfg, seed), reward) in enumerate(zip(points, rewards, strict=True)):
        vals = list(reward) if isinstance(reward, list | tuple) else [reward]
        if seed is not None and len(vals) != 1:
            raise ValueError(f"evaluated_rewards[{i}]: one reward for a point with a seed, "
                             f"got {len(vals)}")
        key = repr(sorted(cfg.items()))
        g = groups.setdefault(key, {"config": cfg, "returns": [], "seeds": []})
        for v in vals:
            x = None if v is None else float(v)
            g["returns"].append(None if x is None or not math.isfinite(x) else sign * x)
            g["seeds"].append(seed)
    records = []
    for g in groups.values():
        if len(g["returns"]) < min_runs:
            raise ValueError(
                f"evaluated point {g['config']} has 1 reward; ERAHBO needs at least 2 runs of "
                "a configuration (its variance between seeds): repeat the point once per "
                "seed (with its seed key), or give a list of per-seed rewards"
            )
        seeds = g["seeds"] if all(s is not None for s in g["seeds"]) else None
        records.append({"config": g["config"], "returns": g["returns"], "seeds": seeds})
    return records
