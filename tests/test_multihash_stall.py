"""The block RAM multi-hash profiler's input stall rule: the cycle model
(:mod:`hwprof.golden.multihash_stall`) against hand-derived cycles and against the RTL
(Amaranth simulator) cycle by cycle, and the native bench's check of it."""

from __future__ import annotations

import numpy as np

from hwprof.cocotb_tests.multihash_streams import at_threshold_stream, collision_stream
from hwprof.golden.multihash import MultiHashConfig, MultiHashProfiler
from hwprof.golden.multihash_stall import ReadoutStall, stall_runs
from hwprof.rtl.multihash import MultiHash
from hwprof.sim.native import StreamRun
from hwprof.tops.multihash_bench import MultihashBench, hold_drive
from tests.batched_inputs import simulate_batched

#: a small block RAM profiler (8 entries in 4 sets of 2 ways)
SMALL = {"tables": 4, "counters": 64, "accumulator": 8, "interval_length": 40,
         "threshold": 3, "pc_bits": 8, "value_bits": 8, "ways": 2}  # fmt: skip


def _drive(model, tuples, ready, records, writes=(), holds=()):
    """Step ``model`` over a stimulus (every tuple offered as soon as the one before it is
    accepted) one cycle at a time, no skipping: ``(runs, leave)`` as :func:`stall_runs`."""
    writes, holds = dict(writes), dict(holds)
    records = list(records)
    runs, leave, cycle, i, held_to, start = [], [], 0, 0, -1, None
    while i < tuples or model.incomplete or model.level:
        ok = model.ready
        if i < tuples and not ok:
            start = cycle if start is None else start
        elif start is not None:
            runs.append((start, i, cycle - start))
            start = None
        accept = i < tuples and ok
        k = None
        if accept and i in writes:
            model.configure(*writes[i])
        if accept and model.last:
            k = records.pop(0)
        if model.clock(accept, bool(ready[cycle]) and cycle > held_to, k):
            leave.append(cycle)
        if accept:
            held_to = cycle + holds[i] if i in holds else held_to
            i += 1
        cycle += 1
    return runs, leave


def test_always_ready_readout_cycles_by_hand():
    """Intervals of 10 at threshold 10, then 2 (written at tuple 5). Tuple 9 ends the
    first interval in cycle 9 with 3 records: reads in cycles 15, 16, 17 (c + 6 on), in
    the FIFO at the ends of 16, 17, 18, out in 17, 18, 19; the marker in at the end of 19
    (c + k + 7), out in 20. Tuple 10 (position 0) is taken in cycle 10; tuple 11
    (position 1 = T - 1) waits in cycles 11-19 (9 cycles) and is taken in 20. Tuple 19
    ends the second interval in cycle 28 (no record): its marker enters in cycle 34 (c +
    6), out in 35."""
    ready = np.ones(100, bool)
    got = stall_runs(20, 10, 10, [3, 0], ready, writes=[(5, 10, 2)])
    assert got["runs"].tolist() == [[11, 11, 9]]
    assert got["leave"].tolist() == [17, 18, 19, 20, 35]
    runs, leave = _drive(ReadoutStall(10, 10), 20, ready, [3, 0], writes={5: (10, 2)})
    assert (runs, leave) == ([(11, 11, 9)], [17, 18, 19, 20, 35])


def test_held_readout_stalls_at_threshold_minus_one_by_hand():
    """Interval 1 (10 tuples) ends in cycle 9 with 8 records, the consumer holds ready low
    in cycles 10-49 (40 cycles). Reads in cycles 15-18 fill the 4-entry FIFO (room counts
    the record in flight); no more room. The second interval (threshold 20, written at
    tuple 3) takes positions 0-18 in cycles 10-28; position 19 (tuple 29) waits from
    cycle 29. Ready again in 50: an entry leaves in 50 (no read: the FIFO was full at the
    cycle's start), reads in 51-54, the last record enters at the end of 55, the marker
    at the end of 56: tuple 29 is taken in 57 (28 cycles of stall). Leaving: 50-57 (8
    records), then the marker in 58. Tuples 30-39 in cycles 58-67 end the second interval
    (no record): its marker enters in 73, out in 74."""
    ready = np.ones(200, bool)
    got = stall_runs(40, 10, 10, [8, 0], ready, writes=[(3, 30, 20)], holds=[(9, 40)])
    assert got["runs"].tolist() == [[29, 29, 28]]
    assert got["leave"].tolist() == [*range(50, 58), 58, 74]
    # 4 records: all in the FIFO by cycle 19; in 50 one leaves (full at the cycle's start:
    # no marker), the marker enters in 51, tuple 29 is taken in 52 (23 cycles)
    got = stall_runs(40, 10, 10, [4, 0], ready, writes=[(3, 30, 20)], holds=[(9, 40)])
    assert got["runs"].tolist() == [[29, 29, 23]]
    assert got["leave"].tolist()[:5] == [50, 51, 52, 53, 54]


def test_threshold_one_and_interval_end_stall_from_position_zero():
    """Threshold 1: every position is at least ``T - 1``, so the input waits from the
    first tuple of the interval after a readout (2 records, always ready: complete after
    c + 9). And a threshold above the interval length (rule (a) alone): the interval's
    last tuple waits for the readout."""
    ready = np.ones(100, bool)
    got = stall_runs(12, 6, 6, [2, 0], ready, writes=[(2, 6, 1)])
    # tuple 5 ends interval 1 in cycle 5; tuple 6 waits in cycles 6-14 (complete from 15)
    assert got["runs"].tolist()[0] == [6, 6, 9]
    model = ReadoutStall(3, 9)  # threshold 9 > 3 tuples (as a cfg write could make it)
    got = _drive(model, 6, ready, [1, 0])
    # tuple 2 ends interval 1 in cycle 2 (1 record: complete after c + 8 = 10); tuples 3
    # and 4 go on, tuple 5 (the last) waits in cycles 5-10
    assert got[0] == [(5, 5, 6)]


def test_fast_path_equals_the_cycle_loop(seed):
    """:func:`stall_runs` (which skips the cycles where nothing can stall) gives the
    runs and FIFO exits of the model stepped one cycle at a time, on random interval
    lengths and thresholds, writes, holds and a random consumer."""
    rng = np.random.default_rng(seed)
    tuples = 3000
    # writes every 60-200 tuples, none on an interval's last tuple (found by positions)
    wanted = {}
    for n in np.cumsum(rng.integers(60, 200, size=20)).tolist():
        length = int(rng.integers(8, 60))
        wanted[n] = (length, int(rng.integers(1, length + 1)))
    writes, length, pending, position = [], 25, None, 0
    for n in range(tuples):
        if n in wanted and position != length - 1:
            writes.append((n, *wanted[n]))
            pending = wanted[n]
        if position == length - 1:
            position, length = 0, (pending or (length,))[0]
            pending = None
        else:
            position += 1
    ready = rng.random(20_000) < 0.6
    records = rng.integers(0, 12, size=tuples).tolist()
    holds = [(int(h), int(rng.integers(1, 80))) for h in rng.choice(tuples, 30, replace=False)]
    got = stall_runs(tuples, 25, 5, records, ready, writes=writes, holds=holds)
    runs, leave = _drive(ReadoutStall(25, 5), tuples, ready, records,
                         writes={n: (a, b) for n, a, b in writes}, holds=holds)  # fmt: skip
    assert got["runs"].tolist() == [list(r) for r in runs], f"seed {seed}"
    assert got["leave"].tolist() == leave, f"seed {seed}"
    assert len(runs) > 20 and len(writes) > 10, f"seed {seed}"


class _LateByOne(ReadoutStall):
    """A stand-in of a wrong rule: ``T - 2`` off by one (the stall one position late)."""

    @property
    def ready(self) -> bool:
        stalls_here = self.last or self.position >= self.threshold
        return not (self.incomplete and stalls_here)


def _rtl_cycles(params, keys, rng, ready_p, writes, holds, models):
    """Run the RTL (Amaranth simulator) on ``keys`` (offered back to back), writes through
    ``cfg_*`` in the cycle that accepts the tuple, ``records.ready`` random (``ready_p``)
    and held low after ``holds``' tuples; each of ``models`` stepped beside it (the golden
    profiles' lengths as record counts). Returns per model the first cycle where its
    ``tuples.ready`` or ``records.valid`` differs from the RTL's (None: none), and the
    RTL's stall cycles and the positions they were at."""
    dut = MultiHash(**params)
    golden = MultiHashProfiler(**params)
    first = [None] * len(models)
    stalls = []

    async def testbench(ctx):
        i, held = 0, 0
        for cycle in range(len(keys) + 400):
            offer = i < len(keys)
            ctx.set(dut.tuples.valid, offer)
            if offer:
                ctx.set(dut.tuples.payload.as_value(), keys[i])
            out_ready = int(rng.random() < ready_p and held == 0)
            ctx.set(dut.records.ready, out_ready)
            ready, valid = ctx.get(dut.tuples.ready), ctx.get(dut.records.valid)
            for m, model in enumerate(models):
                if first[m] is None and (model.ready != bool(ready)
                                         or model.records_valid != bool(valid)):  # fmt: skip
                    first[m] = cycle
            accept = offer and ready
            write = accept and i in writes
            ctx.set(dut.cfg_we, int(write))
            if write:
                ctx.set(dut.cfg_interval, writes[i][0])
                ctx.set(dut.cfg_threshold, writes[i][1])
            k = None
            if accept:
                if i in writes:
                    golden.configure(*writes[i])
                    for model in models:
                        model.configure(*writes[i])
                profile = golden.step(keys[i])
                k = None if profile is None else len(profile)
            elif offer:
                stalls.append((cycle, models[0].position, models[0].threshold))
            for m, model in enumerate(models):
                if first[m] is None:
                    model.clock(bool(accept), bool(out_ready), k)
            held = max(0, held - 1)
            if accept:
                held = holds.get(i, held)
                i += 1
            await ctx.tick()

    simulate_batched(dut, testbench)
    return first, stalls


def _promoted_pairs(config, rng) -> list:
    """8 fresh keys, 2 in each of the 4 sets, each twice: 8 records at threshold 2."""
    hashes, per_set, keys = config.hashes(), {}, []
    while len(keys) < 8:
        key = int(rng.integers(0, 1 << config.key_bits))
        s = config.set_index([h(key) for h in hashes])
        if key not in keys and per_set.get(s, 0) < 2:
            per_set[s] = per_set.get(s, 0) + 1
            keys.append(key)
    return keys + keys


def test_rtl_ready_follows_the_rule_cycle_by_cycle(seed):
    """The RTL's ``tuples.ready`` and ``records.valid`` equal the model's every cycle:
    colliding keys and keys at the threshold, intervals and thresholds written through
    ``cfg_*`` (thresholds 2, 20 and 257 among them), the consumer ready half the time and
    holding ``records.ready`` low for 30 and 270 cycles after the end of an interval with
    8 records; the stalls at ``T - 1`` with the readout held are there. A rule one
    position late is caught."""
    rng = np.random.default_rng(seed)
    config = MultiHashConfig(**SMALL)
    # 5 intervals of 40 at threshold 3; 40 at 2 ending with 8 records (held 30 cycles);
    # 60 at 20; 40 at 2 with 8 records (held 270); 300 at 257; intervals of 40 at 3
    keys = collision_stream(config, rng, 200)
    keys += _promoted_pairs(config, rng) + collision_stream(config, rng, 24)
    keys += collision_stream(config, rng, 60)
    keys += _promoted_pairs(config, rng) + collision_stream(config, rng, 24)
    keys += collision_stream(config, rng, 100) + at_threshold_stream(config, rng, 5)
    keys += collision_stream(config, rng, 200)
    writes = {150: (40, 2), 210: (60, 20), 250: (40, 2), 310: (300, 257), 400: (40, 3)}
    holds = {239: 30, 339: 270}
    models = [ReadoutStall(40, 3), _LateByOne(40, 3)]
    first, stalls = _rtl_cycles(SMALL, keys, rng, 0.5, writes, holds, models)
    assert first[0] is None, f"seed {seed}: the RTL leaves the rule in cycle {first[0]}"
    assert first[1] is not None, f"seed {seed}: a rule one position late not caught"
    at_threshold = {(p, t) for _, p, t in stalls if p == t - 1}
    assert {(19, 20), (256, 257), (1, 2)} <= at_threshold, f"seed {seed}"


def _run(stall_rows) -> StreamRun:
    return StreamRun(0, 0, 0, 0.0, 0.0, 0.0, 0.0, np.zeros(0, np.uint64),
                     stall_runs=np.array(stall_rows, dtype=np.uint64).reshape(-1, 3))  # fmt: skip


def test_compare_stalls_names_the_first_differing_run():
    want = [(11, 11, 9), (29, 29, 28)]
    assert MultihashBench.compare_stalls(_run(want), want) == (
        0,
        "2 runs of stalls match the stall rule (37 cycles)",
    )
    late = [(11, 11, 9), (30, 30, 27)]  # one cycle late
    assert MultihashBench.compare_stalls(_run(late), want) == (
        1,
        "1 runs of stalls differ from the stall rule (first: run 1: cycle 30, tuple 30, "
        "27 cycles; the rule: cycle 29, tuple 29, 28 cycles; 2 runs, the rule 2)",
    )
    mismatches, what = MultihashBench.compare_stalls(_run(want[:1]), want)
    assert mismatches == 1 and "run 1: none; the rule: cycle 29" in what
    assert MultihashBench.compare_stalls(_run([]), [])[0] == 0


def test_hold_drive_verilog():
    decls, hold = hold_drive([(30, 7), (9, 40)])
    assert hold == "hold_left != 32'd0"
    assert ("if (!cfg_off && in_valid_q && in_ready && (accepted == 64'd9 || accepted == "
            "64'd30)) hold_left <= (accepted == 64'd9 ? 32'd40 : (accepted == 64'd30 ? "
            "32'd7 : 32'd0));") in decls  # fmt: skip
    assert "else if (hold_left != 32'd0) hold_left <= hold_left - 32'd1;" in decls
    assert "1'b0" in hold_drive([])[0]


def test_bench_hold_intervals():
    """The hold intervals at the defaults: per threshold a 24-tuple setup at threshold 2
    whose 8 keys (8 sets) are promoted (8 records), a test interval of ``T + 8`` tuples at
    ``T`` without a record, the hold after the setup's last tuple ``T + 16`` cycles; the
    stall rule stalls each test interval's tuple at position ``T - 1`` for 16 cycles or
    more."""
    from hwprof.catalog import get_top
    from hwprof.verify.mutate_native import native_bench

    top = get_top("multihash")
    thresholds = (3, 4, 257, 258)
    # the hold intervals right after the trace's first 10,000 tuples (the other parts off)
    bench = native_bench(top, top.resolve({}), tuples=10_000, writes=(), counts_repeat=0,
                         fwd_repeat=0,
                         dense_intervals=0, rom_groups=False, set_groups=False,
                         boundary_pairs=False, threshold_bits=(), stop_short_threshold=0,
                         long_count_bit=0, hold_thresholds=thresholds)  # fmt: skip
    keys, start = bench.hold_keys(), 10_000
    assert len(keys) == sum(24 + t + 8 for t in thresholds)
    assert bench.schedule()[0] == (start - 50, 24, 2)
    holds = bench.holds()
    at = start
    for (tuple_, cycles), t in zip(holds, thresholds, strict=True):
        assert (tuple_, cycles) == (at + 23, t + 16)
        setup = keys[at - start : at - start + 24]
        twice = setup[:8]
        assert (setup[8:16] == twice).all() and len(set(setup.tolist())) == 24 - 8
        at += 24 + t + 8
    # the golden model and the rule on the hold intervals alone, from the configuration
    # of their first setup interval (24 tuples, threshold 2), with the bench's writes
    model = MultiHashProfiler(**top.resolve({}))
    model.interval_length, model.threshold = 24, 2
    writes = [(n - start, length, t) for n, length, t in bench.schedule() if n >= start]
    records = []
    for n, key in enumerate(keys.tolist()):
        for w, length, t in writes:
            if n == w:
                model.configure(length, t)
        profile = model.step(key)
        if profile is not None:
            records.append(len(profile))
    assert records == [8, 0] * len(thresholds)
    got = stall_runs(len(keys), 24, 2, records, np.ones(100_000, bool), writes=writes,
                     holds=[(n - start, h) for n, h in holds])["runs"]  # fmt: skip
    # in each test interval one run, at position T - 1, of 24 cycles: the hold ends T + 16
    # cycles after the setup's last tuple (16 after the stall began), an entry leaves in the
    # next cycle, 4 reads, the last record in, the marker in (8 more)
    firsts = [n - start + 1 for n, _ in holds]
    in_tests = [
        (int(r[1]), int(r[2]))
        for r in got
        if any(f <= r[1] < f + t + 8 for f, t in zip(firsts, thresholds, strict=True))
    ]
    assert in_tests == [(f + t - 1, 24) for f, t in zip(firsts, thresholds, strict=True)]
