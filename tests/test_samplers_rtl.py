"""Sampler, tagged compressor, A_k, buffer RTL in the Amaranth simulator against the
golden models of hwprof.golden.samplers / tagged, every cycle, with backpressure."""

import random

import pytest

from hwprof.golden import samplers as gs
from hwprof.golden import tagged as gt
from hwprof.golden.tagged import aliasing_keys
from hwprof.rtl import samplers as rs
from hwprof.rtl import tagged as rt
from tests.batched_inputs import simulate_batched
from tests.samplers_stim import cycles, key_stream


def run(dut, model, rng, keys, *, structured_input=False, max_count=None, ready_p=None,
        valid_p=0.9, stats=None):  # fmt: skip
    """Drive ``dut`` and ``model`` together; return the first mismatch or None.

    ``stats`` (a dict) receives the number of cycles and of accepted tuples.
    """
    failures = []
    ready_p = rng.choice([0.3, 0.7, 1.0]) if ready_p is None else ready_p
    gen = cycles(rng, keys, valid_p=valid_p, ready_p=ready_p, max_count=max_count)
    key_mask = (1 << model_key_bits(dut)) - 1

    async def bench(ctx):
        accepted = None
        cycle = 0
        while True:
            try:
                valid, key, count, ready = gen.send(accepted) if cycle else next(gen)
            except StopIteration:
                return
            ctx.set(dut.tuples.valid, valid)
            if structured_input:
                ctx.set(dut.tuples.payload.key, key)
                ctx.set(dut.tuples.payload.count, count)
            else:
                ctx.set(dut.tuples.payload, key)
            ctx.set(dut.messages.ready, ready)
            want = model.step(in_valid=valid, in_key=key, in_count=count, out_ready=ready)
            got = {
                "in_ready": ctx.get(dut.tuples.ready),
                "out_valid": ctx.get(dut.messages.valid),
            }
            if want["out_valid"]:
                got["out_key"] = ctx.get(dut.messages.payload.key) & key_mask
                got["out_count"] = ctx.get(dut.messages.payload.count)
            for name, value in got.items():
                if value != want[name]:
                    failures.append((cycle, name, value, want[name]))
                    return
            if "irq" in want and ctx.get(dut.irq) != want["irq"]:
                failures.append((cycle, "irq", ctx.get(dut.irq), want["irq"]))
                return
            accepted = valid and want["in_ready"]
            if stats is not None:
                stats["cycles"] = cycle + 1
                stats["accepted"] = stats.get("accepted", 0) + int(bool(accepted))
            cycle += 1
            await ctx.tick()

    simulate_batched(dut, bench)
    return failures[0] if failures else None


def model_key_bits(dut):
    return len(dut.messages.payload.key)


KINDS = ["random", "one-key", "ping-pong", "mix"]

SIMPLE = {
    "random": (lambda: rs.RandomSampler(rate=4, seed=7), lambda: gs.RandomSampler(rate=4, seed=7)),
    "countdown": (lambda: rs.CountdownSampler(rate=5, seed=9),
                  lambda: gs.CountdownSampler(rate=5, seed=9)),
    "periodic": (lambda: rs.PeriodicSampler(rate=5), lambda: gs.PeriodicSampler(rate=5)),
    "counter": (lambda: rs.Counter(count_bits=3), lambda: gs.Counter(count_bits=3)),
    "cr": (lambda: rs.CountingRandomSampler(rate=6, count_bits=4, seed=3),
           lambda: gs.CountingRandomSampler(rate=6, count_bits=4, seed=3)),
    "stratified": (lambda: rs.Stratified(rate=4, entries=8),
                   lambda: gs.Stratified(rate=4, entries=8)),
    "h-cr": (lambda: rs.Stratified(rate=3, entries=4, sampler="cr", count_bits=3, seed=11),
             lambda: gs.Stratified(rate=3, entries=4, sampler="cr", count_bits=3, seed=11)),
    "h-random": (lambda: rs.Stratified(rate=3, entries=4, sampler="random", seed=5),
                 lambda: gs.Stratified(rate=3, entries=4, sampler="random", seed=5)),
}  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(SIMPLE))
def test_sampler_matches_golden(name, kind, seed):
    rng = random.Random(seed)
    dut, model = SIMPLE[name][0](), SIMPLE[name][1]()
    assert run(dut, model, rng, key_stream(rng, kind, 300)) is None, f"seed {seed}"


#: Seeds whose first countdown the RTL draws at elaboration: small ones (the seed's own
#: bits would give the gap 1), the catalog's, one with every bit set, an arbitrary one.
COUNTDOWN_SEEDS = (1, 2, 5, 9, 3000, 0xFFFFFFFF, 0x9E3779B9)


@pytest.mark.parametrize("sampler_seed", COUNTDOWN_SEEDS)
def test_countdown_first_draw_matches_golden(sampler_seed, seed):
    """The countdown's reset value (a random draw, sec. 3.1) and the LFSR state after it
    are the golden model's, every cycle through the first selections (r = 10)."""
    rng = random.Random(seed)
    dut = rs.CountdownSampler(rate=10, seed=sampler_seed)
    model = gs.CountdownSampler(rate=10, seed=sampler_seed)
    assert dut.reset_values() == (model.countdown, model.lfsr.state)
    assert run(dut, model, rng, key_stream(rng, "random", 60), ready_p=1.0) is None


@pytest.mark.parametrize("name", sorted(SIMPLE) + ["tagged"])
def test_one_tuple_per_cycle_without_backpressure(name, seed):
    """Valid every cycle, consumer always ready: every cycle accepts a tuple (no stall)."""
    rng = random.Random(seed)
    if name == "tagged":
        dut, model = rt.TaggedCompressor(**tagged_params()), gt.TaggedCompressor(**tagged_params())
    else:
        dut, model = SIMPLE[name][0](), SIMPLE[name][1]()
    stats = {}
    keys = key_stream(rng, "mix", 200)
    assert run(dut, model, rng, keys, ready_p=1.0, valid_p=1.0, stats=stats) is None
    assert stats == {"cycles": 200, "accepted": 200}


def tagged_params():
    return {"entries": 8, "ways": 2, "hit_bits": 4, "miss_bits": 2, "evict_hits": 3,
            "replace_misses": 2}  # fmt: skip


#: Tuples per stream of the tagged compressor in the Amaranth simulator (about 25 ms
#: a cycle: suite time; was 600). The random, mix and alias streams still take every
#: transition E1-E6a 12-150 times (seeds 0-4); hwprof/cocotb_tests/test_samplers.py runs the
#: same streams and its directed phases for 20,000 cycles on Verilator.
TAGGED_TUPLES = 300


@pytest.mark.parametrize("kind", KINDS + ["alias"])
def test_tagged_matches_golden(kind, seed):
    rng = random.Random(seed)
    model = gt.TaggedCompressor(**tagged_params())
    aliases = aliasing_keys(model, 3)
    dut = rt.TaggedCompressor(**tagged_params())
    keys = key_stream(rng, kind, TAGGED_TUPLES,
                      aliases=aliases if kind in ("alias", "ping-pong") else None)  # fmt: skip
    assert run(dut, model, rng, keys) is None, f"seed {seed}"


def test_tagged_default_geometry(seed):
    rng = random.Random(seed)
    keys = key_stream(rng, "mix", 300)
    assert run(rt.TaggedCompressor(), gt.TaggedCompressor(), rng, keys) is None, f"seed {seed}"


@pytest.mark.parametrize("kind", ["random", "one-key", "mix"])
def test_assoc_table_matches_golden(kind, seed):
    rng = random.Random(seed)
    dut = rs.AssocTable(entries=3, in_count_bits=4, count_bits=6)
    model = gt.AssocTable(entries=3, in_count_bits=4, count_bits=6)
    keys = [rng.randrange(5) if kind != "random" else rng.getrandbits(64) for _ in range(400)]
    if kind == "one-key":
        keys = [3] * 400
    assert run(dut, model, rng, keys, structured_input=True, max_count=15) is None, f"seed {seed}"


def test_buffer_matches_golden(seed):
    rng = random.Random(seed)
    dut, model = rs.MessageBuffer(depth=4, count_bits=5), gt.MessageBuffer(depth=4)
    keys = [rng.getrandbits(64) for _ in range(300)]
    assert run(dut, model, rng, keys, structured_input=True, max_count=31) is None, f"seed {seed}"


def test_pipeline_matches_golden(seed):
    rng = random.Random(seed)
    params = {"rate": 4, "entries": 8, "assoc_entries": 2, "count_bits": 6, "depth": 3}
    dut = rs.StratifiedPipeline(**params)
    model = gs.Pipeline([gs.Stratified(rate=4, entries=8),
                         gt.AssocTable(entries=2, in_count_bits=3, count_bits=6),
                         gt.MessageBuffer(depth=3)])  # fmt: skip
    keys = [rng.randrange(12) for _ in range(600)]
    assert run(dut, model, rng, keys) is None, f"seed {seed}"


def test_checker_catches_tagged_mutant(seed):
    """Counters reset on E5/E6 (the paper's warning) must be caught."""
    rng = random.Random(seed)
    model = gt.TaggedCompressor(**tagged_params())
    aliases = aliasing_keys(model, 3)
    dut = rt.TaggedCompressor(**tagged_params(), keep_counts=False)
    assert run(dut, model, rng, key_stream(rng, "alias", 600, aliases=aliases)) is not None


def test_checker_catches_stratified_off_by_one(seed):
    rng = random.Random(seed)
    dut = rs.Stratified(rate=4, entries=8, wrap_at=3)
    assert run(dut, gs.Stratified(rate=4, entries=8), rng, key_stream(rng, "mix", 300))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: rs.PeriodicSampler(rate=1), "rate must be between 2 and 65536, not 1"),
        (lambda: rs.Stratified(entries=3), "entries must be a power of two, not 3"),
        (lambda: rt.TaggedCompressor(ways=3), "ways must be a power of two, not 3"),
        (lambda: rs.AssocTable(entries=0), "entries must be between 1 and 64, not 0"),
        (lambda: rs.MessageBuffer(depth=0), "depth must be between 1 and 4096, not 0"),
        (lambda: rs.StratifiedPipeline(depth=0), "depth must be between 1 and 4096, not 0"),
    ],
)
def test_rtl_parameter_errors(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message
