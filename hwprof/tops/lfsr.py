"""Catalog entry of the stand-alone LFSR (the library the brr units build on)."""

from ..block import Property, Top, golden_params
from ..golden.lfsr import LfsrConfig
from ..rtl.lfsr import Lfsr
from .sva import lfsr_props


def props_lfsr(p: dict) -> list[Property]:
    cfg = LfsrConfig(width=p["width"], seed=p["seed"], steps=p["steps"], form=p["form"],
                     taps=p["taps"], lockup_escape=p["lockup_escape"])  # fmt: skip
    return lfsr_props("lfsr", "state", cfg.width, cfg.lockup_escape, cfg)



TOPS = [
    Top(
        name="lfsr",
        properties=props_lfsr,
        description="maximal-length LFSR: Fibonacci/Galois, 3..64 bits, k steps per cycle, load",
        build=Lfsr,
        params=golden_params(
            LfsrConfig,
            width="stages, 3..64",
            seed="reset state, non-zero",
            steps="LFSR steps per enabled cycle, >= 1",
            form="fibonacci or galois",
            taps=("feedback taps, width first (default: XAPP052)", "ints"),
            lockup_escape="leave the all-zero state",
        ),
        budget=None,
        variants=({}, {"lockup_escape": False}, {"width": 32, "steps": 4}),
        cocotb_module="test_lfsr",
    ),
]
