"""The multi-hash peripheral (its own clock domain, AsyncFIFO) against the golden model.

The Amaranth simulator runs the core's domain (``sync``) and the profiler's (``prof``)
at a clock ratio; a testbench offers tuples as a core would (never waiting) and reads
the profile back as software would (``done``, ``candidates``, ``index``, ``ack``). A
monitor records the tuples the multihash top accepts in ``prof``. Checks: the
accepted tuples are the offered ones in order, less exactly ``dropped`` of them;
the profile read back equals the golden multi-hash model run on the accepted tuples.
"""

from __future__ import annotations

import numpy as np
import pytest
from amaranth.hdl import ClockDomain, Elaboratable, Module
from amaranth.sim import Simulator

from cocotb_tests.multihash_streams import collision_stream, zipf_keys
from hwprof.golden.multihash import MultiHashConfig, run_plain
from hwprof.system.profiler import MultiHashPeripheral

#: small multihash (set-associative accumulator in block RAM, as in the catalog default)
PARAMS = {"tables": 4, "counters": 64, "accumulator": 8, "pc_bits": 8, "value_bits": 8,
          "ways": 2}  # fmt: skip
#: threshold >= candidates + 7 and interval >= accumulator + 7: the top never stalls
INTERVAL, THRESHOLD = 64, 12
CORE_PERIOD = 1e-8


class _Clocked(Elaboratable):
    def __init__(self, dut):
        self.dut = dut

    def elaborate(self, platform):
        m = Module()
        m.domains.prof = ClockDomain("prof")
        m.submodules.dut = self.dut
        return m


def keys_for(params, rng, n):
    """A stream with candidates: heavy hitters (Zipf) and keys colliding in table 0."""
    config = MultiHashConfig(**params)
    half = n // 2
    return zipf_keys(rng, half, config.key_bits, a=1.4, distinct=60) + collision_stream(
        config, rng, n - half, hot=4, cold=30)


def run(dut, keys, rng, *, ratio=1.0, gaps=(1, 2), burst=None, edges=False, timeout=3000):
    """Offer ``keys`` from ``sync``, read every interval back; returns a dict of results.

    ``gaps``: idle core cycles between two offers, drawn uniformly. ``burst = (on,
    off)``: instead, ``on`` tuples on consecutive cycles, then ``off`` idle cycles.
    ``ratio``: profiler clock frequency / core clock frequency. ``edges``: select
    ``source = 1`` and offer ``keys`` on ``branches`` while ``loads`` carries other
    tuples every cycle. After the last offer
    the run goes on until every accepted tuple has reached the multihash top, then
    until the last interval is read back (at most ``timeout`` core cycles).
    """
    mh = dut.multihash
    out = {"profiles": [], "accepted": [], "stalls": 0, "end": False}

    async def core(ctx):
        ctx.set(dut.interval, INTERVAL)
        ctx.set(dut.threshold, THRESHOLD)
        ctx.set(dut.start, 1)
        if edges:
            ctx.set(dut.source, 1)
            ctx.set(dut.loads.valid, 1)
            ctx.set(dut.loads.payload.as_value(), 0x5A5A)
        port = dut.branches if edges else dut.loads
        await ctx.tick()
        ctx.set(dut.start, 0)
        await ctx.tick().until(dut.running)
        for i, key in enumerate(keys):
            ctx.set(port.valid, 1)
            ctx.set(port.payload.as_value(), key)
            await ctx.tick()
            if burst is None:
                idle = int(rng.choice(gaps))
            else:
                idle = burst[1] if (i + 1) % burst[0] == 0 else 0
            ctx.set(port.valid, 0)
            if idle:
                await ctx.tick().repeat(idle)
        waited = 0
        while waited < timeout:  # every accepted tuple in the top, then its readout
            offered, dropped = ctx.get(dut.offered), ctx.get(dut.dropped)
            if len(out["accepted"]) == 2 + offered - dropped:
                break
            await ctx.tick()
            waited += 1
        await ctx.tick().repeat(int(4 * (PARAMS["accumulator"] + 10) / min(ratio, 1)))
        while ctx.get(dut.done) and waited < timeout:
            await ctx.tick()
            waited += 1
        for name in ("offered", "dropped", "intervals", "overrun", "done"):
            out[name] = ctx.get(getattr(dut, name))
        out["end"] = True

    async def software(ctx):
        while not out["end"]:
            await ctx.tick()
            if not ctx.get(dut.done):
                continue
            profile = []
            for i in range(ctx.get(dut.candidates)):
                ctx.set(dut.index, i)
                await ctx.tick()
                key = (ctx.get(dut.cand_pc) << PARAMS["value_bits"]) | ctx.get(dut.cand_value)
                profile.append((key, ctx.get(dut.cand_count)))
            out["profiles"].append(profile)
            ctx.set(dut.ack, 1)
            await ctx.tick()
            ctx.set(dut.ack, 0)

    async def monitor(ctx):
        fields = (mh.tuples.valid, mh.tuples.ready, mh.tuples.payload.as_value())
        async for _clk, _rst, valid, ready, key in ctx.tick("prof").sample(*fields):
            if valid and ready:
                out["accepted"].append(key)
            elif valid:
                out["stalls"] += 1
            if out["end"]:
                break

    sim = Simulator(_Clocked(dut))
    sim.add_clock(CORE_PERIOD, domain="sync")
    sim.add_clock(CORE_PERIOD / ratio, domain="prof")
    sim.add_testbench(core)
    sim.add_testbench(software)
    sim.add_process(monitor)
    sim.run()
    start = out["accepted"][:2]
    assert tuple(start) == dut.start_keys, "the start interval's two tuples come first"
    out["accepted"] = out["accepted"][2:]
    return out


def golden(params, keys):
    return run_plain(keys, interval_length=INTERVAL, threshold=THRESHOLD, **params)


def check_accepted(out, keys):
    """The accepted tuples are ``keys`` in order less exactly ``dropped`` of them."""
    accepted = out["accepted"]
    assert out["offered"] == len(keys)
    assert out["dropped"] == len(keys) - len(accepted)
    it = iter(keys)
    assert all(any(a == k for k in it) for a in accepted), "accepted is not a subsequence"


@pytest.mark.parametrize("hash_seed", [1, 7])
def test_profile_equals_golden(hash_seed, seed):
    params = PARAMS | {"hash_seed": hash_seed}
    rng = np.random.default_rng(seed)
    keys = keys_for(params, rng, 3 * INTERVAL)
    out = run(MultiHashPeripheral(**params), keys, rng)
    check_accepted(out, keys)
    want = golden(params, keys)
    assert out["dropped"] == 0 and out["stalls"] == 0, f"seed {seed}"
    assert len(want) == 3 and sum(map(len, want)) > 0, f"seed {seed}"
    assert out["profiles"] == want, f"seed {seed}"
    assert out["intervals"] == 3 and not out["overrun"] and not out["done"]


@pytest.fixture(scope="module")
def ratio_stream():
    """One stream for every clock ratio (fixed seed: the profiles are compared across runs)."""
    rng = np.random.default_rng(35)
    return keys_for(PARAMS, rng, 3 * INTERVAL)


@pytest.mark.parametrize("ratio", [0.75, 0.5, 2.0])
def test_clock_ratios_give_the_same_profile(ratio, ratio_stream, seed):
    """Profiler at 0.75, 0.5 and 2 times the core clock: no drop, the same profile.

    The same profile as at ratio 1 (``test_profile_equals_golden``): the golden
    model's on the stream. Offers are at least two idle cycles apart, below the
    slowest profiler's rate.
    """
    rng = np.random.default_rng(seed)
    out = run(MultiHashPeripheral(**PARAMS), ratio_stream, rng, ratio=ratio, gaps=(2, 3))
    check_accepted(out, ratio_stream)
    assert out["dropped"] == 0 and out["stalls"] == 0, f"seed {seed}"
    want = golden(PARAMS, ratio_stream)
    assert sum(map(len, want)) > 0
    assert out["profiles"] == want, f"seed {seed}"


def test_overflow_counts_every_drop(seed):
    """Bursts of a tuple per core cycle into a profiler at half the core clock (edge source).

    The accepted tuples are the offered ones less exactly ``dropped``; their profile is
    the golden model's on the accepted tuples.
    """
    rng = np.random.default_rng(seed)
    keys = keys_for(PARAMS, rng, 5 * INTERVAL)
    dut = MultiHashPeripheral(edges=True, fifo_depth=8, **PARAMS)
    out = run(dut, keys, rng, ratio=0.5, burst=(40, 24), edges=True)
    check_accepted(out, keys)
    assert out["dropped"] > 0 and len(out["accepted"]) >= 3 * INTERVAL, f"seed {seed}"
    want = golden(PARAMS, out["accepted"])
    assert out["profiles"] == want, f"seed {seed}"
    assert out["intervals"] == len(want) and not out["overrun"]


def test_checker_catches_no_conservative_update(seed):
    """A peripheral built with C0 gives a profile that the C1 golden model rejects.

    The stream is drawn until the two golden models disagree on it (on some streams
    conservative update changes no candidate).
    """
    rng = np.random.default_rng(seed)
    c0 = PARAMS | {"conservative": False}
    for _ in range(100):
        keys = keys_for(PARAMS, rng, 3 * INTERVAL)
        if golden(c0, keys) != golden(PARAMS, keys):
            break
    out = run(MultiHashPeripheral(conservative=False, **PARAMS), keys, rng)
    check_accepted(out, keys)
    assert out["profiles"] == golden(c0, keys), f"seed {seed}"
    assert out["profiles"] != golden(PARAMS, keys), f"seed {seed}"


@pytest.mark.parametrize(("kwargs", "error", "text"), [
    ({"interval_length": 100}, ValueError, "interval_length is written by software"),
    ({"fifo_depth": 12}, ValueError, "fifo_depth must be a power of two, at least 2, not 12"),
    ({"edges": 1}, TypeError, "edges must be a bool, not 1"),
    ({"domain": "sync"}, ValueError, "domain must be a name other than 'sync'"),
    ({"tables": 3}, ValueError, "counters / tables must be a power of two"),
])  # fmt: skip
def test_bad_parameters(kwargs, error, text):
    with pytest.raises(error, match=text):
        MultiHashPeripheral(**kwargs)
