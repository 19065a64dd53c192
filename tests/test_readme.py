"""The Python examples in the README run as written."""

import importlib.util
import re
from pathlib import Path

from conftest import spent_budget

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples_run(capsys, tmp_path, monkeypatch):
    """Each example runs alone, in a fresh namespace, as a reader pastes it, and leaves
    nothing in the working folder (the journal example writes to the temporary folder)."""
    import tempfile

    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir(), tmp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2
    spaces = []
    for block in blocks:
        if "import optuna" in block and importlib.util.find_spec("optuna") is None:
            continue  # the Optuna section needs the extra erahbo[optuna]
        namespace: dict = {}
        exec(compile(block, str(README), "exec"), namespace)
        spaces.append(namespace)
    out = capsys.readouterr().out
    assert "lr" in out
    results = [ns["result"] for ns in spaces if "result" in ns]
    assert results and all(spent_budget(r, 200) for r in results)
    opts = [ns["opt"] for ns in spaces if "opt" in ns]
    assert len(opts) >= 2 and all(o.recommend() is not None for o in opts)
    assert (tmp / "erahbo_readme.db").exists() and list(work.iterdir()) == []
    assert all(set(r.history["status"]) <= {"ok", "penalized"} for r in results)


def test_readme_starts_with_the_two_commands():
    text = README.read_text()
    first = re.search(r"```bash\n(.*?)```", text, flags=re.S).group(1).splitlines()
    assert first[0].startswith("make demo")
    assert first[1].startswith("make test")
    ci = (README.parent / ".ci" / "run").read_text()
    assert "make test" in ci


def test_api_reference_is_current():
    """docs/api.md is rendered from the public names and docstrings: it must match the code."""
    spec = importlib.util.spec_from_file_location("apidoc", README.parent / "scripts" / "apidoc.py")
    apidoc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(apidoc)
    MODULES, render = apidoc.MODULES, apidoc.render

    text = render()
    api = README.parent / "docs" / "api.md"
    assert api.read_text() == text, "docs/api.md is stale: run `python scripts/apidoc.py`"
    # every public name of the package appears, with a signature for the callables
    import erahbo

    for name in erahbo.__all__:
        if not name.startswith("_"):
            assert f"`erahbo.{name}`" in text, name
    assert "Optimizer(\n    space: Any,\n    method: str = 'erahbo'," in text
    assert "0x" not in text  # no memory addresses: the file is the same on every machine
    assert all(f"## `{m}`" in text for m in MODULES)


def test_readme_space_json_is_what_optimize_reads(tmp_path):
    from erahbo.study.rebuild import load_space

    blocks = re.findall(r"```json\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README shows the --space JSON format"
    path = tmp_path / "space.json"
    path.write_text(blocks[0])
    space = load_space(path)
    assert space.names == ["lr", "gamma", "batch", "act"]


def _cli_lines() -> list[str]:
    """The README's `erahbo ...` command lines, continuation lines joined, comments dropped."""
    lines, cur = [], ""
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        for raw in block.splitlines():
            text = raw.split("  #")[0].strip()
            if text.startswith("#"):
                continue
            cur = f"{cur} {text.rstrip(chr(92))}" if cur else text.rstrip(chr(92))
            if not text.endswith(chr(92)):
                if cur.strip().startswith("erahbo"):
                    lines.append(cur.strip())
                cur = ""
    return lines


def test_readme_cli_lines_name_real_commands_and_options():
    """Every `erahbo ...` line of the README names an existing command and its options."""
    import typer.main

    from erahbo.cli import app

    root = typer.main.get_command(app)
    lines = _cli_lines()
    assert any(ln.startswith("erahbo status") for ln in lines)
    assert any("--budget" in ln and ln.startswith("erahbo resume") for ln in lines)
    for line in lines:
        words = line.split()[1:]
        cmd = root
        while words and words[0] in getattr(cmd, "commands", {}):
            cmd = cmd.commands[words.pop(0)]
        known = {"--help"} | {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        for w in (w.strip("[]") for w in words):
            if w.startswith("--"):
                assert w.split("=")[0] in known, f"{line}: {w}"


def test_submodules_are_attributes_after_a_plain_import():
    import subprocess
    import sys

    code = ("import erahbo, sys; assert 'erahbo.diagnostics' not in sys.modules; "
            "print(erahbo.diagnostics.diagnose.__name__, erahbo.recommendation.__name__)")
    src = str(README.parent / "src")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": src, "PATH": ""}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["diagnose", "erahbo.recommendation"]
