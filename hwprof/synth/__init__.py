"""Verilog generation and the yosys area flow."""

from .area import SynthError, synthesize
from .verilog import to_verilog, write_atomically

__all__ = ["SynthError", "synthesize", "to_verilog", "write_atomically"]
