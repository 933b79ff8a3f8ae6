"""Formal proofs of block properties with yosys ``sat`` (``hwprof prove``); see
docs/verification.md."""

from .engine import FormalError, ProofResult, Property, inject, run_property
from .properties import FORMAL_PARAMS, PROPERTIES, properties_for
from .prove import formal_param_sets, prove_top, prove_tops

__all__ = ["FormalError", "ProofResult", "Property", "inject", "run_property", "prove_top",
           "prove_tops", "formal_param_sets", "FORMAL_PARAMS", "PROPERTIES", "properties_for"]
