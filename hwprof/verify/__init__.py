"""Verification flows over the catalog: formal proofs, mutation coverage, whole-trace
checks and the cocotb regression."""
