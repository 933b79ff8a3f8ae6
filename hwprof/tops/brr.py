"""Catalog entry of the branch-on-random unit (Lee & Zilles, sec. 3)."""

from ..block import Property, Top, golden_params
from ..golden.brr import BrrConfig
from ..rtl.brr import Brr
from .sva import lfsr_props


def props_brr(p: dict) -> list[Property]:
    cfg = BrrConfig(width=p["width"], seed=p["seed"], pipelined=p["pipelined"],
                    lockup_escape=p["lockup_escape"], positions=p["positions"],
                    taps=p["taps"], lfsr_steps=p["lfsr_steps"])  # fmt: skip
    chain = []
    for f in range(16):
        bits = ", ".join(f"state[{q}]" for q in cfg.positions[: f + 1])
        chain.append(f"always @* if (freq == 4'd{f}) assert (taken == &{{{bits}}});")
    return [
        Property("redirect_needs_decode_valid", "redirect only when decode_valid is set",
                 {"brr": "always @* assert (!redirect || decode_valid);"}),
        Property("taken_is_and_chain",
                 "taken is the AND of the freq + 1 outcome stages of the state (all freq)",
                 {"brr": "\n".join(chain)}),
        *lfsr_props("brr.lfsr", "register", cfg.width, cfg.lockup_escape, cfg.lfsr),
    ]



TOPS = [
    Top(
        name="brr",
        properties=props_brr,
        description="branch-on-random unit: LFSR, AND chain, 16:1 freq mux (Lee & Zilles)",
        build=Brr,
        params=golden_params(
            BrrConfig,
            width="LFSR width, 16..32",
            seed="LFSR reset state, non-zero",
            pipelined="latch the AND terms a cycle ahead",
            lockup_escape="leave the all-zero state",
            positions=("16 outcome stages (default: derived)", "ints"),
            taps=("LFSR taps, width first (default: XAPP052)", "ints"),
            lfsr_steps=("LFSR steps per brr (default: searched layout)", "int"),
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
