"""Render ``docs/api.md``, the API reference, from the public names and their docstrings.

    python scripts/apidoc.py            # rewrite docs/api.md
    python scripts/apidoc.py --check    # exit 1 if docs/api.md is stale

A documentation tool of the repository, not part of the installed package.

Every module in :data:`MODULES` contributes the names in its ``__all__``: functions and
classes with their signature and the first paragraph of their docstring (classes also list
their public methods and properties), constants with their value. A name re-exported by a
later module points back to where it was documented. The section of ``erahbo.optimizer`` ends
with the table of the strategy parts' options, from their declarations
(:data:`erahbo.optimizer.parts.PARAMS`). ``tests/test_readme.py`` checks that
the file is current, so the reference cannot drift from the code.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

MODULES = (
    "erahbo",
    "erahbo.space",
    "erahbo.objectives",
    "erahbo.objectives.synthetic",
    "erahbo.objectives.surrogate",
    "erahbo.objectives.known_truth",
    "erahbo.optimizer",
    "erahbo.study",
    "erahbo.gp.bounds",
    "erahbo.risk",
    "erahbo.optimizer.replication",
    "erahbo.optimizer.host",
    "erahbo.optimizer.beta_stop",
    "erahbo.policies",
    "erahbo.gp",
    "erahbo.gp.round",
    "erahbo.gp.kernels",
    "erahbo.gp.exact",
    "erahbo.gp.prior",
    "erahbo.gp.fit",
    "erahbo.validation",
    "erahbo.optimizer.failure",
    "erahbo.optimizer.outcomes",
    "erahbo.runtime.failures",
    "erahbo.runtime.failure_limit",
    "erahbo.runtime.evaluate",
    "erahbo.diagnostics",
    "erahbo.recommendation",
    "erahbo.study_status",
    "erahbo.runtime.journal",
    "erahbo.runtime.replay",
    "erahbo.runtime.executors",
    "erahbo.datasets",
    "erahbo.datasets.loaders",
    "erahbo.datasets.long_format",
    "erahbo.datasets.curves",
    "erahbo.datasets.run_rows",
    "erahbo.datasets.synth",
    "erahbo.datasets.groundtruth",
    "erahbo.experiments",
    "erahbo.experiments.continuous",
    "erahbo.experiments.bts_red",
    "erahbo.experiments.partial_replay",
    "erahbo.experiments.mf_peers",
    "erahbo.analysis",
    "erahbo.arlbench",
)

_WIDTH = 92
HEADER = """# API reference

Generated from the docstrings by `python scripts/apidoc.py` (a test fails when this file is
stale). One section per module: its public names (`__all__`) with signatures and the first
paragraph of their docstrings; `help(erahbo.Optimizer)` and friends have the full text
(parameters, returns, examples). The concepts behind the names: `docs/method.md`.
"""


def _summary(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    para = doc.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in para.splitlines())


def _signature(name: str, obj: Any) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return f"{name}(...)"
    params = [_param(p) for p in sig.parameters.values()]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    ret = "" if inspect.isclass(obj) or sig.return_annotation is inspect.Signature.empty else (
        f" -> {_annotation(sig.return_annotation)}")
    one = f"{name}({', '.join(params)}){ret}"
    if len(one) <= _WIDTH:
        return one
    return f"{name}(\n" + "".join(f"    {p},\n" for p in params) + f"){ret}"


def _annotation(ann: Any) -> str:
    # postponed annotations (``from __future__ import annotations``) are strings already
    return ann if isinstance(ann, str) else inspect.formatannotation(ann)


def _param(p: inspect.Parameter) -> str:
    text = p.name
    if p.kind is p.VAR_POSITIONAL:
        text = "*" + text
    elif p.kind is p.VAR_KEYWORD:
        text = "**" + text
    if p.annotation is not p.empty:
        text += f": {_annotation(p.annotation)}"
    if p.default is not p.empty:
        text += f" = {p.default!r}" if p.annotation is not p.empty else f"={p.default!r}"
    return text


def _members(cls: type) -> list[str]:
    lines = []
    for attr, value in cls.__dict__.items():
        if attr.startswith("_"):
            continue
        if isinstance(value, property):
            kind, target = "property", value.fget
        elif isinstance(value, (staticmethod, classmethod)):
            kind, target = "method", value.__func__
        elif inspect.isfunction(value):
            kind, target = "method", value
        else:
            continue
        call = attr if kind == "property" else _signature(attr, target).split("\n")[0]
        if kind == "method" and call.endswith("("):
            call = f"{attr}(...)"
        summary = _summary(target)
        lines.append(f"- `{call}`" + (f": {summary}" if summary else ""))
    return lines


def _value(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


def _parts_table() -> list[str]:
    """The options of the strategy's parts, one row each, from their declarations."""
    from erahbo.optimizer import parts

    out = ["### Options of the strategy's parts\n",
           "Declared once by each part (`erahbo.validation.Param` in the part's `PARAMS`; "
           "collected in `erahbo.optimizer.parts.PARAMS`): each is an `erahbo.Options` field, "
           "a key of the Hydra sweeper, a keyword of the Optuna sampler and (*flag*) of "
           "`erahbo optimize` and `erahbo tune`. *erahbo*: the value under `preset=\"default\"` "
           "for ERAHBO; *paper*: under `preset=\"paper\"` and for the fixed-k methods "
           "(*resolved*: computed from the other options, see the help); *journal without "
           "it*: what a journal that lacks the setting means; *method name*: the benchmark's "
           "`erahbo-<code><value>`.\n",
           "| option | part | type | erahbo | paper | journal without it | flag | method name "
           "| help |",
           "|---|---|---|---|---|---|---|---|---|"]
    for part in parts.PARTS:
        for p in part.PARAMS:
            erahbo, paper = (("resolved",) * 2 if p.resolve is not None
                             else (f"`{p.default!r}`", f"`{p.paper!r}`"))
            code = f"`erahbo-{p.form}`" if p.short else ""
            flag = f"`--{p.name.replace('_', '-')}`" if p.cli else ""
            out.append(f"| `{p.name}` | `{part.__name__.rsplit('.', 1)[1]}` | "
                       f"{p.type.__name__} | {erahbo} | {paper} | `{p.absent!r}` | {flag} | "
                       f"{code} | {p.help} |")
    return [*out, ""]


def render() -> str:
    """The text of ``docs/api.md`` for the code as it is imported now."""
    out = [HEADER]
    # GitHub heading anchors: lower case, punctuation (the dots and backticks) dropped
    out.append("Modules: " + " · ".join(f"[`{m}`](#{m.replace('.', '')})" for m in MODULES)
               + "\n")
    seen: dict[int, str] = {}
    for modname in MODULES:
        mod = importlib.import_module(modname)
        out.append(f"## `{modname}`\n")
        summary = _summary(mod)
        if summary:
            out.append(summary + "\n")
        for name in mod.__all__:
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            qual = f"{modname}.{name}"
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) in seen:
                out.append(f"- `{name}`: see `{seen[id(obj)]}`.\n")
                continue
            if inspect.isclass(obj) or inspect.isfunction(obj):
                seen[id(obj)] = qual
                kind = "class" if inspect.isclass(obj) else "function"
                out.append(f"### `{qual}` ({kind})\n")
                out.append("```python\n" + _signature(name, obj) + "\n```\n")
                summary = _summary(obj)
                if summary:
                    out.append(summary + "\n")
                if inspect.isclass(obj):
                    members = _members(obj)
                    if members:
                        out.append("\n".join(members) + "\n")
            else:
                out.append(f"- `{name} = {_value(obj)}`\n")
        if modname == "erahbo.optimizer":
            out.append("\n".join(_parts_table()))
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write ``docs/api.md`` next to the package's repository root (``--check``: compare)."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(__file__).resolve().parents[1] / "docs" / "api.md"
    text = render()
    if "--check" in args:
        if not path.exists() or path.read_text() != text:
            sys.stderr.write(f"{path} is stale: run `python scripts/apidoc.py`\n")
            return 1
        return 0
    path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
