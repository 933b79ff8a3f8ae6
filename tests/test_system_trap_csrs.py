"""The system core's CSRs (hwprof.system.dispatch.TrapCsrs) in the Amaranth simulator,
against a model written here from the RISC-V privileged specification (Zicsr
read-modify-write, mtvec direct mode, mepc of 32-bit instructions) and docs/isa.md
(pfstate, the flag-stack exceptions' mcause 24/25, mepc, mtval). A CSR file with the
two causes swapped fails the comparison."""

from __future__ import annotations

import random

from amaranth.sim import Simulator

from hwprof.system.dispatch import CONFIG, CSRS, OVERFLOW, UNDERFLOW, TrapCsrs

WIDTH = CONFIG.ckpt_width


def _model_step(regs, state, step):
    """(value read, pfstate written or None); updates ``regs`` as the hardware must."""
    kind = step[0]
    if kind == "trap":
        _, overflow, pc, word = step
        regs.update(mcause=OVERFLOW if overflow else UNDERFLOW, mepc=pc & ~3, mtval=word)
        return None, None
    _, name, op, src, write = step
    old = state if name == "pfstate" else regs[name]
    if not write:
        return old, None
    new = {1: src, 2: old | src, 3: old & ~src}[op]
    if name == "pfstate":
        return old, new & ((1 << WIDTH) - 1)
    regs[name] = new & ~3 if name in ("mtvec", "mepc") else new
    return old, None


def _steps(seed, n=200):
    rng = random.Random(seed)
    steps = []
    for _ in range(n):
        if rng.random() < 0.2:
            steps.append(("trap", rng.getrandbits(1), rng.getrandbits(32), rng.getrandbits(32)))
        else:
            imm = rng.random() < 0.3  # csrrwi/csrrsi/csrrci: a 5-bit source
            src = rng.getrandbits(5 if imm else 32)
            op = rng.randrange(1, 4)
            # csrrw always writes; csrrs/csrrc only with a source field other than 0
            write = op == 1 or rng.random() < 0.8
            steps.append(("csr", rng.choice(list(CSRS)), op, src, write))
    return steps


def _mismatches(seed, dut_class=TrapCsrs):
    dut = dut_class(WIDTH)
    steps = _steps(seed)
    rng = random.Random(seed + 1)
    bad = []

    async def bench(ctx):
        regs = {"mtvec": 0, "mepc": 0, "mcause": 0, "mtval": 0}
        for i, step in enumerate(steps):
            state = rng.getrandbits(WIDTH)
            ctx.set(dut.state, state)
            if step[0] == "trap":
                ctx.set(dut.trap, 1)
                ctx.set(dut.overflow, step[1])
                ctx.set(dut.trap_pc, step[2])
                ctx.set(dut.trap_word, step[3])
            else:
                _, name, op, src, write = step
                ctx.set(dut.csr_valid, 1)
                ctx.set(dut.csr_addr, CSRS[name])
                ctx.set(dut.csr_op, op)
                ctx.set(dut.csr_src, src)
                ctx.set(dut.csr_write, write)
            read, restore = _model_step(regs, state, step)
            got = (ctx.get(dut.csr_rdata) if read is not None else None,
                   ctx.get(dut.restore) if ctx.get(dut.restore_valid) else None)  # fmt: skip
            if got != (read, restore):
                bad.append((i, step, got, (read, restore)))
            await ctx.tick()
            for port in (dut.trap, dut.csr_valid):
                ctx.set(port, 0)
            if (ctx.get(dut.mtvec), ctx.get(dut.mepc)) != (regs["mtvec"], regs["mepc"]):
                bad.append((i, step, "mtvec/mepc", (ctx.get(dut.mtvec), ctx.get(dut.mepc))))
            for name in ("mcause", "mtval"):
                ctx.set(dut.csr_addr, CSRS[name])
                if ctx.get(dut.csr_rdata) != regs[name]:
                    bad.append((i, step, name, ctx.get(dut.csr_rdata), regs[name]))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return bad


def test_csrs_follow_the_privileged_spec_and_the_isa(seed):
    assert _mismatches(seed) == [], f"seed {seed}"


class CausesSwapped(TrapCsrs):
    """mcause 25 on an overflow and 24 on an underflow."""

    causes = (UNDERFLOW, OVERFLOW)


def test_check_fails_with_the_causes_swapped(seed):
    bad = _mismatches(seed, CausesSwapped)
    assert bad and bad[0][1][0] == "trap", f"seed {seed}"  # the first exception's mcause
    assert all(b[2] == "mcause" or b[1][1] == "mcause" for b in bad), f"seed {seed}"
