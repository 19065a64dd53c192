"""The sweeper's ``search_space`` key -> :class:`erahbo.SearchSpace`.

Accepted forms
--------------
* erahbo's dict spec, lists for tuples: ``{lr: [log, 1e-5, 0.1], act: [cat, [tanh, relu]]}``
  (a list whose first element is not a type name is a categorical; a dict entry
  ``{type: float, lower, upper}`` works too);
* Hypersweeper's/ARLBench's ConfigSpace mapping: ``{hyperparameters: {lr: {type:
  uniform_float, lower: 1e-5, upper: 0.1, log: true}, ...}}`` (``conditions`` as in
  ConfigSpace's JSON);
* a path to a file: ``.json`` (ConfigSpace JSON, erahbo's :meth:`SearchSpace.to_json`, or the
  dict spec) or ``.yaml``/``.yml`` (ConfigSpace YAML, or any dict form above).

Hyperparameter names are the task config keys the jobs override (``hp_config.learning_rate``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from erahbo import SearchSpace
from erahbo._files import loads_json

CONFIGSPACE_TYPES = frozenset(
    "uniform_float uniform_int normal_float normal_int beta_float beta_int categorical ordinal "
    "constant unparametrized".split()
)


def load_search_space(spec: Any, *, base: Path | None = None) -> SearchSpace:
    """Read the ``search_space`` key (plain Python containers, or a path); raises ValueError."""
    where = "hydra.sweeper.search_space"
    if spec is None:
        raise ValueError(f"{where} is not set: give erahbo's dict spec ({{lr: [log, 1e-5, 0.1]}})"
                         ", Hypersweeper's {hyperparameters: {...}} mapping, or a path to a "
                         "ConfigSpace JSON/YAML file")
    if isinstance(spec, str):
        return _from_file(Path(spec) if base is None or Path(spec).is_absolute()
                          else base / spec)
    if not isinstance(spec, dict) or not spec:
        raise ValueError(f"{where}: expected a mapping or a file path, got {spec!r}")
    try:
        return _from_dict(spec)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def _from_file(path: Path) -> SearchSpace:
    if not path.is_file():
        raise ValueError(f"hydra.sweeper.search_space: file {path} does not exist")
    text = path.read_text()
    try:
        if path.suffix.lower() == ".json":
            d = loads_json(text)  # a key given twice is refused, not dropped
        elif path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            d = yaml.safe_load(text)
        else:
            raise ValueError(f"unknown file type {path.suffix!r}; use .json, .yaml or .yml")
        if not isinstance(d, dict):
            raise ValueError(f"expected a mapping, got {type(d).__name__}")
        return _from_dict(d)
    except Exception as exc:  # JSON/YAML syntax errors, bad specs
        raise ValueError(f"hydra.sweeper.search_space: {path}: {exc}") from None


def _from_dict(d: dict[str, Any]) -> SearchSpace:
    if any(k in d for k in ("python_module_version", "format_version", "json_format_version")):
        return _configspace(d)
    hps = d.get("hyperparameters")
    if isinstance(hps, dict):  # Hypersweeper/ARLBench: {name: {type: uniform_float, ...}}
        items = [{**dict(v or {}), "name": k} for k, v in hps.items()]
        return _configspace({**d, "hyperparameters": items})
    if isinstance(hps, list):
        if any(isinstance(h, dict) and h.get("type") in CONFIGSPACE_TYPES for h in hps):
            return _configspace(d)
        return SearchSpace(d)  # erahbo's own JSON (SearchSpace.to_json)
    return SearchSpace(d)  # the dict spec; a list that starts with a type is that type


def _configspace(d: dict[str, Any]) -> SearchSpace:
    from ConfigSpace import ConfigurationSpace

    d = dict(d)
    items = []
    for h in d.get("hyperparameters", []):
        h = dict(h)
        if "default" in h and "default_value" not in h:  # Hypersweeper's spelling
            h["default_value"] = h.pop("default")
        items.append(h)
    d["hyperparameters"] = items
    d.setdefault("conditions", [])
    d.setdefault("forbiddens", [])
    d.pop("seed", None)
    return SearchSpace(ConfigurationSpace.from_serialized_dict(d))
