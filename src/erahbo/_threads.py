"""One BLAS thread for the optimizer's small matrices.

The GP matrices of a BO round are at most a few hundred rows: a second BLAS thread barely
speeds them up, and on a machine whose cores are busy training (the normal case: the workers
run the RL training) idle-spinning BLAS threads slow every round down and steal time from the
workers. Measured on 2 busy cores, ERAHBO ask + tell at n = 50 evaluated configurations: mean
103 ms with OpenBLAS's default 2 threads, 1 ms with one. The limit is set with threadpoolctl
for the duration of the call only (8 microseconds with a cached controller), so the caller's
own BLAS work keeps its threads.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["one_blas_thread", "single_blas_thread"]

F = TypeVar("F", bound=Callable[..., Any])
_controller: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with BLAS limited to one thread (previous limits restored after)."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()  # after numpy/scipy loaded their BLAS
    with _controller.limit(limits=1, user_api="blas"):
        yield


def single_blas_thread(fn: F) -> F:
    """Decorator form of :func:`one_blas_thread`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with one_blas_thread():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
