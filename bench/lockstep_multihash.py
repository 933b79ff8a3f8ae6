"""Lockstep check: the worktree's block RAM multi-hash RTL against a reference revision.

Two ``MultiHash`` instances in one Amaranth simulation, the worktree's
``hwprof/rtl/multihash_bram.py`` and the same file at a git revision (``--ref``,
read with ``git show`` and loaded as a module: the reference is a copy held by
this script, not a file of the package), driven by the same seeded random
stimulus: tuples from a skewed key pool with idle cycles, a consumer that
withholds ``records.ready`` in bursts, and configuration writes (interval and
threshold, taking effect at the next boundary). Every cycle compares
``tuples.ready``, ``records.valid`` and ``records.payload``; the first difference
is reported and the exit status is 1.

``--mutant`` replaces the reference by a one-cycle-late readout address (its
``ro_set`` registered once more): the check must report it.

    PYTHONPATH=$PWD python bench/lockstep_multihash.py [--ref REV] [--cycles N]
        [--seed S] [--sets default,small,wide,many] [--pick prefix|address] [--mutant]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from amaranth.hdl import Elaboratable, Module, Signal
from amaranth.lib import wiring
from amaranth.sim import Simulator

from hwprof.rtl.multihash import MultiHash
from hwprof.rtl.multihash_config import multihash_config, multihash_signature, readout_pick_for

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "hwprof/rtl/multihash_bram.py"

#: parameter sets: the default design (reset interval and threshold small enough for
#: boundaries in a short run), a small one and an 8-way P0 / R1 one
PARAMS = {
    "default": dict(interval_length=150, threshold=4),
    "small": dict(tables=2, counters=64, counter_bits=8, accumulator=8, ways=2,
                  interval_length=12, threshold=1, pc_bits=4, value_bits=4),
    "wide": dict(tables=3, counters=192, counter_bits=10, accumulator=24, ways=8,
                 interval_length=60, threshold=3, pc_bits=6, value_bits=6,
                 retain=False, reset=True, conservative=False),
    # more sets than PREFIX_PICK_SETS: the readout's pick from its address register
    "many": dict(tables=2, counters=256, counter_bits=10, accumulator=80, ways=2,
                 interval_length=120, threshold=2, pc_bits=6, value_bits=6),
}


def load_reference(ref, mutant=False):
    """A function ``params -> component``: the block RAM design of ``SOURCE`` at git
    revision ``ref`` (its ``MultiHashBram``, or, before the design was split into stage
    submodules, its ``elaborate_set_associative`` on a component of the same ports)."""
    text = subprocess.run(["git", "show", f"{ref}:{SOURCE}"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    if mutant:
        # the readout's set address a cycle late: registered once more (the address as
        # an encoder on the flops before 2026-11-26, or as a register since)
        sites = {"m.d.comb += ro_set.eq(first_set[:set_bits])":
                 "m.d.sync += ro_set.eq(first_set[:set_bits])",
                 "m.d.sync += ro_set.eq(ro_next)":
                 "_late = Signal.like(ro_set); m.d.sync += [_late.eq(ro_next), ro_set.eq(_late)]",
                 "m.d.sync += p.ro_set.eq(ro_next)":
                 "_late = Signal.like(p.ro_set); "
                 "m.d.sync += [_late.eq(ro_next), p.ro_set.eq(_late)]"}
        site = next((k for k in sites if text.count(k) == 1), None)
        if site is None:
            raise SystemExit(f"no mutant site in {ref}:{SOURCE}")
        text = text.replace(site, sites[site])
    name = "hwprof.rtl._multihash_bram_reference"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "hwprof.rtl"
    exec(compile(text, f"{ref}:{SOURCE}", "exec"), module.__dict__)
    if hasattr(module, "MultiHashBram"):
        return lambda params: module.MultiHashBram(multihash_config(**params),
                                                   readout_pick=_pick(params))
    return lambda params: _Legacy(params, module.elaborate_set_associative)


def _pick(params, pick=None):
    return readout_pick_for(multihash_config(**params), pick)


class _Legacy(wiring.Component):
    """The ports and attributes an ``elaborate_set_associative`` of a revision before the
    split reads."""

    def __init__(self, params, elaborate):
        self.config = multihash_config(**params)
        self.bypass, self.readout_pick, self._elaborate = True, _pick(params), elaborate
        super().__init__(multihash_signature(self.config))

    def elaborate(self, platform):
        return self._elaborate(self)


class Pair(Elaboratable):
    """Both designs, their inputs driven from one packed signal (one settle a cycle)."""

    def __init__(self, new, old):
        self.new, self.old = new, old
        c = new.config
        self.widths = [1, c.key_bits, 1, 1, c.counter_bits, c.counter_bits]
        self.packed = Signal(sum(self.widths))

    def fields(self):
        out, pos = [], 0
        for width in self.widths:
            out.append(self.packed[pos:pos + width])
            pos += width
        return out

    def pack(self, values):
        word, pos = 0, 0
        for value, width in zip(values, self.widths, strict=True):
            word |= (value & ((1 << width) - 1)) << pos
            pos += width
        return word

    def elaborate(self, platform):
        m = Module()
        m.submodules.new, m.submodules.old = self.new, self.old
        valid, key, rready, we, interval, threshold = self.fields()
        for dut in (self.new, self.old):
            m.d.comb += [dut.tuples.valid.eq(valid), dut.tuples.payload.as_value().eq(key),
                         dut.records.ready.eq(rready), dut.cfg_we.eq(we),
                         dut.cfg_interval.eq(interval), dut.cfg_threshold.eq(threshold)]
        return m


def stimulus(config, rng, cycles):
    """Per cycle (valid, key, records.ready, cfg_we, interval, threshold)."""
    kb = config.key_bits
    pool = [int(k) for k in rng.integers(0, 1 << min(kb, 62), size=3 * config.accumulator)]
    weights = 1.0 / np.arange(1, len(pool) + 1)
    weights /= weights.sum()
    ready, out = True, []
    for _ in range(cycles):
        if rng.random() < 0.08:
            ready = not ready  # bursts of backpressure
        we = rng.random() < 0.01
        interval = int(rng.integers(max(2, config.accumulator // 2), 4 * config.accumulator))
        interval = min(interval, (1 << config.counter_bits) - 1)
        threshold = int(rng.integers(1, min(interval, 8) + 1))
        key = pool[rng.choice(len(pool), p=weights)] if rng.random() < 0.9 \
            else int(rng.integers(0, 1 << min(kb, 62)))
        out.append((int(rng.random() < 0.85), key, int(ready or rng.random() < 0.3), int(we),
                    interval, threshold))
    return out


def lockstep(name, params, elaborate_ref, cycles, seed, pick=None):
    new = MultiHash(**params, readout_pick=pick)
    old = elaborate_ref(params)
    pair = Pair(new, old)
    stim = stimulus(new.config, np.random.default_rng(seed), cycles)
    outputs = [("tuples.ready", lambda d: d.tuples.ready),
               ("records.valid", lambda d: d.records.valid),
               ("records.payload", lambda d: d.records.payload.as_value())]
    result = {"mismatch": None, "records": 0, "stalls": 0}

    async def bench(ctx):
        for cycle, values in enumerate(stim):
            ctx.set(pair.packed, pair.pack(values))
            for label, get in outputs:
                a, b = ctx.get(get(new)), ctx.get(get(old))
                if a != b:
                    result["mismatch"] = (cycle, label, a, b)
                    return
            result["records"] += ctx.get(new.records.valid) & values[2]
            result["stalls"] += values[0] & (1 - ctx.get(new.tuples.ready))
            await ctx.tick()

    sim = Simulator(pair)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    start = time.time()
    sim.run()
    return result, time.time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="HEAD", help="reference git revision (HEAD)")
    parser.add_argument("--cycles", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sets", default=",".join(PARAMS))
    parser.add_argument("--pick", choices=("prefix", "address"), default=None,
                        help="the worktree design's readout_pick (default: by its sets)")
    parser.add_argument("--mutant", action="store_true",
                        help="reference with a one-cycle-late readout address (must fail)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.sets.split(",")) - set(PARAMS))
    if unknown:
        parser.error(f"unknown parameter sets {', '.join(unknown)} (known: {', '.join(PARAMS)})")
    elaborate_ref = load_reference(args.ref, args.mutant)
    failed = False
    for name in args.sets.split(","):
        result, seconds = lockstep(name, PARAMS[name], elaborate_ref, args.cycles,
                                   args.seed, args.pick)
        status = "identical" if result["mismatch"] is None else \
            "MISMATCH at cycle {} on {}: new {} reference {}".format(*result["mismatch"])
        print(f"{name}: seed {args.seed}, {args.cycles} cycles, {result['records']} records "
              f"taken, {result['stalls']} stalled cycles, {seconds:.0f} s: {status}",
              flush=True)
        failed |= result["mismatch"] is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
