"""Catalog entries of selective instruction dispatch (Vaswani, Srikant & Thazhuthaveetil)."""

from ..catalog import Param, Top
from ..golden.dispatch import DispatchConfig
from ..rtl.dispatch_filter import DispatchFilter


def _filter_budget(params):
    config = DispatchConfig(**params)
    return {
        "flops": config.ckpt_width,
        "source": "Vaswani et al., sec. III-B, V: n profile flags (the paper gives no gate "
                  "count; hwprof adds the flag stack and its pointer)",
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
        ),
        budget=_filter_budget,
        variants=({}, {"lanes": 1}, {"lanes": 2, "n_flags": 8}),
        cocotb_module="test_dispatch_filter",
    ),
]
