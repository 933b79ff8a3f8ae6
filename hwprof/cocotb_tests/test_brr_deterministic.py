"""brr_deterministic on Verilator: every cycle against the golden model, and the property.

A random core schedule (:class:`brr_stimulus.CoreSchedule`: wrong paths,
squashes of wrong- and correct-path brr with refetch, commits, overflow
stalls) drives the unit; between program phases, with nothing in flight, a
context switch saves the LFSR (CSR read, or the scan chain), runs another
process (a CSR write of its own state, brr that commit), and restores it (CSR
write, or scan in); beside some of its write and scan cycles a brr is decoded or
more brr than are in flight are committed and squashed, which the serializing
cycle must ignore (nothing accepted, no ``protocol_error``). Checked every
cycle: every output equals ``hwprof.golden.brr_deterministic.BrrDeterministic``.
Now and then a core that lost count asks to commit and squash one brr more
than are in flight:
``protocol_error`` must rise and nothing move (the golden model says so every
cycle). After the schedule, a directed phase writes (CSR) states that meet
each ``freq``'s outcome mask or miss it by one bit and reads ``taken`` for all
16 ``freq`` in each (random states almost never take the high frequencies).
Checked at the end: the k-th committed brr of the program saw exactly
the state and outcome that the k-th brr of a core with no squashes and no
context switches sees (``hwprof.golden.brr.Brr`` stepped once per brr).
"""

import cocotb
from brr_stimulus import CoreSchedule, lost_count_inputs, outcome_states
from cocotb.triggers import FallingEdge, ReadOnly
from harness import Mismatch, check_equal, param, rng, seed, start_clock

from hwprof.golden.brr import Brr
from hwprof.golden.brr_deterministic import BrrDeterministic

OUTPUTS = ("taken", "accept", "redirect", "overflow", "protocol_error", "full", "inflight",
           "state", "scan_out")
IDLE = {"decode_valid": 0, "freq": 0, "commit": 0, "squash": 0, "write_valid": 0,
        "write_data": 0, "scan_enable": 0, "scan_in": 0}  # fmt: skip


class Driver:
    def __init__(self, dut, golden):
        self.dut, self.golden, self.cycle = dut, golden, 0

    async def step(self, **inputs) -> dict:
        """One cycle: drive, compare every output with the golden model, return them."""
        inputs = {**IDLE, **inputs}
        for name, value in inputs.items():
            getattr(self.dut, name).value = value
        await ReadOnly()
        expected = self.golden.step(**inputs)
        context = ", ".join(f"{k}={v}" for k, v in inputs.items() if v)
        got = {}
        for name in OUTPUTS:
            got[name] = int(getattr(self.dut, name).value)
            check_equal(self.cycle, name, got[name], expected[name], context)
        await FallingEdge(self.dut.clk)
        self.cycle += 1
        return got


def ignored_inputs(r, golden) -> dict:
    """Pipeline inputs that a write or scan cycle must ignore, now and then.

    A serializing cycle accepts no brr and flags no lost count (the golden
    model's priorities); a decode or an over-count commit/squash beside it checks
    that the RTL gives them no effect either.
    """
    roll = r.random()
    if roll < 0.3:
        return {"decode_valid": 1, "freq": r.randrange(16)}
    if roll < 0.5:
        return lost_count_inputs(r, golden)
    return {}


async def context_switch(driver, r, width, use_scan) -> None:
    """Save the drained LFSR, run another process, restore it."""
    other = r.randrange(1, 1 << width)
    golden = driver.golden
    if use_scan:  # shift the saved state out while the other process's state goes in
        saved = 0
        for bit in range(width):
            out = await driver.step(scan_enable=1, scan_in=(other >> bit) & 1,
                                    **ignored_inputs(r, golden))  # fmt: skip
            saved |= out["scan_out"] << bit
    else:
        saved = (await driver.step())["state"]  # CSR read
        await driver.step(write_valid=1, write_data=other, **ignored_inputs(r, golden))
    for _ in range(r.randrange(1, 40)):  # the other process: brr that commit at once
        out = await driver.step(decode_valid=1, freq=r.randrange(16))
        if out["accept"]:
            await driver.step(commit=1)
    if use_scan:
        for bit in range(width):
            await driver.step(scan_enable=1, scan_in=(saved >> bit) & 1,
                              **ignored_inputs(r, golden))  # fmt: skip
    else:
        await driver.step(write_valid=1, write_data=saved, **ignored_inputs(r, golden))


@cocotb.test()
async def brr_deterministic_matches_golden(dut):
    params = {k: tuple(v) if isinstance(v, list) else v
              for k, v in param("params", {}).items()}  # fmt: skip
    cycles = param("cycles", 30_000)
    golden = BrrDeterministic(**params)
    cfg = golden.config
    r = rng()
    program = [r.choice((0, 0, 1, 2, r.randrange(16))) for _ in range(cycles // 3)]
    schedule = CoreSchedule(r, program, cfg.max_inflight, rob_walk=cfg.rob_walk)
    start_clock(dut)
    for name, value in IDLE.items():
        getattr(dut, name).value = value
    dut.rst.value = 1
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    driver = Driver(dut, golden)
    switches = lost_counts = 0
    while not schedule.done and driver.cycle < cycles:
        drained = not schedule.inflight and not schedule.walk_left
        if drained and r.random() < 0.01:
            await context_switch(driver, r, cfg.width, use_scan=switches % 2 == 1)
            switches += 1
            continue
        if r.random() < 0.005:  # a core that lost count: the unit flags it and holds
            lost_counts += (await driver.step(**lost_count_inputs(r, golden)))["protocol_error"]
            continue
        inputs = schedule.inputs()
        out = await driver.step(**inputs)
        schedule.observe(accept=out["accept"], taken=out["taken"], state=out["state"],
                         overflow=out["overflow"])  # fmt: skip
    # The property: committed brr saw the sequence of a core with no squashes.
    reference = Brr(cfg.brr_config)
    for k, (index, state, taken) in enumerate(schedule.committed):
        expected = reference.step(decode_valid=1, freq=program[k])
        if (index, state, taken) != (k, expected.state, expected.taken):
            raise Mismatch(
                f"committed brr {k}: program index {index}, state {state:#x}, taken {taken}; "
                f"no-squash core: index {k}, state {expected.state:#x}, taken "
                f"{expected.taken}; reproduce with seed {seed()}"
            )
    for state in outcome_states(cfg.brr_config.outcome_masks, cfg.width, r):
        await driver.step(write_valid=1, write_data=state)
        for i, freq in enumerate(r.sample(range(16), 16)):
            await driver.step(decode_valid=int(i == 15), freq=freq)
    dut._log.info(
        "%d cycles equal; %d brr committed as without squashes (%d squashed, %d overflow "
        "stalls, %d context switches, %d lost counts flagged)", driver.cycle,
        len(schedule.committed), schedule.squashed, schedule.overflows, switches, lost_counts)
