"""The flags of the strategy's parts, shared by ``erahbo optimize`` and ``erahbo tune``.

One flag per option a part declares for the hosts
(:data:`erahbo.optimizer.parts.HOST_PARAMS`, those with ``cli``): ``--<name>``
(``--<name>/--no-<name>`` for a bool) with the declaration's help, default None (the preset's
value). The values are checked by the library (the part's rule), so the CLI
refuses what the library refuses, with the same message.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from erahbo.optimizer.parts import HOST_PARAMS
from erahbo.validation import Param

__all__ = ["part_options"]

F = TypeVar("F", bound=Callable[..., Any])


def _flag(p: Param) -> Any:
    dash = p.name.replace("_", "-")
    decls = (f"--{dash}/--no-{dash}",) if p.type is bool else ()
    return typer.Option(None, *decls, help=p.help)


def part_options(after: str) -> Callable[[F], F]:
    """Add the parts' flags to a Typer command, after its parameter ``after``.

    Typer reads a command's parameters from ``inspect.signature``: the decorator gives the
    command a ``__signature__`` with one parameter per flag; the command receives them in its
    ``**parts`` (each None when not given).
    """

    def add(command: F) -> F:
        sig = inspect.signature(command, eval_str=True)
        own = [q for q in sig.parameters.values() if q.kind is not q.VAR_KEYWORD]
        at = [q.name for q in own].index(after) + 1
        flags = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                   default=_flag(p), annotation=p.type)
                 for p in HOST_PARAMS if p.cli]
        command.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[*own[:at], *flags, *own[at:]])
        return command

    return add
