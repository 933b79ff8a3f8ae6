"""brr_decode on Verilator against hwprof.golden.brr_variants.BrrDecode, every cycle."""

import cocotb
from brr_lanes import check_lanes, golden_params
from harness import param

from hwprof.golden.brr_variants import BrrDecode

OUTPUTS = ("is_brr", "request", "redirect_valid", "redirect_target", "btb_inhibit", "state")


class _OneLane:
    """The single-lane model behind the packet interface of check_lanes."""

    def __init__(self, **params):
        self.model = BrrDecode(**params)
        self.config = self.model.config

    def step(self, *, insn, pc, valid):
        return self.model.step(insn=insn[0], pc=pc[0], valid=valid[0])


@cocotb.test()
async def brr_decode_matches_golden(dut):
    golden = _OneLane(**golden_params(param("params", {})))
    await check_lanes(dut, golden, 1, OUTPUTS, p_brr=0.4)
