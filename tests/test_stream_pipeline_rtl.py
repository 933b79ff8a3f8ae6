"""The pipelined stream compressors of issue 15 (docs/fpga.md): ``H[X_r]_n`` at
latency 1 and 3, ``A_k`` at latency 1 and 2, and the ``skid`` option of these and
the tagged compressor, in the Amaranth simulator against the golden cycle models
with the same options, every cycle. The forwarding is shown necessary (mutants
without it are caught); the golden latency only delays messages (checked from the
model's own definition); the skid buffer loses and duplicates nothing across
stalls and its handshake outputs do not follow the inputs within a cycle."""

import random

import pytest

from hwprof.golden import samplers as gs
from hwprof.golden import tagged as gt
from hwprof.rtl import samplers as rs
from hwprof.rtl import tagged as rt
from hwprof.rtl.stream_pipeline import SkidBuffer
from tests.batched_inputs import simulate_batched
from tests.samplers_stim import cycles, key_stream
from tests.test_samplers_rtl import run

STRAT = {"rate": 4, "entries": 8}
H_CR = {"rate": 3, "entries": 4, "sampler": "cr", "count_bits": 3, "seed": 11}
ASSOC = {"entries": 3, "in_count_bits": 4, "count_bits": 6}
TAGGED = {"entries": 8, "ways": 2, "hit_bits": 4, "miss_bits": 2, "evict_hits": 3,
          "replace_misses": 2}  # fmt: skip


def same_counter_keys(model, count=3, start=1):
    """Keys that hash to one counter of a golden ``H[X]_n`` (back-to-back hazards)."""
    return gs.same_index_keys(model.hash, count, start)


@pytest.mark.parametrize("latency", [1, 3])
@pytest.mark.parametrize("params", [STRAT, H_CR], ids=["periodic", "cr"])
def test_stratified_matches_golden_at_latency(params, latency, seed):
    rng = random.Random(seed)
    model = gs.Stratified(**params, latency=latency)
    dut = rs.Stratified(**params, latency=latency)
    keys = key_stream(rng, "alias", 250, aliases=same_counter_keys(model))
    assert run(dut, model, rng, keys) is None, f"seed {seed}"


def test_stratified_without_bypass_is_caught(seed):
    """Back-to-back tuples on one counter read a stale counter without the bypass."""
    rng = random.Random(seed)
    model = gs.Stratified(**STRAT)
    dut = rs.Stratified(**STRAT, bypass=False)
    keys = key_stream(rng, "alias", 200, aliases=same_counter_keys(model))
    assert run(dut, model, rng, keys, ready_p=1.0, valid_p=1.0) is not None, f"seed {seed}"


@pytest.mark.parametrize("latency", [1, 2])
def test_assoc_table_matches_golden_at_latency(latency, seed):
    rng = random.Random(seed)
    dut = rs.AssocTable(**ASSOC, latency=latency)
    model = gt.AssocTable(**ASSOC, latency=latency)
    keys = [rng.randrange(5) for _ in range(250)]
    assert run(dut, model, rng, keys, structured_input=True, max_count=15) is None, f"seed {seed}"


def test_assoc_table_without_forwarding_is_caught(seed):
    """Without forwarding, a tuple compares against the entries before the update of
    the tuple just ahead: a key just inserted is missed (and inserted twice)."""
    rng = random.Random(seed)
    dut = rs.AssocTable(**ASSOC, forward=False)
    model = gt.AssocTable(**ASSOC)
    keys = [rng.randrange(5) for _ in range(300)]
    assert run(dut, model, rng, keys, structured_input=True, max_count=15, ready_p=1.0,
               valid_p=1.0) is not None, f"seed {seed}"  # fmt: skip


@pytest.mark.parametrize("make, slow, fast, extra", [
    (lambda lat: gs.Stratified(**STRAT, latency=lat), 3, 1, 2),
    (lambda lat: gs.Stratified(**H_CR, latency=lat), 3, 1, 2),
    (lambda lat: gt.AssocTable(**ASSOC, latency=lat), 2, 1, 1),
], ids=["periodic", "cr", "assoc"])  # fmt: skip
def test_golden_latency_only_delays_messages(make, slow, fast, extra, seed):
    """Same messages in the same order; without backpressure exactly ``extra`` later."""
    rng = random.Random(seed)
    keys = [rng.randrange(6) for _ in range(400)]
    counts = [rng.randrange(1, 16) for _ in keys]
    shown = {}
    for latency in (fast, slow):
        model = make(latency)
        shown[latency] = [model.step(in_valid=1, in_key=k, in_count=n, out_ready=1)
                          for k, n in zip(keys, counts, strict=True)]  # fmt: skip
        shown[latency] += [model.step(out_ready=1) for _ in range(4)]
        assert all(s["in_ready"] for s in shown[latency])
    messages = {
        lat: [(i, s["out_key"], s["out_count"]) for i, s in enumerate(out) if s["out_valid"]]
        for lat, out in shown.items()
    }
    assert messages[fast], "the stream produced no message"
    assert messages[slow] == [(i + extra, k, c) for i, k, c in messages[fast]]


SKID_BLOCKS = {
    "stratified": (lambda: rs.Stratified(**STRAT, skid=True),
                   lambda: gs.Stratified(**STRAT, skid=True), False),
    "h-cr-latency1": (lambda: rs.Stratified(**H_CR, latency=1, skid=True),
                      lambda: gs.Stratified(**H_CR, latency=1, skid=True), False),
    "assoc": (lambda: rs.AssocTable(**ASSOC, skid=True),
              lambda: gt.AssocTable(**ASSOC, skid=True), True),
    "tagged": (lambda: rt.TaggedCompressor(**TAGGED, skid=True),
               lambda: gt.TaggedCompressor(**TAGGED, skid=True), False),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SKID_BLOCKS))
def test_skid_matches_golden(name, seed):
    rng = random.Random(seed)
    make_dut, make_model, structured = SKID_BLOCKS[name]
    keys = [rng.randrange(6) for _ in range(250)]
    assert run(make_dut(), make_model(), rng, keys, structured_input=structured,
               max_count=15 if structured else None) is None, f"seed {seed}"  # fmt: skip


def transfers(dut, rng, keys, *, structured=False, ready_p=0.4):
    """Drive ``dut`` with ``keys`` under random stalls on both sides.

    Returns the accepted inputs, the messages taken from the output (valid and
    ready), and the cycles where a handshake output moved with an input of the
    same cycle (``tuples.ready`` with ``messages.ready``, ``messages.valid`` with
    ``tuples.valid``)."""
    accepted, taken, combinational = [], [], []
    gen = cycles(rng, keys, valid_p=0.7, ready_p=ready_p, max_count=15 if structured else None)

    async def bench(ctx):
        answer, cycle = None, 0
        while True:
            try:
                valid, key, count, ready = gen.send(answer) if cycle else next(gen)
            except StopIteration:
                break
            if structured:
                ctx.set(dut.tuples.payload.key, key)
                ctx.set(dut.tuples.payload.count, count)
            else:
                ctx.set(dut.tuples.payload, key)
            probes = []
            for v, r in ((1 - valid, 1 - ready), (valid, ready)):  # flip the inputs, then set
                ctx.set(dut.tuples.valid, v)
                ctx.set(dut.messages.ready, r)
                probes.append((ctx.get(dut.tuples.ready), ctx.get(dut.messages.valid)))
            if probes[0] != probes[1]:
                combinational.append(cycle)
            in_ready, out_valid = probes[1]
            answer = bool(valid and in_ready)
            if answer:
                accepted.append((key, count))
            if out_valid and ready:
                taken.append((ctx.get(dut.messages.payload.key),
                              ctx.get(dut.messages.payload.count)))  # fmt: skip
            cycle += 1
            await ctx.tick()
        ctx.set(dut.tuples.valid, 0)
        ctx.set(dut.messages.ready, 1)
        for _ in range(8):  # drain
            if ctx.get(dut.messages.valid):
                taken.append((ctx.get(dut.messages.payload.key),
                              ctx.get(dut.messages.payload.count)))  # fmt: skip
            await ctx.tick()

    simulate_batched(dut, bench)
    return accepted, taken, combinational


def functional(model, accepted):
    """The messages of the accepted inputs, in order, from the golden model without cycles."""
    for key, count in accepted:
        model.feed(key, count)
    return model.messages


@pytest.mark.parametrize("name", sorted(SKID_BLOCKS))
def test_skid_handshake_loses_and_duplicates_nothing(name, seed):
    rng = random.Random(seed)
    make_dut, make_model, structured = SKID_BLOCKS[name]
    keys = [rng.randrange(12) for _ in range(300)]  # 12 keys: conflicts, so messages
    accepted, taken, combinational = transfers(make_dut(), rng, keys, structured=structured)
    assert len(accepted) == len(keys), "every tuple is accepted in the end"
    want = functional(make_model(), accepted)
    assert len(want) >= 10, "too few messages to say anything"
    assert taken == want, f"seed {seed}"
    assert combinational == [], f"handshake outputs followed the inputs (seed {seed})"


def test_handshake_checks_can_fail(seed):
    """Without ``skid`` ``tuples.ready`` follows ``messages.ready`` within the cycle;
    a skid buffer that loses its skid register loses messages."""
    rng = random.Random(seed)
    keys = [rng.randrange(6) for _ in range(150)]
    accepted, taken, combinational = transfers(rs.Stratified(**STRAT), rng, keys)
    assert combinational, "the check saw no combinational ready without the skid buffer"
    assert taken == functional(gs.Stratified(**STRAT), accepted)
    dut = SkidBuffer(rs.message_layout(64, 4), keep_spare=False)
    accepted, taken, _ = transfers(dut, rng, keys, structured=True)
    assert taken != accepted


def test_skid_buffer_alone_passes_everything_in_order(seed):
    rng = random.Random(seed)
    keys = [rng.getrandbits(64) for _ in range(200)]
    dut = SkidBuffer(rs.message_layout(64, 4))
    accepted, taken, combinational = transfers(dut, rng, keys, structured=True, ready_p=0.5)
    assert len(accepted) == len(keys) and taken == accepted and combinational == []


@pytest.mark.parametrize("make, text", [
    (lambda: rs.Stratified(latency=2), "latency must be 1 or 3, not 2"),
    (lambda: gs.Stratified(latency=2), "latency must be 1 or 3, not 2"),
    (lambda: rs.AssocTable(latency=3), "latency must be 1 or 2, not 3"),
    (lambda: gt.AssocTable(latency=3), "latency must be 1 or 2, not 3"),
])  # fmt: skip
def test_bad_latency(make, text):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == text


def test_pipeline_with_skid_matches_golden(seed):
    """``StratifiedPipeline(skid=True)``: a skid buffer after H[P] and after A_k."""
    rng = random.Random(seed)
    params = {"rate": 4, "entries": 8, "assoc_entries": 2, "count_bits": 6, "depth": 3}
    dut = rs.StratifiedPipeline(**params, skid=True)
    model = gs.Pipeline([gs.Stratified(rate=4, entries=8, skid=True),
                         gt.AssocTable(entries=2, in_count_bits=3, count_bits=6, skid=True),
                         gt.MessageBuffer(depth=3)])  # fmt: skip
    keys = [rng.randrange(12) for _ in range(300)]
    assert run(dut, model, rng, keys) is None, f"seed {seed}"
