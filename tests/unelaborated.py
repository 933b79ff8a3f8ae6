"""Components that a test builds and drops without elaborating them.

Amaranth warns (:class:`amaranth.hdl.UnusedElaboratable`) when a component that was
never elaborated is collected, and the test suite turns warnings into errors. A test
that reads only a component's signature, or a fake flow that never builds it, wraps
that work in :func:`unelaborated`: a public warnings filter for that category, and a
collection before the block ends, so the components dropped inside it (often in
reference cycles, collected at no fixed time) are collected while the filter holds.
"""

from __future__ import annotations

import gc
import warnings
from contextlib import contextmanager

from amaranth.hdl import UnusedElaboratable

__all__ = ["unelaborated"]


@contextmanager
def unelaborated():
    """Inside the block, components dropped unelaborated do not warn.

    Drop every reference inside the block (use the component in an expression, not in
    a variable that outlives it): one still held after the block warns when it is
    collected, as any other.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        try:
            yield
        finally:
            gc.collect()
