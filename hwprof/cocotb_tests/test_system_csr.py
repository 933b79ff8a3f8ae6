"""The system's CSR window (``hwprof.system.soc.Peripherals``) driven by an independent
Wishbone master (the PyPI package cocotbext-wishbone).

For every register of the map (passed as ``HWPROF_REGISTERS``: name, word address,
access, bits, reset): its value after reset, its access type (write-only reads 0;
read/write reads back what was written, masked to its bits) and its effect (console
strobes, the LFSR load, the brr counters) against the golden brr model. An address
of the window that no register holds reads 0 and a write to it changes nothing.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer
from cocotbext.wishbone.driver import WBOp, WishboneMaster
from harness import golden_params, param, rng, seed, start_in_reset

from hwprof.golden.brr import Brr, BrrConfig

SIGNALS = {"cyc": "cyc", "stb": "stb", "we": "we", "adr": "adr", "datwr": "dat_w",
           "datrd": "dat_r", "ack": "ack"}  # fmt: skip


class Bus:
    def __init__(self, dut):
        self.master = WishboneMaster(dut, "bus", dut.clk, width=32, timeout=20,
                                     signals_dict=SIGNALS, bus_separator="__")  # fmt: skip

    async def read(self, word):
        res = await self.master.send_cycle([WBOp(adr=word, sel=1)])
        return int(res[0].datrd)

    async def write(self, word, value):
        await self.master.send_cycle([WBOp(adr=word, dat=value, sel=1)])


class Strobes:
    """Every cycle's console and LFSR-load strobes, collected in the background."""

    def __init__(self, dut):
        self.dut = dut
        self.putc, self.exit, self.load = [], [], []
        cocotb.start_soon(self._watch())

    async def _watch(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            if int(dut.console_valid.value):
                self.putc.append(int(dut.console_data.value))
            if int(dut.exit_valid.value):
                self.exit.append(int(dut.exit_code.value))
            if int(dut.lfsr_load.value):
                self.load.append(int(dut.lfsr_load_data_out.value))


def registers():
    return {r["name"]: r for r in param("registers")}


async def reset(dut):
    await start_in_reset(dut, {"brr_valid": 0, "brr_freq": 0, "lfsr_load_valid": 0,
                               "lfsr_load_data": 0})  # fmt: skip


@cocotb.test()
async def reset_values_and_access(dut):
    """Reset value and access type of every register; an unused address."""
    await reset(dut)
    bus, strobes = Bus(dut), Strobes(dut)
    regs = registers()
    config = BrrConfig(**golden_params())
    expected_reset = {"seed": config.seed, "0": 0, None: 0}
    r = rng()
    for name, reg in regs.items():
        got = await bus.read(reg["word"])
        assert got == expected_reset[reg["reset"]], f"{name} after reset: {got:#x}"
    for name, reg in regs.items():
        value = r.getrandbits(32) | 1  # non-zero (a zero LFSR state escapes on a brr only)
        await bus.write(reg["word"], value)
        got = await bus.read(reg["word"])
        mask = (1 << reg["bits"]) - 1
        if reg["access"] == "w":
            assert got == 0, f"{name} is write-only but reads {got:#x}"
        else:
            want = value & mask & ((1 << config.width) - 1 if name == "BRR_STATE" else mask)
            assert got == want, f"{name}: wrote {value:#x}, read {got:#x}, expected {want:#x}"
    # the window's unused addresses: read 0, writes change no register
    used = {reg["word"] for reg in regs.values()}
    spare = next(w for w in range(1, 1 << 10) if w not in used)
    before = {n: await bus.read(reg["word"]) for n, reg in regs.items()}
    n_strobes = (len(strobes.putc), len(strobes.exit), len(strobes.load))
    await bus.write(spare, 0xFFFFFFFF)
    assert await bus.read(spare) == 0
    after = {n: await bus.read(reg["word"]) for n, reg in regs.items()}
    assert after == before
    assert (len(strobes.putc), len(strobes.exit), len(strobes.load)) == n_strobes


@cocotb.test()
async def console_effects(dut):
    """PUTC sends the low byte once per write; EXIT the whole word."""
    await reset(dut)
    bus, strobes = Bus(dut), Strobes(dut)
    regs = registers()
    text = b"hwprof\n\x00\xff"
    for ch in text:
        await bus.write(regs["CONSOLE_PUTC"]["word"], 0xABCDEF00 | ch)
    await bus.write(regs["CONSOLE_EXIT"]["word"], 0xFFFFFFFE)
    for _ in range(3):
        await RisingEdge(dut.clk)
    assert bytes(strobes.putc) == text
    assert strobes.exit == [0xFFFFFFFE]


@cocotb.test()
async def brr_state_and_counters(dut):
    """A STATE write loads the LFSR; brr retire against the golden model; RETIRED and
    TAKEN count them; a count write sets the count."""
    await reset(dut)
    bus, strobes = Bus(dut), Strobes(dut)
    regs = registers()
    golden = Brr(**golden_params())
    r = rng()
    retired = taken = 0
    for rounds in range(6):
        state = r.randrange(1, 1 << golden.config.width)
        await bus.write(regs["BRR_STATE"]["word"], state)
        golden.step(load_valid=1, load_data=state)
        assert strobes.load[-1] == state
        assert await bus.read(regs["BRR_STATE"]["word"]) == state
        await FallingEdge(dut.clk)
        for _ in range(50):
            freq = r.randrange(4) if rounds % 2 else r.randrange(16)
            dut.brr_valid.value = 1
            dut.brr_freq.value = freq
            await Timer(1, "ns")  # taken is combinational in state and freq
            expected = golden.step(decode_valid=1, freq=freq)
            assert int(dut.brr_taken.value) == expected.taken, f"brr {retired}, seed {seed()}"
            await FallingEdge(dut.clk)  # the LFSR steps at the rising edge between
            retired += 1
            taken += expected.taken
        dut.brr_valid.value = 0
        assert await bus.read(regs["BRR_RETIRED"]["word"]) == retired
        assert await bus.read(regs["BRR_TAKEN"]["word"]) == taken
        assert await bus.read(regs["BRR_STATE"]["word"]) == golden.state
    await bus.write(regs["BRR_RETIRED"]["word"], 5)
    await bus.write(regs["BRR_TAKEN"]["word"], 7)
    await FallingEdge(dut.clk)
    dut.brr_valid.value = 1
    dut.brr_freq.value = 0
    expected = golden.step(decode_valid=1, freq=0)
    await FallingEdge(dut.clk)
    dut.brr_valid.value = 0
    assert await bus.read(regs["BRR_RETIRED"]["word"]) == 6
    assert await bus.read(regs["BRR_TAKEN"]["word"]) == 7 + expected.taken
