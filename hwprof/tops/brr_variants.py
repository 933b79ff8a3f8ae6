"""Catalog entries of brr in a real core: decode, superscalar, deterministic."""

from functools import partial

from ..block import Param, Property, Top, golden_params
from ..golden.brr_deterministic import BrrDeterministicConfig, count_bits
from ..golden.brr_variants import BrrDecodeConfig, BrrReplicatedConfig, BrrSharedConfig
from ..rtl.brr_decode import BrrDecode
from ..rtl.brr_deterministic import BrrDeterministic
from ..rtl.brr_superscalar import BrrReplicated, BrrShared

_SINGLE = {"flops": 20, "gates": 100}
_SINGLE_SOURCE = "Lee & Zilles 2008, sec. 3.3: ~20 bits of state, <100 gates (single-issue)"

_BRR_PARAMS = golden_params(BrrDecodeConfig, width="LFSR width, 16..32",
                            seed="LFSR reset state, non-zero")  # fmt: skip
# Off by default: the paper computes a brr's target on the core's existing branch-target
# datapath (Lee & Zilles 2008, sec. 3.3, summary item 2); on adds a 32-bit adder per lane.
_TARGET = Param("target_adder", False, "bool",
                "compute pc + offset here (default: the core's branch-target adder)")
_LAYOUT = golden_params(BrrDecodeConfig,
                        positions=("16 outcome stages (default: derived)", "ints"),
                        taps=("LFSR taps, width first (default: XAPP052)", "ints"))
_ESCAPE = Param.golden(BrrDecodeConfig, "lockup_escape",
                       "leave the all-zero state (unreachable here)")
_LANES = Param.golden(BrrReplicatedConfig, "lanes", "decode width, 1..16")


def _lane_budget(params: dict) -> dict | None:
    """The paper's budget: 4-wide <100 bits/<400 gates; linear in the decode width."""
    if params["target_adder"]:
        return None
    lanes = params.get("lanes", 1)
    if lanes == 1:
        return dict(_SINGLE, source=_SINGLE_SOURCE)
    if lanes <= 4:
        return {"flops": 100, "gates": 400,
                "source": "Lee & Zilles 2008, sec. 3.3: 4-wide <100 bits of state, <400 gates"}
    return {"flops": 25 * lanes, "gates": 100 * lanes,
            "source": f"4-wide budget scaled linearly to {lanes} lanes (sec. 3.3: "
                      "'this logic scales linearly with the decode width')"}  # fmt: skip


def _deterministic_budget(params: dict) -> dict:
    flops = params["width"] + params["max_inflight"] + count_bits(params["max_inflight"])
    return {"flops": flops,
            "source": "Lee & Zilles 2008, sec. 3.4: the LFSR + one bit per in-flight brr "
                      "+ an in-flight counter (no gate count stated)"}  # fmt: skip


_ADDER_VARIANT = {"target_adder": True}
_SUPERSCALAR_VARIANTS = tuple({"lanes": w} for w in (1, 2, 8))


def props_brr_lanes(top: str, p: dict) -> list[Property]:
    """brr at decode (one lane) and the superscalar variants (``lanes`` lanes)."""
    lanes = p.get("lanes", 1)
    checks = "\n".join(
        f"always @* assert (!redirect_valid[{i}] || (valid[{i}] && is_brr[{i}]));"
        for i in range(lanes))  # fmt: skip
    return [Property("redirect_needs_decoded_brr",
                     "a lane redirects only when it is valid and decodes a brr",
                     {top: checks})]


def props_brr_deterministic(p: dict) -> list[Property]:
    text = ("always @* assert (!redirect || (decode_valid && accept));\n"
            f"always @* assert (inflight <= {p['max_inflight']});\n"
            f"always @* assert (full == (inflight == {p['max_inflight']}));")  # fmt: skip
    return [Property("redirect_and_inflight",
                     "redirect only for an accepted brr in decode; the brr in flight stay in "
                     "0..max_inflight and full says the maximum", {"brr_deterministic": text})]



def _lane_top(name, build, description, params, variants) -> Top:
    """A brr at decode's entry, one lane or superscalar (properties, budget alike)."""
    return Top(name=name, properties=partial(props_brr_lanes, name), description=description,
               build=build, params=params, budget=_lane_budget, variants=variants,
               cocotb_module=f"test_{name}")  # fmt: skip


TOPS = [
    _lane_top("brr_decode", BrrDecode,
              "decode-stage brr: recognition, LFSR step, redirect, BTB inhibit",
              (*_BRR_PARAMS, _ESCAPE, _TARGET, *_LAYOUT), ({}, _ADDER_VARIANT)),
    _lane_top("brr_replicated", BrrReplicated,
              "superscalar brr, one decoupled LFSR per decode lane",
              (_LANES, *_BRR_PARAMS, _ESCAPE, _TARGET, *_LAYOUT),
              ({}, _ADDER_VARIANT, *_SUPERSCALAR_VARIANTS)),
    _lane_top("brr_shared", BrrShared,
              "superscalar brr, one LFSR shared in program order (split or multi-step)",
              (_LANES, Param.golden(BrrSharedConfig, "steps", "brr served per cycle, 1..lanes"),
               *_BRR_PARAMS, _TARGET, *_LAYOUT),
              ({}, _ADDER_VARIANT, *_SUPERSCALAR_VARIANTS,
               *({"lanes": w, "steps": w} for w in (2, 4, 8)))),
    Top(
        name="brr_deterministic",
        properties=props_brr_deterministic,
        description="deterministic brr: shift-back history, squash recovery, CSR and scan access",
        build=BrrDeterministic,
        params=(
            *_BRR_PARAMS,
            Param.golden(BrrDeterministicConfig, "max_inflight",
                         "brr in flight (history bits), 1..64"),
            Param.golden(BrrDeterministicConfig, "rob_walk",
                         "shift back one brr per cycle (ROB walk)"),
            *_LAYOUT,
        ),
        budget=_deterministic_budget,
        variants=({}, {"rob_walk": True}, {"max_inflight": 32}),
        cocotb_module="test_brr_deterministic",
    ),
]
