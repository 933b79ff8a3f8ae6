"""Simulation: cocotb runner on Verilator, trace capture, paper experiments."""
