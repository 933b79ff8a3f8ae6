"""The multi-hash peripheral (its own clock domain, AsyncFIFO) against the golden model.

The Amaranth simulator runs the core's domain (``sync``) and the profiler's (``prof``)
at a clock ratio; a testbench offers tuples as a core would (never waiting) and reads
the profile back as software would (``done``, ``candidates``, ``index``, ``ack``). A
monitor records the tuples the multihash top accepts in ``prof``. Checks: the
accepted tuples are the offered ones in order, less exactly ``dropped`` of them;
the profile read back equals the golden multi-hash model run on the accepted tuples.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from amaranth.hdl import ClockDomain, Elaboratable, Module
from amaranth.sim import Simulator

from hwprof.cocotb_tests.multihash_streams import collision_stream, zipf_keys
from hwprof.golden.multihash import MultiHashConfig, run_plain
from hwprof.system.profiler import (
    BLOCK_OFFSET,
    REGISTERS,
    MultiHashPeripheral,
    parse_profile_output,
    register_table,
)

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


def run(dut, keys, rng, *, ratio=1.0, gaps=(1, 2), burst=None, edges=False, phases=None,
        lag=0, timeout=3000):
    """Offer ``keys`` from ``sync``, read every interval back; returns a dict of results.

    ``gaps``: idle core cycles between two offers, drawn uniformly. ``burst = (on,
    off)``: instead, ``on`` tuples on consecutive cycles, then ``off`` idle cycles.
    ``ratio``: profiler clock frequency / core clock frequency. ``edges``: select
    ``source = 1`` and offer ``keys`` on ``branches`` while ``loads`` carries other
    tuples every cycle. ``phases``: instead of ``keys``, ``[(interval, threshold,
    keys), ...]``, each started anew (the next start comes right after the last
    offer). ``lag``: software reads an interval only once ``lag`` more have ended
    (or the run is over). After the last offer the run goes on until every accepted
    tuple has reached the multihash top, then until the last interval is read back
    (at most ``timeout`` core cycles). ``accepted`` holds the last phase's tuples.
    """
    mh = dut.multihash
    phases = phases or [(INTERVAL, THRESHOLD, keys)]

    async def write(ctx, name, value):
        ctx.set(getattr(dut, f"{name}_w_data"), value)
        ctx.set(getattr(dut, f"{name}_w_stb"), 1)
        await ctx.tick()
        ctx.set(getattr(dut, f"{name}_w_stb"), 0)

    out = {"profiles": [], "phases": [], "stalls": 0, "end": False, "drained": False}
    port = dut.branches if edges else dut.loads

    async def offer(ctx, keys):
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

    async def core(ctx):
        if edges:
            await write(ctx, "source", 1)
            ctx.set(dut.loads.valid, 1)
            ctx.set(dut.loads.payload.as_value(), 0x5A5A)
        for interval, threshold, keys in phases:
            await write(ctx, "interval", interval)
            await write(ctx, "threshold", threshold)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            await ctx.tick().until(dut.running)
            await offer(ctx, keys)
        waited = 0
        while waited < timeout:  # every accepted tuple in the top, then its readout
            offered, dropped = ctx.get(dut.offered), ctx.get(dut.dropped)
            if out["phases"] and len(out["phases"][-1]) == 2 + offered - dropped:
                break
            await ctx.tick()
            waited += 1
        await ctx.tick().repeat(int(4 * (PARAMS["accumulator"] + 10) / min(ratio, 1)))
        out["drained"] = True
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
            if not out["drained"] and ctx.get(dut.intervals) < len(out["profiles"]) + 1 + lag:
                continue
            profile = []
            for i in range(ctx.get(dut.candidates)):
                await write(ctx, "index", i)
                key = (ctx.get(dut.cand_pc) << PARAMS["value_bits"]) | ctx.get(dut.cand_value)
                profile.append((key, ctx.get(dut.cand_count)))
            out["profiles"].append(profile)
            ctx.set(dut.ack, 1)
            await ctx.tick()
            ctx.set(dut.ack, 0)

    async def monitor(ctx):
        fields = (mh.cfg_we, mh.tuples.valid, mh.tuples.ready, mh.tuples.payload.as_value())
        async for _clk, _rst, cfg_we, valid, ready, key in ctx.tick("prof").sample(*fields):
            if cfg_we:  # a start: its configuration written, its two tuples next
                out["phases"].append([])
            if valid and ready:
                out["phases"][-1].append(key)
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
    assert len(out["phases"]) == len(phases)
    for accepted in out["phases"]:
        assert tuple(accepted[:2]) == dut.start_keys, "a start's two tuples come first"
    out["accepted"] = out["phases"][-1][2:]
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


def test_top_stalls_lose_nothing(seed):
    """At threshold 3 the multihash top stalls while a readout is incomplete (its own
    condition, threshold < candidates + 7): the FIFO holds the tuples, drops (if any)
    are counted, and the profile is still the golden model's on the accepted tuples."""
    rng = np.random.default_rng(seed)
    keys = keys_for(PARAMS, rng, 3 * INTERVAL)
    out = run(MultiHashPeripheral(fifo_depth=4, **PARAMS), None, rng, gaps=(0, 1),
              phases=[(INTERVAL, 3, keys)])  # fmt: skip
    check_accepted(out, keys)
    assert out["stalls"] > 0, f"seed {seed}"
    want = run_plain(out["accepted"], interval_length=INTERVAL, threshold=3, **PARAMS)
    assert out["profiles"] == want, f"seed {seed}"


def test_restart_and_slow_software(seed):
    """A start mid-interval profiles afresh with the new configuration; software that
    reads each interval only after the next one ended still gets every one, in order."""
    rng = np.random.default_rng(seed)
    first = keys_for(PARAMS, rng, INTERVAL // 2)
    keys = keys_for(PARAMS, rng, 3 * 50)
    out = run(MultiHashPeripheral(**PARAMS), None, rng, lag=1,
              phases=[(INTERVAL, THRESHOLD, first), (50, 10, keys)])  # fmt: skip
    check_accepted(out, keys)
    want = run_plain(keys, interval_length=50, threshold=10, **PARAMS)
    assert sum(map(len, want)) > 0
    assert out["profiles"] == want, f"seed {seed}"
    assert out["intervals"] == 3 and not out["overrun"] and not out["done"]


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
    ({"fifo_depth": 12}, ValueError, "fifo_depth must be a power of two from 2 to 1024, not 12"),
    ({"fifo_depth": 2048}, ValueError, "fifo_depth must be a power of two from 2 to 1024"),
    ({"edges": 1}, TypeError, "edges must be a bool, not 1"),
    ({"domain": "sync"}, ValueError, "domain must be a name other than 'sync'"),
    ({"tables": 3}, ValueError, "counters / tables must be a power of two"),
])  # fmt: skip
def test_bad_parameters(kwargs, error, text):
    with pytest.raises(error, match=text):
        MultiHashPeripheral(**kwargs)


HEADER = Path(__file__).parent.parent / "hwprof" / "system" / "firmware" / "hwprof_mh.h"
CSR_BASE = 0x1000_0000  # the system's CSR window (docs/system.md)


def test_header_addresses_are_the_register_table():
    """hwprof_mh.h's fallback addresses are REGISTERS at BLOCK_OFFSET of the CSR window."""
    defines = dict(re.findall(r"#define HWPROF_MULTIHASH_(\w+) (0x[0-9a-f]+)", HEADER.read_text()))
    want = {name: CSR_BASE + BLOCK_OFFSET + offset for name, offset, *_ in REGISTERS}
    assert {k: int(v, 16) for k, v in defines.items()} == want


@pytest.mark.parametrize("include", ["hwprof_mh.h", "hwprof.h"])
def test_header_compiles(tmp_path, include):
    """The profiler's functions compile for the system's core, warnings as errors, from
    hwprof_mh.h or from the system's hwprof.h, which includes it."""
    pytest.importorskip("ziglang")
    source = tmp_path / "use.c"
    source.write_text(f'#include "{include}"\nuint32_t out[4];\nint main(void) {{\n'
                      "    hwprof_mh_config(10000, 100);\n    int n = hwprof_mh_wait();\n"
                      "    for (int i = 0; i < n; i++) hwprof_mh_read(i, &out[0], &out[1], "
                      "&out[2]);\n    out[3] = hwprof_mh_dropped();\n    return 0;\n}\n")
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", "riscv32-freestanding-none",
           "-mcpu=generic_rv32+m", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HEADER.parent}",
           "-c", str(source), "-o", str(tmp_path / "use.o")]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_docs_register_table_is_generated():
    """docs/system-profiler.md holds register_table()'s output as it is now."""
    docs = Path(__file__).parent.parent / "docs" / "system-profiler.md"
    assert register_table() in docs.read_text()


def test_parse_profile_output():
    """hwprof_mh_print's lines (as value_profile.c and mh_profile.c print them) back into
    intervals of (pc << 32 | value, count) and fields; malformed output is refused."""
    text = ("I 00000002\nC 00000010 0000002a 00000005\nC 00000014 ffffffff 00000003\n"
            "I 00000000\nO 00000064\nD 00000000\nP 00000010 00000abc\n")  # fmt: skip
    profiles, fields = parse_profile_output(text)
    assert profiles == [[(0x10_0000002A, 5), (0x14_FFFFFFFF, 3)], []]
    assert fields == {"O": [100], "D": [0], "P": [0x10, 0xABC]}
    for bad in ("C 1 2 3\n", "I 1\nC 1 2\n", "I 2\nC 1 2 3\n", "I 1\nC 1 2 x\n",
                "hello world\n"):  # fmt: skip
        with pytest.raises(ValueError):
            parse_profile_output(bad)
