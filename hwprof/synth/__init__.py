"""Verilog generation and the yosys area flow."""

from .area import SynthError, cached_synthesize, synthesize
from .verilog import to_verilog, write_atomically

__all__ = ["SynthError", "cached_synthesize", "synthesize", "to_verilog", "write_atomically"]
