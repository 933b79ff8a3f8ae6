"""Multi-hash profiler on Verilator: every interval's readout against the golden model.

Environment (JSON, see harness.py): ``params`` (the top's parameters), ``stream``
(random, zipf, collide, at_threshold, repeated, mixed), ``tuples`` (count),
``ready`` (probability that the consumer accepts a record in a cycle). The
block RAM design's (``ways > 0``) ``tuples.ready`` is checked every cycle against the
stall rule's cycle model (:class:`hwprof.golden.multihash_stall.ReadoutStall`). The
throughput (accepted tuples / cycles while tuples are offered) is logged as
``THROUGHPUT tuples=.. cycles=.. stalls=..``.
"""

from __future__ import annotations

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, ReadOnly
from harness import Mismatch, golden_params, param, seed, start_in_reset
from multihash_streams import (
    at_threshold_stream,
    collision_stream,
    random_keys,
    repeated_stream,
    zipf_keys,
)

from hwprof.golden.multihash import MultiHashConfig, MultiHashProfiler
from hwprof.golden.multihash_stall import ReadoutStall


def make_stream(kind, config, rng, n):
    kb = config.key_bits
    distinct = max(4, 2 * config.interval_length // config.threshold)
    makers = {
        "random": lambda k: random_keys(rng, k, kb, distinct=distinct),
        "zipf": lambda k: zipf_keys(rng, k, kb, distinct=20 * distinct),
        "collide": lambda k: collision_stream(config, rng, k),
        "at_threshold": lambda k: at_threshold_stream(
            config, rng, max(1, k // config.interval_length)
        ),
        "repeated": lambda k: repeated_stream(config, rng, k),
    }
    if kind != "mixed":
        return makers[kind](n)
    keys = []
    for name in ("random", "zipf", "collide", "at_threshold", "repeated"):
        keys += makers[name](n // 5)
    return keys


@cocotb.test()
async def multihash_matches_golden(dut):
    params = golden_params()
    config = MultiHashConfig(**params)
    rng = np.random.default_rng(seed())
    keys = make_stream(param("stream", "mixed"), config, rng, param("tuples", 5000))
    ready_p = param("ready", 0.5)
    model = MultiHashProfiler(**params)
    expected = []
    for key in keys:
        profile = model.step(key)
        if profile is not None:
            expected.append(profile)

    await start_in_reset(dut, {"tuples__valid": 0, "records__ready": 0, "cfg_we": 0})
    # the stall rule of the block RAM design (the CAM's differs), cycle by cycle
    rule = ReadoutStall(config.interval_length, config.threshold) if config.ways else None
    got, current = [], []
    i = cycles = stalls = ended = 0
    drain = 0
    while i < len(keys) or drain < 4 * config.accumulator + 20:
        offer = i < len(keys)
        dut.tuples__valid.value = int(offer)
        if offer:
            dut.tuples__payload.value = keys[i]
        else:
            drain += 1
        dut.records__ready.value = int(rng.random() < ready_p)
        await ReadOnly()
        if int(dut.records__valid.value) and int(dut.records__ready.value):
            payload = int(dut.records__payload.value)
            key = payload & ((1 << config.key_bits) - 1)
            count = (payload >> config.key_bits) & ((1 << config.counter_bits) - 1)
            end = payload >> (config.key_bits + config.counter_bits)
            if end:
                n = len(got)
                want = expected[n] if n < len(expected) else None
                if current != want:
                    raise Mismatch(
                        f"cycle {cycles}: interval {n} readout {current[:6]}... "
                        f"({len(current)} records), golden model says "
                        f"{(want or [])[:6]}... ({len(want or [])} records); "
                        f"reproduce with seed {seed()}"
                    )
                got.append(current)
                current = []
            else:
                current.append((key, count))
        ready = int(dut.tuples__ready.value)
        if rule is not None and ready != rule.ready:
            raise Mismatch(f"cycle {cycles}: tuples.ready = {ready}, the stall rule says "
                           f"{int(rule.ready)} (position {rule.position}, threshold "
                           f"{rule.threshold}); reproduce with seed {seed()}")  # fmt: skip
        if rule is not None:
            ends = offer and ready and rule.last
            rule.clock(bool(offer and ready), bool(dut.records__ready.value),
                       len(expected[ended]) if ends else None)  # fmt: skip
            ended += ends
        if offer:
            cycles += 1
            if ready:
                i += 1
            else:
                stalls += 1
        await FallingEdge(dut.clk)
    if len(got) != len(expected):
        raise Mismatch(f"{len(got)} intervals read out, golden model says {len(expected)}; "
                       f"reproduce with seed {seed()}")  # fmt: skip
    dut._log.info(f"THROUGHPUT tuples={len(keys)} cycles={cycles} stalls={stalls} "
                  f"intervals={len(got)} records={sum(map(len, got))}")  # fmt: skip
