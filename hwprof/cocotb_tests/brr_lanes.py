"""Shared cocotb check of the decode-stage brr tops against their golden models.

Every cycle: a random fetch packet (brr, near misses, real branches, random
words; random valid bits), every output compared with the golden model. The
golden model takes per-lane lists; the Verilog ports are flat vectors, lane 0
in the low bits.

Then :func:`outcome_sweep`: random states almost never take a brr of the high
frequencies (probability 2^-14..2^-16), so a stuck AND term or outcome-mux
select of theirs goes unseen by the random cycles. The sweep steps the LFSRs
(every lane with its own LFSR decodes a brr each cycle) through states the
golden model lists ahead of time (its numpy fast path) and, for every ``freq``
``f`` and lane, presents ``f`` in the first state whose highest met outcome
mask is ``f`` (taken) and in the first whose highest is ``f - 1`` (not taken,
one AND term short): every AND term, and every mux input that differs, decides
one of these. Cycles in between run without Python (``ClockCycles``) and are
not compared; the lanes' states are compared at each presented brr.
"""

from __future__ import annotations

import numpy as np
from brr_stimulus import random_packet
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly
from harness import check_equal, param, rng, start_clock

from hwprof.golden.brr import FREQS
from hwprof.golden.brr_isa import encode_brr
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
    if param("sweep", True):
        await outcome_sweep(dut, golden, lanes, outputs, target_adder, r)


def lfsr_units(golden) -> list:
    """The golden ``Brr`` units, one per lane that owns an LFSR (lane order)."""
    if hasattr(golden, "units"):  # brr_replicated
        return list(golden.units)
    if hasattr(golden, "unit"):  # brr_shared: one LFSR, served from lane 0 here
        return [golden.unit]
    return [golden.model.unit]  # brr_decode (the one-lane wrapper)


def highest_met(states: np.ndarray, masks) -> np.ndarray:
    """Per state, the highest ``freq`` whose outcome mask it meets (-1: none)."""
    met = np.zeros(len(states), dtype=np.int64)
    for mask in masks:  # the masks are nested (an AND chain): count the met ones
        met += (states & np.uint64(mask)) == np.uint64(mask)
    return met - 1


async def outcome_sweep(dut, golden, lanes, outputs, target_adder, r, horizon=1 << 20):
    """Present every ``freq`` where it is just taken and just not taken (module docstring)."""
    units = lfsr_units(golden)
    masks = units[0].config.outcome_masks
    sequences = []
    for unit in units:
        probe = type(unit)(unit.config)
        probe.state = unit.state
        sequences.append(probe.states(horizon))
    plan: dict[int, dict[int, int]] = {}  # cycle -> {lane: freq}
    for lane, states in enumerate(sequences):
        top = highest_met(states, masks)
        for freq in range(FREQS):
            for level in (freq, freq - 1):
                hits = np.flatnonzero(top == level)
                if len(hits) == 0:
                    raise AssertionError(f"no state with highest met freq {level} in {horizon}")
                at = int(hits[0])
                while lane in plan.get(at, {}):  # one brr per lane and cycle
                    at = int(hits[np.searchsorted(hits, at, side="right")])
                plan.setdefault(at, {})[lane] = freq
    offset = 2 * r.randrange(-2048, 2048)
    pc = [4 * i for i in range(lanes)]
    valid = [int(i < len(units)) for i in range(lanes)]
    dut.valid.value = pack(valid, 1)
    if target_adder:
        dut.pc.value = pack(pc, XLEN)
    now = 0
    for at in sorted(plan):
        if at > now:  # step every owning lane's LFSR once per cycle, unchecked
            dut.insn.value = pack([encode_brr(0, offset)] * lanes, XLEN)
            await ClockCycles(dut.clk, at - now, FallingEdge)
            for unit, states in zip(units, sequences, strict=True):
                unit.state = int(states[at])
        insn = [encode_brr(plan[at].get(i, 0), offset) for i in range(lanes)]
        dut.insn.value = pack(insn, XLEN)
        await ReadOnly()
        expected = golden.step(insn=insn, pc=pc, valid=valid)
        context = f"sweep cycle {at}: freqs {plan[at]}"
        for name in outputs:
            if name == "redirect_target" and not target_adder:
                continue
            check_equal(at, name, int(getattr(dut, name).value), expected[name], context)
        await FallingEdge(dut.clk)
        now = at + 1
    dut._log.info("outcome sweep: %d brr presented over %d cycles", len(plan), now)
