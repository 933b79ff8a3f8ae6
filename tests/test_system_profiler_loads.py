"""RetiredLoads: PicoRV32 memory transfers -> retired-load tuples, against RISC-V load rules."""

from __future__ import annotations

import numpy as np
from amaranth.sim import Simulator

from hwprof.system.profiler import RetiredLoads

#: RISC-V RV32I loads: funct3 -> (bytes, sign-extended)
LOADS = {0: (1, True), 1: (2, True), 2: (4, False), 4: (1, False), 5: (2, False)}


def load_value(funct3, addr, word):
    """The value a RISC-V load writes to rd (unprivileged spec, sec. 2.6)."""
    size, signed = LOADS[funct3]
    bits = 8 * size
    raw = (word >> (8 * (addr % 4))) & ((1 << bits) - 1)
    if signed and raw >> (bits - 1):
        raw -= 1 << bits
    return raw & 0xFFFF_FFFF


def transfers(rng, n):
    """Random cycles: idle, instruction fetch, store, or load of each kind; ready or not."""
    out = []
    for _ in range(n):
        kind = rng.choice(["idle", "fetch", "store", "load", "load"])
        funct3 = int(rng.choice(list(LOADS)))
        size = LOADS[funct3][0]
        addr = int(rng.integers(0, 1 << 16)) * 4 + size * int(rng.integers(0, 4 // size))
        out.append({
            "mem_valid": int(kind != "idle"), "mem_ready": int(rng.random() < 0.7),
            "mem_instr": int(kind == "fetch"),
            "mem_wstrb": int(rng.integers(1, 16)) if kind == "store" else 0,
            "mem_addr": addr, "mem_rdata": int(rng.integers(0, 1 << 32)),
            "pc": int(rng.integers(0, 1 << 30)) * 4,
            "insn": (int(rng.integers(0, 1 << 17)) << 15) | (funct3 << 12) | 0x03,
        })  # fmt: skip
    return out


def expected(cycles):
    return [(c["pc"], load_value((c["insn"] >> 12) & 7, c["mem_addr"], c["mem_rdata"]))
            for c in cycles if c["mem_valid"] and c["mem_ready"] and not c["mem_instr"]
            and not c["mem_wstrb"]]  # fmt: skip


def test_retired_loads_follow_the_isa(seed):
    rng = np.random.default_rng(seed)
    cycles = transfers(rng, 600)
    dut = RetiredLoads()
    got = []

    async def bench(ctx):
        for c in [*cycles, {"mem_valid": 0}]:
            for name, value in c.items():
                ctx.set(getattr(dut, name), value)
            await ctx.tick()
            if ctx.get(dut.loads.valid):
                got.append((ctx.get(dut.loads.payload.pc), ctx.get(dut.loads.payload.value)))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    want = expected(cycles)
    negative = sum(1 for c in cycles if c["mem_valid"] and c["mem_ready"]
                   and not c["mem_instr"] and not c["mem_wstrb"]
                   and (c["insn"] >> 12) & 7 in (0, 1)
                   and load_value((c["insn"] >> 12) & 7, c["mem_addr"], c["mem_rdata"]) >> 31)
    assert len(want) > 100 and negative > 10, f"seed {seed}"
    assert got == want, f"seed {seed}"


def test_load_rules_by_hand():
    """The reference itself, on values worked out by hand."""
    assert load_value(0, 0x1001, 0x1234_80FF) == 0xFFFF_FF80  # lb byte 1 = 0x80
    assert load_value(4, 0x1001, 0x1234_80FF) == 0x80  # lbu
    assert load_value(1, 0x1002, 0x8234_0000) == 0xFFFF_8234  # lh upper half
    assert load_value(5, 0x1002, 0x8234_0000) == 0x8234  # lhu
    assert load_value(2, 0x1000, 0x8234_5678) == 0x8234_5678  # lw
