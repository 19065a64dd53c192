"""The Python examples in the README run as written."""

import importlib.util
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write a journal to the working directory
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:  # later blocks use names defined by earlier ones
        if "import optuna" in block and importlib.util.find_spec("optuna") is None:
            continue  # the Optuna section needs the extra erahbo[optuna]
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "lr" in out
    assert namespace["result"].n_evals == 200
    assert namespace["opt"].recommend() is not None
    assert (tmp_path / "study.db").exists()
    assert set(namespace["result"].history["status"]) <= {"ok", "penalized"}


def test_readme_starts_with_the_two_commands():
    text = README.read_text()
    first = re.search(r"```bash\n(.*?)```", text, flags=re.S).group(1).splitlines()
    assert first[0].startswith("make demo")
    assert first[1].startswith("make test")
    ci = (README.parent / ".ci" / "run").read_text()
    assert "make test" in ci


def test_api_reference_is_current():
    """docs/api.md is rendered from the public names and docstrings: it must match the code."""
    from erahbo._apidoc import MODULES, render

    text = render()
    api = README.parent / "docs" / "api.md"
    assert api.read_text() == text, "docs/api.md is stale: run `python -m erahbo._apidoc`"
    # every public name of the package appears, with a signature for the callables
    import erahbo

    for name in erahbo.__all__:
        if not name.startswith("_"):
            assert f"`erahbo.{name}`" in text, name
    assert "Optimizer(\n    space: Any,\n    method: str = 'erahbo'," in text
    assert "0x" not in text  # no memory addresses: the file is the same on every machine
    assert all(f"## `{m}`" in text for m in MODULES)
