"""Read a ``ConfigSpace.ConfigurationSpace`` into erahbo hyperparameters (private).

Supported: ``UniformFloatHyperparameter`` (log or linear), ``UniformIntegerHyperparameter``
(log or linear), ``CategoricalHyperparameter`` (weights ignored), ``OrdinalHyperparameter``,
``Constant`` and, as conditions, ``EqualsCondition``, ``InCondition``,
``NotEqualsCondition`` (categorical parents), ``GreaterThanCondition``, ``LessThanCondition``
and ``AndConjunction`` of these (as in ARLBench's DQN space, where ``tau`` and
``target_update_interval`` are active only when ``use_target_network`` is True).
``OrConjunction``, forbidden clauses and the normal/beta distributions are rejected with a
clear message. ConfigSpace is imported lazily.
"""

from __future__ import annotations

from typing import Any

from erahbo.space.kinds import HP, Clause, make_hp, native


def is_configspace(obj: Any) -> bool:
    """True if ``obj`` looks like a ``ConfigSpace.ConfigurationSpace``."""
    return type(obj).__name__ == "ConfigurationSpace" and "ConfigSpace" in type(obj).__module__


def _hp_of(h: Any) -> HP:
    import ConfigSpace as CS

    name = h.name
    default = native(getattr(h, "default_value", None))
    if isinstance(h, CS.UniformFloatHyperparameter):
        kind = "log" if h.log else "float"
        return make_hp(name, kind, lower=h.lower, upper=h.upper, default=default)
    if isinstance(h, CS.UniformIntegerHyperparameter):
        kind = "logint" if h.log else "int"
        return make_hp(name, kind, lower=h.lower, upper=h.upper, default=default)
    if isinstance(h, CS.CategoricalHyperparameter):
        return make_hp(name, "cat", choices=list(h.choices), default=default)
    if isinstance(h, CS.OrdinalHyperparameter):
        return make_hp(name, "ord", choices=list(h.sequence), default=default)
    if isinstance(h, CS.Constant):
        return make_hp(name, "const", choices=native(h.value))
    raise TypeError(
        f"hyperparameter {name!r}: ConfigSpace type {type(h).__name__} is not supported; "
        "use a uniform float/integer, categorical, ordinal or constant hyperparameter"
    )


def _clauses(cond: Any, hps: dict[str, HP]) -> tuple[str, list[Clause]]:
    import ConfigSpace as CS

    if isinstance(cond, CS.AndConjunction):
        child, out = "", []
        for c in cond.components:
            child, sub = _clauses(c, hps)
            out.extend(sub)
        return child, out
    if isinstance(cond, CS.OrConjunction) or not hasattr(cond, "parent"):
        child = getattr(getattr(cond, "child", None), "name", "?")
        raise ValueError(
            f"the condition on {child!r} is an {type(cond).__name__} ({cond}), which SearchSpace "
            "does not support: a hyperparameter is active when all its conditions hold (AND). "
            "For 'parent in {a, b}' use one InCondition(child, parent, [a, b]); otherwise pass "
            "a finite candidate table (DataFrame) of the allowed configurations"
        )
    child, parent = cond.child.name, cond.parent.name
    if isinstance(cond, CS.EqualsCondition):
        return child, [Clause(parent, "in", (native(cond.value),))]
    if isinstance(cond, CS.InCondition):
        return child, [Clause(parent, "in", tuple(native(v) for v in cond.values))]
    if isinstance(cond, CS.NotEqualsCondition) and hps[parent].is_index:
        rest = tuple(c for c in hps[parent].choices if c != native(cond.value))
        return child, [Clause(parent, "in", rest)]
    if isinstance(cond, CS.GreaterThanCondition):
        return child, [Clause(parent, ">", (native(cond.value),))]
    if isinstance(cond, CS.LessThanCondition):
        return child, [Clause(parent, "<", (native(cond.value),))]
    raise TypeError(
        f"condition {cond!r} ({type(cond).__name__}) is not supported; use Equals, In, "
        "NotEquals (categorical parent), GreaterThan, LessThan or an AndConjunction of them"
    )


def from_configspace(cs: Any) -> list[HP]:
    """Hyperparameters of ``cs`` in ConfigSpace's order, with their conditions."""
    # ConfigSpace 1.x API first, 0.x (get_*) as a fallback
    forbidden = getattr(cs, "forbidden_clauses", None)
    if forbidden is None:
        forbidden = cs.get_forbiddens()
    if list(forbidden):
        raise ValueError(
            "ConfigurationSpace has forbidden clauses, which SearchSpace does not support; "
            "remove them or pass a finite candidate table (DataFrame) of allowed configurations"
        )
    params = cs.values() if hasattr(cs, "values") else cs.get_hyperparameters()
    conditions = cs.conditions if hasattr(cs, "conditions") else cs.get_conditions()
    hps = {h.name: _hp_of(h) for h in params}
    for cond in conditions:
        child, clauses = _clauses(cond, hps)
        hps[child].conditions = hps[child].conditions + tuple(clauses)
    return list(hps.values())
