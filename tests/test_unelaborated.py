"""tests/unelaborated.py: components dropped unelaborated inside the block do not warn,
and the same drop outside it does (the warning the helper stands in for is real)."""

from __future__ import annotations

import gc
import warnings

import pytest
from amaranth.hdl import Fragment, UnusedElaboratable

from hwprof.catalog import get_top
from tests.unelaborated import unelaborated


def _elaborate_one():
    """Amaranth warns of unused components only once a process has elaborated one (before,
    a crash is the likelier cause): as any test that builds Verilog does."""
    Fragment.get(get_top("lfsr").construct({}), None)


def test_a_dropped_component_warns_without_the_helper():
    _elaborate_one()
    with pytest.warns(UnusedElaboratable, match="created but never used"):
        get_top("brr").construct({})
        gc.collect()


def test_a_component_dropped_inside_the_block_warns_neither_there_nor_later():
    _elaborate_one()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with unelaborated():
            get_top("multihash").construct({"counters": 64, "accumulator": 8})
        gc.collect()  # nothing of it is left to collect (and warn) after the block
    assert not [w for w in seen if issubclass(w.category, UnusedElaboratable)]
