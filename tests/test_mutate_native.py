"""``hwprof mutate multihash --bench native``: mutants through the native stream harness.

Fast tier: the configuration writes of the wrapper, the golden side of the bench
(writes placed where they cannot race an interval's end), the comparison (a
changed, missing or extra record is a mismatch) and the usage errors. Soak tier
(a Verilator build of a small profiler with six mutants, about a minute and a
half at -O0 on the shared machine): the original passes, a mutant is killed, the
check fails against a golden model with other configuration writes.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from hwprof.catalog import get_top
from hwprof.cli import main
from hwprof.golden.multihash import MultiHashConfig, MultiHashProfiler
from hwprof.sim.native import StreamRun, stream_wrapper
from hwprof.synth import to_verilog
from hwprof.tops.multihash_bench import CONFIG_DECLS, MultihashBench, config_drive
from hwprof.verify.mutate import _BUILD_ARGS, build_mutant_design, list_mutants, mutate_top
from hwprof.verify.mutate_native import NativeRunner, native_bench
from tests.unelaborated import unelaborated

#: tests/test_multihash_cocotb.py's small profiler (16-bit keys, 8 entries in 4 sets), with
#: the reset threshold 15 (>= 8 candidates + 7: the always-ready run may not stall)
SMALL = {"tables": 4, "counters": 64, "counter_bits": 16, "accumulator": 8,
         "interval_length": 100, "threshold": 15, "pc_bits": 8, "value_bits": 8,
         "ways": 2}  # fmt: skip
#: 3,020 tuples: one interval at the reset values, 24 of 60 tuples at threshold 3
#: (the write at tuple 50), then 37 of 40 at threshold 2 (the write at 1,530: position
#: 30 of its 60-tuple interval), ending where an interval ends; the directed intervals'
#: writes 20 tuples before the interval ahead ends
SMALL_BENCH = {"tuples": 3020, "writes": ((50, 60, 3), (1530, 40, 2)), "opt": "-O0",
               "free_tuples": 1000, "counts_interval": 1000, "counts_threshold": 121,
               "counts_repeat": 150, "fwd_interval": 1000, "fwd_threshold": 100, "fwd_repeat": 150,
               "dense_intervals": 4, "dense_length": 50, "lead": 20, "fwd_below": 50,
               "rom_groups": False, "set_groups": False, "threshold_bits": (),
               "boundary_pairs": False, "stop_short_threshold": 0,
               "long_count_bit": 0, "hold_thresholds": ()}


def _small_bench(**changes) -> MultihashBench:
    top = get_top("multihash")
    return native_bench(top, top.resolve(SMALL), **{**SMALL_BENCH, **changes})


def _small_mutants_runner(count: int, tmp_path, **changes):
    """``count`` mutants (seed 1) of the small profiler built into one design, and the
    native runner of that design on the small bench (``changes``: to its fields)."""
    component = get_top("multihash").construct(SMALL)
    verilog = to_verilog(component, "multihash")
    mutants = list_mutants(verilog, "multihash", count, 1, tmp_path)
    text = build_mutant_design(verilog, "multihash", mutants, tmp_path)
    return mutants, NativeRunner(_small_bench(**changes), component, text, tmp_path,
                                 extra_args=_BUILD_ARGS)  # fmt: skip


def test_config_drive_writes_at_the_given_tuples():
    drive = config_drive(((50, 60, 3), (1530, 40, 2)), 16)
    assert drive["cfg_we"] == ("!cfg_off && in_valid_q && in_ready && "
                               "(accepted == 64'd50 || accepted == 64'd1530)")  # fmt: skip
    # each write's values up to its tuple (the pending register holds them after it)
    assert drive["cfg_interval"] == ("(accepted <= 64'd50 ? 16'd60 : "
                                     "(accepted <= 64'd1530 ? 16'd40 : 16'd0))")  # fmt: skip
    with unelaborated():  # only its signature is read
        component = get_top("multihash").construct(SMALL)
        verilog, _ = stream_wrapper(component, "multihash", drive, CONFIG_DECLS)
        with pytest.raises(ValueError, match="cannot drive nope, tuples__valid"):
            stream_wrapper(component, "multihash", {"nope": "1", "tuples__valid": "1"})
        del component
    assert ".cfg_we(1'((!cfg_off && in_valid_q && in_ready" in verilog
    assert "  initial cfg_off = $test$plusargs(\"nocfg\");" in verilog  # +nocfg: no write
    assert ".cfg_threshold(16'(((accepted <= 64'd50 ? 16'd3" in verilog
    assert "accepted <= rst ? 64'd0 : accepted + {63'd0, in_valid_q & in_ready};" in verilog


def test_expected_follows_the_configuration_writes():
    bench = _small_bench()
    keys = bench.keys()
    assert len(keys) == 6220 and int(keys.max()) < 1 << 16
    want = bench.expected(keys)
    ends = np.flatnonzero(want[:, 2] == 1)
    # intervals: 100 tuples, then 60 up to tuple 1,540 (the write at 1,530 ends it), then 40
    # up to the trace's end, then the directed interval of 1,000, the forwarding one, the
    # requalifying one and 4 dense ones
    assert len(ends) == 1 + 24 + 37 + 1 + 1 + 1 + 4
    assert (want[ends, :2] == 0).all() and want[-1, 2] == 1
    records = want[want[:, 2] == 0]
    assert len(records) > 100 and (records[:, 1] >= 2).all()
    # a write in the first tuples of an interval would race its start in the pipeline
    late = _small_bench(writes=((102, 60, 3),))
    with pytest.raises(ValueError, match="write at tuple 102: position 2 of its interval"):
        late.expected(keys)
    # the directed intervals must start where an interval starts
    cut = _small_bench(tuples=3010)
    with pytest.raises(ValueError, match="start at tuple 3010, position 30 of an interval"):
        cut.expected(cut.keys())
    # the always-ready run: sort's first 1,000 tuples at the reset values, 10 intervals
    bench = _small_bench()
    free = bench.free_expected(bench.free_keys())
    assert free[:, 2].sum() == 10 and len(free) > 10
    # ... refused where the design may stall (threshold < candidates + 7)
    low = native_bench(get_top("multihash"), get_top("multihash").resolve(SMALL | {"threshold": 5}),
                       **SMALL_BENCH)  # fmt: skip
    with pytest.raises(ValueError, match="the always-ready run may stall: threshold 5"):
        low.free_expected(low.free_keys())


def test_relabel_xors_each_block_with_one_byte():
    plain, relabelled = _small_bench(relabel=0).keys()[:3000], _small_bench().keys()[:3000]
    # blocks of 1,000 tuples centred on multiples of 1,000: bytes 0, 97, 194, 35
    byte = np.repeat([0, 97, 194, 35], [500, 1000, 1000, 500]).astype(np.uint64)
    assert np.array_equal(plain ^ relabelled, byte * np.uint64(0x0101))


def test_directed_interval_counts_past_the_threshold():
    bench = _small_bench()
    keys = bench.directed()
    a, b, c, d, e = (int(k) for k in keys[[0, 150, 151, 152, 153]])
    assert keys[:150].tolist() == [a] * 150 and keys[150:750].tolist() == [b, c, d, e] * 150
    assert len(set(keys[750:].tolist()) - {a, b, c, d, e}) > 200
    config = MultiHashConfig(**bench.params)
    set_of = [config.set_index([h(k) for h in config.hashes()]) for k in (d, e)]
    assert set_of[0] == set_of[1] and d != e
    assert bench.schedule()[-4:] == ((3000, 1000, 121), (4000, 1000, 100), (5000, 1000, 100),
                                     (6000, 50, 2))  # fmt: skip
    # the golden model reads keys of the directed interval out, counted past the threshold
    # (8 entries in 4 sets and 64 counters: a key may find its set full, or collide)
    want = bench.expected(bench.keys())
    last = want[np.flatnonzero(want[:, 2] == 1)[-8] + 1 : np.flatnonzero(want[:, 2] == 1)[-7]]
    assert len(last) >= 3 and set(last[:, 0].tolist()) <= {a, b, c, d, e}
    assert (last[:, 1] >= 121).all()


def _forwarding_check(bench):
    """The forwarding interval's pairs ``(f1, g1), (f2, g2)``, where the golden model
    holds each of the four keys (way, count) after their last tuple, and the records of
    the forwarding and the requalifying intervals."""
    fwd = bench.forwarding()
    r, t = bench.fwd_repeat, bench.fwd_threshold
    f1, g1, f2, g2 = (int(fwd[i]) for i in (0, 1, 3 * r, 3 * r + 1))
    pairs = {f1, g1, f2, g2}
    assert len(pairs) == 4 and len(fwd) == bench.fwd_interval * (1 + (bench.fwd_below > 0))
    assert fwd[: 3 * r].reshape(-1, 3)[:, :2].tolist() == [[f1, g1]] * r
    second = fwd[3 * r : 3 * r + 3 * t].reshape(-1, 3)
    assert second[:, :2].tolist() == [[f2, g2]] * t
    alone = fwd[3 * r + 3 * t : 7 * r - t].reshape(-1, 2)
    assert alone[:, 0].tolist() == [f2] * (r - t) + [g2] * (r - t)
    per_set = len(bench._forwarding_keys()[0][0])  # pairs per set (2 with 4 ways or more)
    between = np.concatenate([fwd[2 : 3 * r : 3], second[:, 2], alone[:, 1],
                              fwd[per_set * (7 * r - t) : bench.fwd_interval]])  # fmt: skip
    assert len(set(between.tolist())) == len(between) and not set(between.tolist()) & pairs
    keys = bench.keys()
    model = MultiHashProfiler(**bench.params)
    writes = {n: (length, threshold) for n, length, threshold in bench.schedule()}
    start = bench._directed_parts()[1][0]  # the forwarding interval's first tuple
    last = start + 7 * r - t - 1
    placed, profiles = None, []
    for i, key in enumerate(keys.tolist()[: start + len(fwd)]):
        if i in writes:
            model.configure(*writes[i])
        profile = model.step(key)
        if profile is not None and i >= start:
            profiles.append(profile)
        if i == last:
            placed = [(model.lookup(k) - model.entries(k)[0], model.count[model.lookup(k)])
                      for k in (f1, g1, f2, g2)]  # fmt: skip
    return ((f1, g1), (f2, g2)), placed, profiles


def test_forwarding_interval_keys():
    """Two pairs of keys of one set each, at distance 3 and 2, past the threshold; read out.
    In the requalifying interval (the same keys, retained) f1 and g2 pass the threshold
    again and are read out, g1 and f2 stay under it and are not."""
    bench = _small_bench()
    ((f1, g1), (f2, g2)), placed, (profile, again) = _forwarding_check(bench)
    config = MultiHashConfig(**bench.params)
    for pair in ((f1, g1), (f2, g2)):
        assert len({config.set_index([h(k) for h in config.hashes()]) for k in pair}) == 1
    # counted past the threshold (conservative update: collisions may add a little)
    assert all(count >= bench.fwd_repeat for _, count in placed)
    assert {k for k, _ in profile} >= {f1, g1, f2, g2}
    assert {k for k, _ in again} & {f1, g1, f2, g2} == {f1, g2}
    assert all(count >= bench.fwd_repeat for k, count in again if k in (f1, g2))
    assert _small_bench(fwd_repeat=0).forwarding().size == 0
    assert _small_bench(fwd_below=0).forwarding().size == bench.fwd_interval
    with pytest.raises(ValueError, match="7 x fwd_repeat - 1 x fwd_threshold <= fwd_interval 900"):
        _small_bench(fwd_interval=900).forwarding()
    with pytest.raises(ValueError, match="needs fwd_threshold 150 < fwd_repeat 150"):
        _small_bench(fwd_threshold=150).forwarding()


@pytest.mark.soak
def test_forwarding_interval_at_the_defaults_uses_ways_0_to_3():
    """At the catalog defaults the first key of each pair takes way 0 and the second way 1,
    and their counts pass 1,023, 1,151 and 1,279; each set's second pair takes ways 2 and
    3 and is read out too; in the requalifying interval ways 0 and 2 of the first set and
    1 and 3 of the second pass the threshold again and are read out (about a minute: the
    golden model over the whole bench)."""
    top = get_top("multihash")
    bench = native_bench(top, top.resolve({}))
    pairs, placed, (profile, again) = _forwarding_check(bench)
    assert [way for way, _ in placed] == [0, 1, 0, 1]
    assert all(count >= 1280 for _, count in placed)
    (first, second), _ = bench._forwarding_keys()
    assert [first[0], second[0]] == list(pairs) and len(first) == 2
    keys = [k for pair in first + second for k in pair]
    assert sorted(k for k, _ in profile) == sorted(keys)
    (f1, g1), (h1, i1) = first
    (f2, g2), (h2, i2) = second
    assert sorted(k for k, _ in again) == sorted([f1, h1, g2, i2])


class _StaleCounter(MultiHashProfiler):
    """A golden model whose table counter ``stale = (table, index)`` keeps its value across
    interval boundaries (what a counter valid bit stuck at 1 does in the RTL)."""

    stale = None

    def end_interval(self):
        table, index = self.stale
        value = self.counts[table][index]
        profile = super().end_interval()
        self.counts[table][index] = value
        return profile


def test_dense_intervals_show_a_stale_counter():
    """At the defaults, distinct keys in 800-tuple intervals at threshold 2: a table
    counter that reads its value of an earlier interval (what a counter valid bit stuck
    at 1 does; emulated on the golden model) changes the records (about 10 s)."""
    top = get_top("multihash")
    bench = native_bench(top, top.resolve({}))
    dense = bench.dense().tolist()
    assert len(set(dense)) == len(dense) == 32_000

    def records(stale=None):
        model = (MultiHashProfiler if stale is None else _StaleCounter)(**bench.params)
        model.stale = stale
        model.interval_length, model.threshold = bench.dense_length, bench.dense_threshold
        return [profile for key in dense if (profile := model.step(key)) is not None]

    want = records()
    assert sum(map(len, want)) > 1000  # promotions at threshold 2
    for stale in ((0, 17), (3, 400)):
        assert records(stale) != want, stale
    with pytest.raises(ValueError, match="distinct dense keys of 16 bits: too many"):
        _small_bench(dense_intervals=400).dense()


def _rom_records(bench, keys, flip=None):
    """The golden model's profiles over the table-entry groups ``keys`` (their interval and
    threshold from the start); ``flip = (hash, bit offset, byte value, bit)``: with that bit
    of that byte table's entry inverted (what a mutant of the ROM's data does)."""
    group = bench.params["tables"] + 1
    model = MultiHashProfiler(**bench.params)
    model.interval_length, model.threshold = bench.rom_per_interval * group, 2
    if flip is not None:
        i, lo, v, bit = flip
        h = model.hashes[i]
        value_tables, pc_tables = (list(map(list, t)) for t in h.tables)
        field, byte = ((value_tables, lo // 8) if lo < bench.params["value_bits"]
                       else (pc_tables, (lo - bench.params["value_bits"]) // 8))  # fmt: skip
        field[byte][v] ^= 1 << bit
        h.tables = (tuple(map(tuple, value_tables)), tuple(map(tuple, pc_tables)))
        h._fold_tables = None
    return [sorted(profile) for key in keys.tolist() if (profile := model.step(key)) is not None]


def _check_rom_groups(bench, flips: int, seed: int, least: float):
    keys = bench.rom()
    group = bench.params["tables"] + 1
    entries = bench._rom_entries()
    assert len(keys) == group * len(entries) and len(set(keys.tolist())) == len(keys)
    want = _rom_records(bench, keys)
    promoted = {k for profile in want for k, _ in profile}
    second = set(keys[group - 1 :: group].tolist())  # each group's K2
    # (in a small table a K1 or K_u may be promoted too, by chance collisions)
    assert len(promoted & second) >= least * len(second), (len(promoted & second), len(second))
    rng = np.random.default_rng(seed)
    for _ in range(flips):
        i, lo, _, v = entries[rng.integers(len(entries))]
        flip = (i, lo, v, int(rng.integers(8)))
        assert _rom_records(bench, keys, flip) != want, f"seed {seed}: {flip} not seen"


def test_every_part_in_one_bench():
    """The small profiler with the table-entry groups (one per 5-tuple interval) and the
    set intervals after the dense ones: every write lands where it may (the set part's
    1 tuple before the last 5-tuple interval ends), every interval ends (marker counts)."""
    bench = _small_bench(rom_groups=True, rom_per_interval=1, set_groups=True)
    parts = bench._directed_parts()
    assert [interval for _, interval, _ in parts] == [1000, 1000, 1000, 50, 5, 8]
    assert bench.schedule()[-2:] == ((parts[-2][0] - 20, 5, 2), (parts[-1][0] - 1, 8, 1))
    keys = bench.keys()
    want = bench.expected(keys)
    tail = len(bench.rom()) // 5 + len(bench.set_keys()) // 8
    assert want[:, 2].sum() == 1 + 24 + 37 + 1 + 1 + 1 + 4 + tail
    with pytest.raises(ValueError, match="follows intervals of 4 tuples: too short"):
        _small_bench(dense_length=4, dense_intervals=1, fwd_repeat=0, counts_repeat=0,
                     rom_groups=True, rom_per_interval=1).schedule()


def test_rom_groups_see_a_wrong_table_entry():
    """The small profiler (16 counters per table: one group per interval): every entry of
    the 4 hashes' 2 byte tables has a group, every group's K2 is promoted, and an
    entry's bit inverted on the golden model changes the records (10 entries at random)."""
    bench = _small_bench(rom_groups=True, rom_per_interval=1)
    assert len(bench._rom_entries()) == 4 * 2 * 256
    _check_rom_groups(bench, flips=10, seed=3, least=1.0)
    with pytest.raises(ValueError, match="10 groups per interval are too many for 16 counters"):
        _small_bench(rom_groups=True, rom_per_interval=10).rom()


@pytest.mark.soak
def test_rom_groups_at_the_defaults():
    """The defaults (512 counters per table, 10 groups per interval, 8,200 groups): almost
    every K2 promoted (a set's 4 ways may be taken), 20 flipped entries seen (about
    a minute)."""
    top = get_top("multihash")
    _check_rom_groups(native_bench(top, top.resolve({})), flips=20, seed=4, least=0.999)


def _run(rows) -> StreamRun:
    rows = np.array(rows, dtype=np.uint64).reshape(-1, 3)
    fields = {"key": rows[:, 0], "count": rows[:, 1], "end": rows[:, 2]}
    return StreamRun(0, 0, 0, 0.0, 0.0, 0.0, 0.0, np.arange(len(rows), dtype=np.uint64),
                     fields)  # fmt: skip


def test_compare_counts_every_differing_record():
    want = np.array([(7, 5, 0), (9, 6, 0), (0, 0, 1), (0, 0, 1), (3, 2, 0), (0, 0, 1)],
                    dtype=np.uint64)  # fmt: skip
    assert MultihashBench.compare(_run(want), want)[0] == 0
    # a marker's payload is not compared (the golden model defines none)
    marker = want.copy()
    marker[2, :2] = (5, 5)
    assert MultihashBench.compare(_run(marker), want)[0] == 0
    count = want.copy()
    count[4, 1] = 3
    n, what = MultihashBench.compare(_run(count), want)
    assert n == 1 and "first: record 4, interval 2" in what
    # a record after the last marker, a missing record
    assert MultihashBench.compare(_run([*want, (1, 9, 0)]), want)[0] == 1
    assert MultihashBench.compare(_run(want[1:]), want)[0] >= 1


def test_no_native_bench_is_one_clear_error(capsys):
    assert main(["mutate", "brr", "--bench", "native"]) == 2
    assert main(["mutate", "stratified", "-n", "4", "--bench", "native"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("has no native mutation bench (one of multihash)" in line
                                 for line in err)  # fmt: skip
    with pytest.raises(ValueError, match="'brr' has no native mutation bench"):
        native_bench(get_top("brr"), {})
    with pytest.raises(ValueError, match="bench must be one of cocotb, native"):
        mutate_top(get_top("multihash"), 4, bench="formal")


def test_bench_help_says_what_the_option_does(capsys):
    """``--bench``'s help names no top and no trace: the bench's details are in the docs."""
    with pytest.raises(SystemExit):
        main(["mutate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "native (a real trace through a C++ Verilator harness, for tops whose catalog" in text
    assert "docs/verification.md" in text
    assert not any(word in text for word in ("perl.trace", "sort.trace", "260,000", "multihash"))


@pytest.mark.soak
def test_native_bench_kills_a_mutant(tmp_path):
    """Six mutants of the small profiler in one build, with hold intervals at thresholds
    3, 4, 257 and 258: the original passes both runs (the back-pressured one with the
    writes, its records and its stalls cycle by cycle, the always-ready one), at least one
    mutant is killed, the check fails against other configuration writes, and against
    the stall rule's runs of stalls each one cycle late."""
    mutants, runner = _small_mutants_runner(6, tmp_path, hold_thresholds=(3, 4, 257, 258))
    verdict, detail, _ = runner.run(0, 120)
    assert verdict == "pass", detail
    assert re.fullmatch(r"native: \d+ records and markers match; \d+ runs of stalls match the "
                        r"stall rule \(\d+ cycles\); always ready: \d+ records and markers "
                        r"match, no stall", detail)  # fmt: skip
    held = [tuple(map(int, r)) for r in runner.stalls_want if r[2] >= 16]
    assert len(held) >= 4, held  # the hold intervals' stalls at T - 1
    stalls = runner.stalls_want
    runner.stalls_want = stalls + np.array([1, 0, 0], dtype=np.uint64)  # one cycle late
    verdict, detail, _ = runner.run(0, 120)
    assert verdict == "fail" and "runs of stalls differ from the stall rule" in detail
    runner.stalls_want = stalls
    verdicts = [runner.run(m.index, 120)[:2] for m in mutants]
    assert any(v == "fail" and "records differ" in d for v, d in verdicts), verdicts
    # the original against a golden model with the second write's threshold changed
    runner.want = _small_bench(writes=((50, 60, 3), (1530, 40, 3)),
                               hold_thresholds=(3, 4, 257, 258)).expected(
        runner.bench.keys())
    verdict, detail, _ = runner.run(0, 120)
    assert verdict == "fail" and "records differ" in detail


def _set_records(bench, keys, moved=None):
    """The golden model's profiles over the set intervals ``keys``; ``moved = (x, set)``:
    with the set ROM's entry ``x`` changed to ``set`` (what a mutant of it does)."""
    model = MultiHashProfiler(**bench.params)
    model.interval_length, model.threshold = bench.params["accumulator"], 1
    config = model.config
    if moved is not None:
        honest = config.set_index

        def set_index(indices):
            return moved[1] if config.set_source(indices) == moved[0] else honest(indices)

        object.__setattr__(config, "set_index", set_index)
    return [sorted(profile) for key in keys.tolist() if (profile := model.step(key)) is not None]


@pytest.mark.parametrize("params", [SMALL, pytest.param({}, marks=pytest.mark.soak)],
                         ids=["small", "defaults"])  # fmt: skip
def test_set_intervals_fill_every_way_and_see_a_wrong_set(params):
    """Every ``x`` of the set ROM is some key's; every key is promoted (each interval fills
    every way of every set exactly); a ROM entry moved to another set loses a record
    (8 entries at random)."""
    top = get_top("multihash")
    bench = native_bench(top, top.resolve(params),
                         **({**SMALL_BENCH, "set_groups": True} if params else {}))
    config = MultiHashConfig(**bench.params)
    keys = bench.set_keys()
    assert len(keys) == bench._set_rounds() * config.accumulator
    assert len(set(keys.tolist())) == len(keys)
    x = config.set_source([h.many(keys).astype(np.uint64) for h in config.hashes()])
    assert set(x.tolist()) == set(range(1 << config.set_source_bits))
    want = _set_records(bench, keys)
    assert sum(map(len, want)) == len(keys)  # all promoted
    rng = np.random.default_rng(7)
    for _ in range(8):
        x = int(rng.integers(1 << config.set_source_bits))
        right = (x * config.sets) >> config.set_source_bits
        wrong = (right + 1 + int(rng.integers(config.sets - 1))) % config.sets
        assert _set_records(bench, keys, (x, wrong)) != want, (x, wrong)
    assert not len(native_bench(top, top.resolve({"ways": 0})).set_keys())


def _threshold_steps(bench):
    """The golden model stepped over the threshold intervals alone, from reset (each
    interval's configuration written at its first tuple): per test interval ``(p, T,
    steps)``, ``steps`` a list of ``(kind, distance, detail)`` for every tuple:
    ``("miss", d, counts)`` with the key's table counters before it, or ``("hit", d,
    (way, count, replaceable))`` for an accumulator entry it hits; ``d`` the tuples since
    the key's previous tuple in the interval (0: none)."""
    parts = bench._threshold_intervals
    model = MultiHashProfiler(**bench.params)
    model.interval_length, model.threshold = len(parts[0][0]), parts[0][1]
    out = []
    for n, (keys, threshold) in enumerate(parts):
        if n + 1 < len(parts):
            model.configure(len(parts[n + 1][0]), parts[n + 1][1])
        last, steps = {}, []
        for i, key in enumerate(keys.tolist()):
            d = i - last[key] if key in last else 0
            last[key] = i
            slot = model.lookup(key)
            if slot is None:
                index = model.indices(key)
                steps.append(("miss", d, [model.counts[t][index[t]] for t in range(len(index))]))
            else:
                way = slot - model.entries(key)[0]
                steps.append(("hit", d, (way, model.count[slot], model.replaceable[slot])))
            model.step(key)
        assert model.position == 0  # every interval ends at its last tuple
        if n % 3 == 2:  # (flush, setup, test) per bit
            out.append((bench.threshold_bits[n // 3], threshold, steps))
    return out


def _check_threshold_steps(bench):
    tables, ways = bench.params["tables"], bench.params["ways"]
    for p, t, steps in _threshold_steps(bench):
        decided = {(h, min(d, 4)) for kind, d, counts in steps if kind == "miss" and d
                   for h in range(tables) if counts[h] < 1 << p
                   and all(c >= t - 1 for u, c in enumerate(counts) if u != h)}  # fmt: skip
        want = ({(h, d) for h in range(tables) for d in (1, 2, 3, 4)}
                if p <= bench.collider_bits else set())  # fmt: skip
        assert decided >= want, (p, sorted(want - decided))
        hits = [(d, detail) for kind, d, detail in steps if kind == "hit"]
        below = {(way, min(d, 4)) for d, (way, count, repl) in hits
                 if d and repl and count < 1 << p}  # fmt: skip
        assert below >= {(w, d) for w in range(ways) for d in (1, 2, 3, 4)}, (p, below)
        # the entry that requalifies is the climber F_(p mod ways), in way p mod ways (the
        # flush emptied its set before the setup filled it in order)
        requalified = {way for _, (way, count, repl) in hits if repl and count == t - 1}
        assert p % ways in requalified and (requalified == {p % ways}
                                            or t <= bench.threshold_window + 1), (p, requalified)
        if p in bench.all_ways_bits:
            # every way's count passes 2**p at distance 2 or 3 (stage C's forwarding) ...
            forwarded = {way for d, (way, count, _) in hits if d in (2, 3) and count == 1 << p}
            assert forwarded == set(range(ways)), (p, forwarded)
            # ... and the others end the interval one hit short of T, replaceable
            for way in set(range(ways)) - {p % ways}:
                last = [(count, repl) for _, (w, count, repl) in hits if w == way][-1]
                assert last == (t - 2, True), (p, way, last)
        assert any(repl and count == t - 1 for _, (_, count, repl) in hits), p  # requalifies
        # a key read and + 1'd at distance 2 up to T - 1 (then promoted)
        assert any(kind == "miss" and d == 2 and min(counts) == t - 1
                   for kind, d, counts in steps), p  # fmt: skip


def test_threshold_intervals_decide_on_one_compare():
    """At the defaults (bits 4, 7 and 10 here): in every test interval (threshold ``T =
    2**p + 2``), for every hash, a key whose other counters read ``T - 1`` or more comes
    with its own counter below ``2**p`` (its compare with ``T - 1`` alone decides its
    promotion) at tuple distances 1, 2, 3 and beyond; every way's retained entry is hit
    below ``2**p`` at every distance; an entry requalifies; a key's counters are read at
    distance 2 all the way to ``T - 1``; the climber requalifies in way ``p mod 4``
    (alone where ``T`` exceeds the other entries' 256 hits). (In the small profiler's
    16-counter tables other keys' collisions raise a key's own counter past ``2**p`` too
    often for this to hold.)"""
    top = get_top("multihash")
    bench = native_bench(top, top.resolve({}), threshold_bits=(4, 7, 10))
    _check_threshold_steps(bench)
    assert [t for _, t in bench._threshold_intervals] == [8, 2, 18, 8, 2, 130, 8, 2, 1026]
    keys = bench.thresholds()
    assert len(keys) == sum(len(k) for k, _ in bench._threshold_intervals)
    # a bench without colliders: the F_w and the two keys still come
    _check_threshold_steps(native_bench(top, top.resolve({}), threshold_bits=(9,),
                                        collider_bits=0))  # fmt: skip
    # every way climbing (all_ways_bits): each way's count passes 2**p at distance 2 or 3,
    # the others' to T - 1 at the interval's end
    _check_threshold_steps(native_bench(top, top.resolve({}), threshold_bits=(9,),
                                        collider_bits=0, all_ways_bits=(9,)))  # fmt: skip


@pytest.mark.soak
def test_threshold_intervals_at_the_defaults_decide_on_one_compare():
    """The same at every bit of the defaults, 4 to 21, every way climbing at 20 (13M
    tuples through the golden model, several minutes)."""
    top = get_top("multihash")
    _check_threshold_steps(native_bench(top, top.resolve({})))


def test_threshold_intervals_errors():
    with pytest.raises(ValueError, match="bit 13 needs [0-9]+ tuples, more than 16-bit counters"):
        _small_bench(threshold_bits=(13,), collider_bits=13).thresholds()
    with pytest.raises(ValueError, match="setup_length 8 is too short"):
        _small_bench(threshold_bits=(4,), setup_length=8).thresholds()


def test_threshold_intervals_at_the_defaults():
    """Bits 4 to 21 (thresholds up to 2**21 + 2), the colliders up to bit 15, every way
    climbing at bit 20; every test interval fits the 24-bit counters; the whole part
    follows the set intervals (the stop-short, long-count and hold intervals follow it)."""
    top = get_top("multihash")
    bench = native_bench(top, top.resolve({}))
    parts = bench._threshold_intervals
    assert [t for _, t in parts[2::3]] == [2**p + 2 for p in range(4, 22)]
    assert all(len(k) == 64 and t == 2 for k, t in parts[1::3])
    assert all(len(k) == 8 and t == 8 for k, t in parts[::3])
    assert max(len(k) for k, _ in parts) < 2**24 and len(parts[-1][0]) > 2**22
    held = 2 * len(bench.hold_thresholds)  # the hold intervals' parts come last
    assert bench._directed_parts()[-3 - held][1:] == (len(parts[-1][0]), 2**21 + 2)
    # bit 20's test interval: the climber (way 0) and U, then ways 1-3 in turn to T - 1
    at20 = parts[3 * (20 - 4) + 2][0]
    assert len(at20) > 5 * 2**20 and len(set(at20[-3 * (2**20 - 256):].tolist())) == 3


@pytest.mark.parametrize("params", [None, SMALL])
def test_boundary_intervals_read_out_from_every_lowest_set(params):
    """For every pair of sets ``(s, s')``: an interval whose candidates are a key of set
    ``s`` and one of a set above it (their records, in entry order: set ``s`` first) and
    whose last tuple is of set ``s'`` (the defaults' 25 sets: 625 intervals; the small
    profiler's 4: 16)."""
    top = get_top("multihash")
    bench = (native_bench(top, top.resolve({})) if params is None
             else _small_bench(boundary_pairs=True))  # fmt: skip
    config = MultiHashConfig(**bench.params)
    keys = bench.boundary()
    pairs = bench._boundary_sets()
    assert len(pairs) == config.sets**2 and len(keys) == len(pairs) * bench.boundary_length

    hashes = config.hashes()

    def set_of(k):
        return config.set_index([h(k) for h in hashes])

    model = MultiHashProfiler(**bench.params)
    model.interval_length, model.threshold = bench.boundary_length, 2
    profiles = [p for k in keys.tolist() if (p := model.step(k)) is not None]
    assert len(profiles) == len(pairs)
    for (s, last), interval, profile in zip(pairs, keys.reshape(len(pairs), -1).tolist(),
                                            profiles, strict=True):  # fmt: skip
        a, b = interval[0], interval[1]
        assert set_of(a) == s and set_of(interval[-1]) == last
        assert set_of(b) > s or set_of(b) == s == config.sets - 1
        assert [k for k, _ in profile] == [a, b] and len(set(interval)) == len(interval) - 2
    with pytest.raises(ValueError, match="boundary_length 8 < 9"):
        _small_bench(boundary_pairs=True, boundary_length=8).boundary()


def _native_stage(tmp_path, runner, mutants, options, journal):
    """The native stage of :func:`mutate_top` on ``mutants`` (fresh copies): their record
    (index, status, detail) and the survivors' indices."""
    from hwprof.verify.mutate import Mutant, MutationReport, _run_native_units

    report = MutationReport("multihash", runner.bench.params, 1)
    report.mutants = [Mutant(m.index, m.command, m.src) for m in mutants]
    lines = []
    survivors = _run_native_units(report, runner, report.mutants, lines.append, options,
                                  journal, "design")  # fmt: skip
    record = [(m["index"], m["status"], m["detail"]) for m in report.record()["mutants"]]
    return record, [m.index for m in survivors], lines


@pytest.mark.soak
def test_native_stage_same_record_on_jobs_1_and_2_and_resumes(tmp_path):
    """Eight mutants of the small profiler, one build: the native stage's record (and its
    survivors) is the same with ``--jobs 1`` and ``--jobs 2``; a run cut after two mutants
    (its journal cut to them), resumed, runs only the others (the two keep their records,
    timing too) and gives the same record (about two minutes with the build)."""
    from hwprof.run import RunOptions

    mutants, runner = _small_mutants_runner(8, tmp_path)
    journal = tmp_path / "runs" / "mutate-multihash.jsonl"
    native = journal.with_name("mutate-multihash-native.jsonl")
    one, survivors, lines = _native_stage(tmp_path, runner, mutants, RunOptions(jobs=1), journal)
    assert any(status == "killed" for _, status, _ in one), one
    assert [i for i, status, _ in one if status == "pending"] == survivors
    assert len(lines) == 1 + len(mutants) and lines[0].startswith("original passes the native")
    two, survivors2, _ = _native_stage(tmp_path, runner, mutants, RunOptions(jobs=2), journal)
    assert two == one and survivors2 == survivors
    # a cut run: the journal holds its header and the first two mutants that finished
    head, *units = native.read_text().splitlines()
    kept = {json.loads(u)["unit"]: json.loads(u) for u in units[:2]}
    native.write_text("\n".join([head, *units[:2]]) + "\n")
    again, survivors3, _ = _native_stage(tmp_path, runner, mutants,
                                         RunOptions(jobs=2, resume=True), journal)  # fmt: skip
    assert again == one and survivors3 == survivors
    after = {r["unit"]: r for r in map(json.loads, native.read_text().splitlines()[1:])}
    assert set(after) == {str(m.index) for m in mutants}
    for unit, record in kept.items():  # not run again: the same record, its timing too
        assert after[unit] == record
    assert all(after[u]["timing"] != record["timing"] for u in after if u not in kept
               for record in kept.values())  # fmt: skip
    # a journal of another stimulus is refused on --resume
    from hwprof.run import RunError

    runner.digest = "0" * 64
    with pytest.raises(RunError, match="records another run"):
        _native_stage(tmp_path, runner, mutants, RunOptions(jobs=1, resume=True), journal)


def _stop_short_run(bench, threshold):
    """``(records, reads)`` of the golden model over the stop-short interval at ``threshold``:
    the records (keys) at its end and, per key hit more than once, ``(counts, position)``
    before each hit (its counter in every hash)."""
    keys = bench.stop_short().tolist()
    model = MultiHashProfiler(**{**bench.params, "interval_length": len(keys),
                                 "threshold": threshold})  # fmt: skip
    many = {k for k in keys if keys.count(k) > 1}
    reads, records = {}, []
    for at, key in enumerate(keys):
        if key in many:
            counts = [model.counts[i][j] for i, j in enumerate(model.indices(key))]
            reads.setdefault(key, []).append((counts, at))
        profile = model.step(key)
        if profile is not None:
            records += [k for k, _ in profile]
    assert model.position == 0  # the interval ended with the last key
    return records, reads


def test_stop_short_interval_stops_one_hit_short():
    """At the defaults: per hash ``h`` a key whose other counters read ``T - 1`` (colliders
    hit ``T - 1`` times, not promoted) comes ``T - 1`` times at distances 1, 2, 3 (its own
    counter read at 0 to ``T - 2``) and is not recorded; with the compare one count early
    (threshold ``T - 1``) every such key is recorded."""
    top = get_top("multihash")
    bench = native_bench(top, top.resolve({}))
    t = bench.stop_short_threshold
    held = 2 * len(bench.hold_thresholds)  # the hold intervals' parts come last
    assert (t, bench._directed_parts()[-2 - held][1:]) == (5, (96, 5))
    records, reads = _stop_short_run(bench, t)
    assert records == []
    climbers = [k for k, hits in reads.items() if len(hits) == t - 1 and
                min(hits[0][0]) == 0 and sorted(hits[0][0])[1] >= t - 1]  # fmt: skip
    assert len(climbers) == 4
    for h, key in enumerate(climbers):
        counts = [c for c, _ in reads[key]]
        assert [c[h] for c in counts] == list(range(t - 1))  # its own counter, 0 to T - 2
        assert all(c[u] >= t - 1 for c in counts for u in range(4) if u != h)
        positions = [at for _, at in reads[key]]
        assert np.diff(positions).tolist() == list(range(1, t - 1))
    early, _ = _stop_short_run(bench, t - 1)
    assert set(climbers) <= set(early)
    with pytest.raises(ValueError, match="needs 76 tuples, more than stop_short_length 60"):
        native_bench(top, top.resolve({}), stop_short_length=60).stop_short()


def _lt_wrong_at(a, b, p):
    """``a < b`` with the level-1 group of bits ``p - 1`` and ``p`` of the compare tree wrong
    (its ``lt`` term inverted by the ``lt`` of bit ``p - 1``): flipped when bit ``p - 1``
    is 0 in ``a`` and 1 in ``b``, bit ``p`` differs and the bits above are equal."""
    lo, hi = p - 1, p
    flip = (not a >> lo & 1 and b >> lo & 1 and (a >> hi & 1) != (b >> hi & 1)
            and a >> (hi + 1) == b >> (hi + 1))  # fmt: skip
    return (a < b) != bool(flip)


def _long_count_run(bench, wrong_bit=0):
    """``(records, reads)`` of the golden model over the long-count interval: its records
    and X's counters before each hit with the tuple ahead. With ``wrong_bit``, a stand-in
    of the RTL's minimum (a counter is a minimum iff its pair compares say ``<=`` every
    other; the new estimate the OR of the minima's ``+ 1``) whose compare of counter 0
    (read) with counter 1 (forwarded from the tuple ahead) is wrong at that bit."""
    keys, x, ys = bench._long_count
    keys = keys.tolist()
    model = MultiHashProfiler(**{**bench.params, "interval_length": len(keys),
                                 "threshold": (1 << bench.long_count_bit) + 2})  # fmt: skip
    n = model.config.tables
    reads, records, before = [], [], None
    for key in keys:
        index = model.indices(key)
        old = [model.counts[i][index[i]] for i in range(n)]
        if key == x:
            reads.append((old, before))
        ahead = before is not None and [
            a == b for a, b in zip(model.indices(before), index, strict=True)]  # fmt: skip
        if wrong_bit and ahead == [False, True] + [False] * (n - 2):
            le = [[True] * n for _ in range(n)]
            for i in range(n):
                for j in range(i + 1, n):
                    a, b = old[i], old[j]
                    lt = _lt_wrong_at(a, b, wrong_bit) if (i, j) == (0, 1) else a < b
                    le[i][j], le[j][i] = lt or a == b, not lt
            is_min = [all(le[i][j] for j in range(n) if j != i) for i in range(n)]
            new = [v + 1 if m else v for v, m in zip(old, is_min, strict=True)]
            estimate = 0
            for v, m in zip(new, is_min, strict=True):
                estimate |= v if m else 0
            assert estimate < model.threshold  # (not promoted here)
            for i in range(n):
                model.counts[i][index[i]] = new[i]
            model.position += 1
        else:
            profile = model.step(key)
            if profile is not None:
                records += profile
        before = key
    assert model.position == 0  # the interval ended with the last key
    return records, reads


def test_long_count_interval_reaches_bit_17_of_a_pair_compare():
    """At the defaults: X's counter 0 (read) at ``2**17`` and counter 1 (forwarded from the
    tuple ahead, a minimum) at ``2**17 - 2``, ``2**17 - 1``: bits 16-17 of their compare
    decide; X recorded with ``T + 6``; with that compare wrong (the stand-in of the RTL's
    minimum), a lower count."""
    top = get_top("multihash")
    bench = native_bench(top, top.resolve({}))
    p = bench.long_count_bit
    t = (1 << p) + 2
    keys, x, ys = bench._long_count
    held = 2 * len(bench.hold_thresholds)  # the hold intervals' parts come last
    assert (p, bench._directed_parts()[-1 - held][1:]) == (17, (len(keys), t))
    assert len(keys) == 4 * (1 << 16) + 10
    config = MultiHashConfig(**bench.params)
    ix = [h(x) for h in config.hashes()]
    for y in ys:  # only table 1's counter shared with X
        shared = [a == b for a, b in zip([h(y) for h in config.hashes()], ix, strict=True)]
        assert shared == [False, True, False, False]
    records, reads = _long_count_run(bench)
    assert records == [(x, t + 6)]
    forwarded = [old for old, ahead in reads if ahead in ys]
    assert forwarded == [[1 << 17, (1 << 17) - 2, (1 << 17) - 2, (1 << 17) - 2],
                         [1 << 17, (1 << 17) - 1, (1 << 17) - 1, (1 << 17) - 1]]  # fmt: skip
    assert all(max(old) <= t for old, _ in reads)  # (T written when promoted, then shielded)
    wrong, _ = _long_count_run(bench, wrong_bit=17)
    assert len(wrong) == 1 and wrong[0][0] == x and wrong[0][1] < t + 6
    assert _long_count_run(bench, wrong_bit=16)[0] == records  # another bit: not reached
    assert _lt_wrong_at(1 << 17, (1 << 17) - 2, 17) and not (1 << 17) < (1 << 17) - 2
    with pytest.raises(ValueError, match="long-count interval of bit 23 needs"):
        native_bench(top, top.resolve({}), long_count_bit=23).long_count()


class _StandIn:
    """A harness stand-in for run_native: a Python process instead of the Verilator
    harness, ``script`` run under the bench's CPU limit; its one transfer compared."""

    def __init__(self, script):
        self.script = script

    def run(self, keys, work, drain, ready, seed, plusargs=(), cpu_limit=None, stalls=False):
        import sys

        from hwprof.sim.native import run_harness

        report = run_harness([sys.executable, "-c", self.script], cpu_limit=cpu_limit)
        return StreamRun(1, 1, 0, 0.0, 0.0, 0.0, 0.0, np.zeros(1, np.uint64),
                         process_cpu_seconds=report["process_cpu_seconds"])  # fmt: skip


class _Bench:
    drain, ready, seed = 0, 0.5, 1

    @staticmethod
    def compare(run, want):
        return 0, "1 records and markers match"


def test_native_run_limits_cpu_not_wall(tmp_path):
    """A run that sleeps 2.5 s passes under a 1 CPU-second limit; one that spins is
    stopped by it, a timeout (the mutant killed), with the limit in its detail."""
    from hwprof.verify.mutate_native import run_native

    slow = "import json, time; time.sleep(2.5); print(json.dumps({}))"
    verdict, detail, cpu = run_native(_Bench, _StandIn(slow), tmp_path, 2, 1, (None, None, None))
    assert (verdict, detail) == ("pass", "native: 1 records and markers match") and cpu < 1
    verdict, detail, cpu = run_native(_Bench, _StandIn("while True: pass"), tmp_path, 1, 1,
                                      (None, None, None))  # fmt: skip
    assert (verdict, detail) == ("timeout", "native: no verdict in 1 CPU-s") and cpu >= 0.9
