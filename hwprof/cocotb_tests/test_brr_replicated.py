"""brr_replicated on Verilator against hwprof.golden.brr_variants.BrrReplicated, every cycle."""

import cocotb
from brr_lanes import check_lanes, golden_params
from harness import param

from hwprof.golden.brr_variants import BrrReplicated

OUTPUTS = ("is_brr", "request", "redirect_valid", "redirect_target", "btb_inhibit", "state")


@cocotb.test()
async def brr_replicated_matches_golden(dut):
    golden = BrrReplicated(**golden_params(param("params", {})))
    await check_lanes(dut, golden, golden.config.lanes, OUTPUTS)
