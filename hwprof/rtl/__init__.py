"""Amaranth components of the profiling blocks (one module per block)."""

from ._params import Checked

__all__ = ["Checked"]
