"""Reading the user's table and JSON files with messages that name the file and the fix.

pandas and the JSON decoder report a binary or empty file with their own words ("'utf-8'
codec can't decode byte 0xff", "No columns to parse from file", "Parquet magic bytes not
found") and without the file's name; these readers say which file, what is wrong with it and
what it should hold.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["DuplicateKeyError", "check_out_dir", "loads_json", "other_separator",
           "read_json_file", "read_table_file", "reading_table"]

# field separators a CSV read with commas may really use, and their names in messages
_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "'|'"}


def _check_exists(p: Path, what: str, expect: str) -> None:
    if not p.is_file():
        raise ValueError(f"{what} {p} does not exist; give {expect}")
    if os.path.getsize(p) == 0:
        raise ValueError(f"{what} {p} is an empty file (0 bytes); give {expect}")


def read_table_file(path: str | os.PathLike[str], what: str, expect: str) -> pd.DataFrame:
    """Read a ``.csv`` (UTF-8) or ``.parquet`` table, or raise ValueError naming the file.

    Parameters
    ----------
    path : str or path-like
    what : str
        How the message names the file, e.g. ``"space file"``, ``"warm-start file"``.
    expect : str
        What the file should hold, e.g. ``"a CSV with one column per hyperparameter"``.
    """
    p = Path(path)
    _check_exists(p, what, expect)
    with _translated(p, what, expect, (pd.errors.ParserError, ValueError, OSError)):
        df = pd.read_parquet(p) if _is_parquet(p) else pd.read_csv(p)
    if df.shape[1] == 0 or len(df) == 0:
        raise ValueError(f"{what} {p} has no rows; give {expect}")
    if not _is_parquet(p) and (sep := other_separator(df)) is not None:
        raise ValueError(
            f"{what} {p} has one column, {str(df.columns[0])!r}: the file separates its fields "
            f"with {_SEPARATORS[sep]} ({sep!r}), not commas; save it comma-separated "
            f"(pandas: pd.read_csv(path, sep={sep!r}).to_csv(path, index=False)) and give "
            f"{expect}"
        )
    return df


def other_separator(df: pd.DataFrame) -> str | None:
    """The separator (``;``, a tab or ``|``) of a table read as CSV with commas but whose
    fields are separated by it: one column, its name and every value holding it (None: the
    table is not one such)."""
    if df.shape[1] != 1:
        return None
    name = str(df.columns[0])
    for sep in _SEPARATORS:
        if sep in name and all(sep in str(v) for v in df.iloc[:, 0] if not pd.isna(v)):
            return sep
    return None


@contextlib.contextmanager
def reading_table(path: str | os.PathLike[str], what: str, expect: str) -> Iterator[None]:
    """Within the block, a reader's own error about the table file ``path`` (empty, binary,
    not the CSV or Parquet file its suffix says) becomes one ValueError naming the file.

    Only the readers' errors are translated (a plain ``ValueError`` raised inside the block
    passes as it is), so the block may hold code that checks the table's content too.

    Parameters
    ----------
    path : str or path-like
        The file (``.parquet``/``.pq``: Parquet; anything else: CSV).
    what, expect : str
        As in :func:`read_table_file`.
    """
    p = Path(path)
    _check_exists(p, what, expect)
    errors: tuple[type[BaseException], ...] = (pd.errors.ParserError, OSError)
    with contextlib.suppress(ImportError):
        import pyarrow

        errors = (*errors, pyarrow.ArrowException)
    with _translated(p, what, expect, errors):
        yield


def _is_parquet(p: Path) -> bool:
    return p.suffix.lower() in (".parquet", ".pq")


@contextlib.contextmanager
def _translated(p: Path, what: str, expect: str,
                errors: tuple[type[BaseException], ...]) -> Iterator[None]:
    """A table reader's errors about ``p`` (binary, no header, ``errors``) as one ValueError
    naming the file, what is wrong and ``expect``."""
    try:
        yield
    except UnicodeDecodeError:
        raise ValueError(
            f"{what} {p} is not a text CSV file (it holds binary data that is not UTF-8 text); "
            f"give {expect}"
        ) from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{what} {p} holds no table (no header line); give {expect}") from None
    except errors as exc:
        kind = "a Parquet file" if _is_parquet(p) else "a readable CSV file"
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{what} {p} is not {kind} ({first}); give {expect}") from None


class DuplicateKeyError(ValueError):
    """A JSON object gives one key twice (the decoder would keep the last value silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} appears twice in one JSON object (a JSON reader keeps "
                         "the last value and drops the first silently); give each key once")
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def loads_json(text: str) -> Any:
    """``json.loads`` that refuses an object with a key given twice (DuplicateKeyError)."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def read_json_file(path: str | os.PathLike[str], what: str, expect: str) -> Any:
    """Read a JSON file, or raise ValueError naming the file (binary, empty, not JSON, a key
    given twice in one object)."""
    p = Path(path)
    _check_exists(p, what, expect)
    try:
        with open(p, encoding="utf-8") as fh:
            return loads_json(fh.read())
    except DuplicateKeyError as exc:
        raise ValueError(f"{what} {p}: {exc}") from None
    except UnicodeDecodeError:
        raise ValueError(
            f"{what} {p} is not a text JSON file (it holds binary data); give {expect}"
        ) from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} {p} is not valid JSON ({exc}); give {expect}") from None


def check_out_dir(path: str | os.PathLike[str], option: str = "--out") -> None:
    """Refuse an output folder path that names an existing file (before any work is done)."""
    p = Path(path)
    for q in (p, *p.parents):
        if q.exists() and not q.is_dir():
            where = "" if q == p else f" (its parent {q} is a file)"
            raise ValueError(
                f"{option} {p} is an existing file{where}, not a folder; give a folder path "
                "(created if missing), e.g. results/study"
            )
