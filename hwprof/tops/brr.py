"""Catalog entries of the branch-on-random unit (issue: foundation)."""

from ..catalog import Param, Top
from ..rtl.brr import Brr

TOPS = [
    Top(
        name="brr",
        description="branch-on-random unit: LFSR, AND chain, 16:1 freq mux (Lee & Zilles)",
        build=Brr,
        params=(
            Param("width", 20, "int", "LFSR width, 16..32"),
            Param("seed", 1, "int", "LFSR reset state, non-zero"),
            Param("pipelined", False, "bool", "latch the AND terms a cycle ahead"),
            Param("lockup_escape", True, "bool", "leave the all-zero state"),
            Param("positions", None, "ints", "16 outcome stages (default: derived)"),
            Param("taps", None, "ints", "LFSR taps, width first (default: XAPP052)"),
            Param("lfsr_steps", None, "int", "LFSR steps per brr (default: searched layout)"),
        ),
        budget={
            "flops": 20,
            "gates": 100,
            "source": "Lee & Zilles 2008, sec. 3.3: ~20 bits of state, <100 gates",
        },
        variants=({}, {"lockup_escape": False}, {"pipelined": True}),
        cocotb_module="test_brr",
    ),
]
