"""brr_shared on Verilator against hwprof.golden.brr_variants.BrrShared, every cycle.

Packets hold several brr often (p = 0.35 per slot), so splits are frequent.
"""

import cocotb
from brr_lanes import check_lanes, golden_params
from harness import param

from hwprof.golden.brr_variants import BrrShared

OUTPUTS = ("is_brr", "request", "redirect_valid", "redirect_target", "btb_inhibit", "split",
           "split_at", "state")


@cocotb.test()
async def brr_shared_matches_golden(dut):
    golden = BrrShared(**golden_params(param("params", {})))
    await check_lanes(dut, golden, golden.config.lanes, OUTPUTS)
