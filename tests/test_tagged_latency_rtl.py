"""The tagged compressor's ``latency`` option: RTL (Amaranth simulator) against the
golden cycle model with the same latency, every cycle, with backpressure; the bypass
of the three-stage form shown necessary (a mutant without it is caught); the golden
model's latency only delays messages (checked from its definition, not the RTL)."""

import random

import pytest

from hwprof.golden import tagged as gt
from hwprof.golden.tagged import aliasing_keys
from hwprof.rtl import tagged as rt
from tests.samplers_stim import key_stream
from tests.test_samplers_rtl import run

PARAMS = {"entries": 8, "ways": 2, "hit_bits": 4, "miss_bits": 2, "evict_hits": 3,
          "replace_misses": 2}  # fmt: skip


@pytest.mark.parametrize("latency", [1, 3])
@pytest.mark.parametrize("kind", ["ping-pong", "alias"])
def test_rtl_matches_golden_at_latency(latency, kind, seed):
    rng = random.Random(seed)
    model = gt.TaggedCompressor(latency=latency, **PARAMS)
    aliases = aliasing_keys(model, 3)
    dut = rt.TaggedCompressor(latency=latency, **PARAMS)
    keys = key_stream(rng, kind, 200, aliases=aliases)
    assert run(dut, model, rng, keys) is None, f"seed {seed}"


@pytest.mark.parametrize("ways", [1, 4])
@pytest.mark.parametrize("kind", ["ping-pong", "alias"])
def test_rtl_matches_golden_other_ways(ways, kind, seed):
    """Latency 3 selects the forwarded write last, with one way choice per way that
    can be forwarded: checked beyond the default 2 ways (more tag values than ways)."""
    rng = random.Random(seed)
    params = {**PARAMS, "entries": 4 * ways, "ways": ways, "tag_bits": 3}
    model = gt.TaggedCompressor(latency=3, **params)
    aliases = aliasing_keys(model, ways + 2)
    dut = rt.TaggedCompressor(latency=3, **params)
    keys = key_stream(rng, kind, 200, aliases=aliases)
    assert run(dut, model, rng, keys) is None, f"seed {seed}"


def test_without_bypass_is_caught(seed):
    """Back-to-back tuples on one set read stale entries without the bypass."""
    rng = random.Random(seed)
    model = gt.TaggedCompressor(latency=3, **PARAMS)
    aliases = aliasing_keys(model, 3)
    dut = rt.TaggedCompressor(latency=3, bypass=False, **PARAMS)
    keys = key_stream(rng, "alias", 200, aliases=aliases)
    assert run(dut, model, rng, keys, ready_p=1.0, valid_p=1.0) is not None, f"seed {seed}"


def test_golden_latency_only_delays_messages(seed):
    """Same messages in the same order; without backpressure exactly 2 cycles later."""
    rng = random.Random(seed)
    keys = list(key_stream(rng, "mix", 500))
    shown = {}
    for latency in (1, 3):
        model = gt.TaggedCompressor(latency=latency, **PARAMS)
        shown[latency] = [model.step(in_valid=1, in_key=k, out_ready=1) for k in keys]
        shown[latency] += [model.step(out_ready=1) for _ in range(3)]
        assert all(s["in_ready"] for s in shown[latency])
    messages = {
        lat: [(i, s["out_key"], s["out_count"]) for i, s in enumerate(out) if s["out_valid"]]
        for lat, out in shown.items()
    }
    assert messages[1], "the stream produced no message"
    assert messages[3] == [(i + 2, k, c) for i, k, c in messages[1]]


def test_bad_latency():
    with pytest.raises(ValueError, match="latency must be 1 or 3, not 2"):
        rt.TaggedCompressor(latency=2)
    with pytest.raises(ValueError, match="latency must be 1 or 3, not 2"):
        gt.TaggedCompressor(latency=2)
