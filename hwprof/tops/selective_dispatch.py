"""Catalog entries of selective instruction dispatch (Vaswani, Srikant & Thazhuthaveetil)."""

from ..catalog import Param, Top
from ..golden.dispatch import DispatchConfig, golden_filter_params
from ..rtl.dispatch_filter import DispatchFilter
from ..rtl.profile_flag_predictor import ProfileFlagPredictor


def _filter_budget(params):
    config = DispatchConfig(**golden_filter_params(params))
    return {
        "flops": config.ckpt_width + 1,
        "source": "Vaswani et al., sec. III-B, V: n profile flags (the paper gives no gate "
                  "count; hwprof adds the flag stack, its pointer and the bit that halts "
                  "decode behind a flag-stack exception)",
    }


def _predictor_budget(params):
    return {
        "memory_bits": 8 * 1024,
        "source": "Vaswani et al., sec. VII-C: 2-way x 64-set block descriptor table, "
                  "about 1 KB",
    }


TOPS = [
    Top(
        name="dispatch_filter",
        description="decode-stage selective dispatch: profile flags, flag stack, PI filter, "
                    "mis-fetch redirect, checkpoints (Vaswani et al.)",
        build=DispatchFilter,
        params=(
            Param("lanes", 4, "int", "decode lanes W, 1..4"),
            Param("n_flags", 1, "int", "profile flags (profile types), 1..8"),
            Param("stack_depth", 8, "int", "flag stack entries, 1..64"),
            Param("addr_width", 32, "int", "instruction address width, 8..64"),
            Param("predecoded", True, "bool", "the fetch queue supplies each word's "
                                              "is_pci/is_pi/is_cti bits (insn_pre; timing, "
                                              "docs/fpga.md); false: the filter decodes"),
        ),
        budget=_filter_budget,
        variants=({}, {"lanes": 1}, {"lanes": 2, "n_flags": 8}, {"predecoded": False}),
        cocotb_module="test_dispatch_filter",
    ),
    Top(
        name="profile_flag_predictor",
        description="fetch-stage profile-flag predictor: block descriptor table, prediction "
                    "bits, leader register (Vaswani et al.)",
        build=ProfileFlagPredictor,
        params=(
            Param("lanes", 4, "int", "fetch/decode lanes, 1..4"),
            Param("n_flags", 1, "int", "profile flags (prediction bits), 1..8"),
            Param("sets", 64, "int", "table sets, power of two"),
            Param("ways", 2, "int", "table ways, 1..2 (LRU)"),
            Param("min_block", 4, "int", "smallest block skipped, instructions"),
            Param("addr_width", 32, "int", "instruction address width, 8..64"),
            Param("length_check", False, "bool", "sec. IV-A.2 block-length check (pflen)"),
            Param("update_latency", 3, "int", "cycles from decode to the table write, 0..3 "
                                              "(1..3: pipelined, docs/fpga.md)"),
            Param("fetch_latency", 0, "int", "cycles from fetch to skip/follow/not_taken, "
                                             "0..1 (1: registered outputs)"),
        ),
        budget=_predictor_budget,
        variants=({}, {"lanes": 1}, {"ways": 1, "sets": 128}, {"length_check": True}),
        cocotb_module="test_profile_flag_predictor",
    ),
]
