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

__all__ = ["check_out_dir", "read_json_file", "read_table_file", "reading_table"]


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
    return df


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


def read_json_file(path: str | os.PathLike[str], what: str, expect: str) -> Any:
    """Read a JSON file, or raise ValueError naming the file (binary, empty, not JSON)."""
    p = Path(path)
    _check_exists(p, what, expect)
    try:
        with open(p, encoding="utf-8") as fh:
            return json.load(fh)
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
