"""Shared cocotb check of the decode-stage brr tops against their golden models.

Every cycle: a random fetch packet (brr, near misses, real branches, random
words; random valid bits), every output compared with the golden model. The
golden model takes per-lane lists; the Verilog ports are flat vectors, lane 0
in the low bits.
"""

from __future__ import annotations

from brr_stimulus import random_packet
from cocotb.triggers import FallingEdge, ReadOnly
from harness import check_equal, param, rng, start_clock

from hwprof.golden.brr_variants import XLEN, pack


def golden_params(params: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}


async def check_lanes(dut, golden, lanes: int, outputs: tuple[str, ...], p_brr: float = 0.35):
    cycles = param("cycles", 20_000)
    r = rng()
    target_adder = golden.config.target_adder
    start_clock(dut)
    dut.rst.value = 1
    dut.valid.value = 0
    dut.insn.value = 0
    if target_adder:
        dut.pc.value = 0
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    redirects = 0
    for cycle in range(cycles):
        packet = random_packet(r, lanes, p_brr)
        dut.insn.value = pack(packet["insn"], XLEN)
        dut.valid.value = pack(packet["valid"], 1)
        if target_adder:
            dut.pc.value = pack(packet["pc"], XLEN)
        else:
            del packet["pc"]
            packet["pc"] = [0] * lanes
        await ReadOnly()
        expected = golden.step(**packet)
        context = f"insn={[hex(w) for w in packet['insn']]} valid={packet['valid']}"
        for name in outputs:
            if name == "redirect_target" and not target_adder:
                continue
            check_equal(cycle, name, int(getattr(dut, name).value), expected[name], context)
        redirects += bin(expected["redirect_valid"]).count("1")
        await FallingEdge(dut.clk)
    dut._log.info("%d cycles equal, %d redirects", cycles, redirects)
