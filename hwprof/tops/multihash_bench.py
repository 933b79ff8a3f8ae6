"""The multi-hash profiler's native bench of ``hwprof mutate multihash --bench native``.

Each mutant (one Verilog for all, :mod:`hwprof.verify.mutate_native`) runs on the first
:attr:`MultihashBench.tuples` ``<load pc, value>`` tuples of the shipped ``perl`` trace
(32-bit fields, as ``python -m hwprof.verify.trace_verify``), the output's ready high on
:attr:`MultihashBench.ready` of the cycles. The design is the top's own (its
parameters, ``-p`` included); the test bench writes the configuration registers
through the ``cfg_*`` ports while it runs (:attr:`MultihashBench.writes`), so the
first interval runs at the top's reset values (10,000 tuples, threshold 100 at
the defaults) and the later ones at shorter intervals and lower thresholds, where
intervals end and records appear hundreds of times in a short run (the default
interval would end 26 times in 260,000 tuples). Every record and every end
marker (its ``end`` flag) read out is compared, in order, with the golden model
(:class:`hwprof.golden.multihash.MultiHashProfiler` stepped over the same tuples,
:meth:`~hwprof.golden.multihash.MultiHashProfiler.configure` called at the same
tuples), and nothing may follow the last marker. The golden model has no timing;
the cycles in which the input stalls are compared, every run of stalls, with the
stall rule's cycle model (:meth:`MultihashBench.expected_stalls`,
:mod:`hwprof.golden.multihash_stall`). The keys are relabelled per block
(:attr:`MultihashBench.relabel`); a directed interval, a forwarding and a
requalifying interval, dense intervals, table-entry groups, set intervals,
boundary, threshold, stop-short, long-count and hold intervals follow the trace's
tuples (:attr:`MultihashBench.counts_interval`, :attr:`MultihashBench.fwd_interval`,
:attr:`MultihashBench.fwd_below`, :attr:`MultihashBench.dense_intervals`,
:attr:`MultihashBench.rom_groups`, :attr:`MultihashBench.set_groups`,
:attr:`MultihashBench.boundary_pairs`, :attr:`MultihashBench.threshold_bits`,
:attr:`MultihashBench.stop_short_threshold`, :attr:`MultihashBench.long_count_bit`,
:attr:`MultihashBench.hold_thresholds`); a
second run per mutant, always ready at the reset values, must match and must not stall
(:attr:`MultihashBench.free_tuples`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..sim.native import OPT, StreamHarness
from ..sim.runner import DEFAULT_BUILD_ROOT
from ..traces.workloads import SHIPPED_DIR

__all__ = ["MultihashBench", "config_drive", "hold_drive", "CONFIG_DECLS"]


#: wrapper declarations of :func:`config_drive`: the plusarg ``+nocfg`` turns the writes
#: (and the holds of :func:`hold_drive`) off
CONFIG_DECLS = "reg cfg_off = 1'b0;\n  initial cfg_off = $test$plusargs(\"nocfg\");"


def config_drive(writes, width: int) -> dict:
    """``drive`` of :func:`hwprof.sim.native.stream_wrapper` for the multi-hash
    profiler's configuration port: write ``(interval, threshold)`` in the cycle
    that accepts tuple ``n`` (0-based), for each ``(n, interval, threshold)`` of
    ``writes`` (increasing ``n``); none with the plusarg ``+nocfg``
    (:data:`CONFIG_DECLS`)."""
    writes = sorted(writes)
    we = " || ".join(f"accepted == 64'd{n}" for n, _, _ in writes) or "1'b0"

    def value(k):
        expr = f"{width}'d0"
        for n, *v in reversed(writes):
            expr = f"(accepted <= 64'd{n} ? {width}'d{v[k]} : {expr})"
        return expr

    return {"cfg_we": f"!cfg_off && in_valid_q && in_ready && ({we})",
            "cfg_interval": value(0), "cfg_threshold": value(1)}  # fmt: skip


def hold_drive(holds) -> tuple[str, str]:
    """``(decls, hold)`` of :func:`hwprof.sim.native.stream_wrapper`: the output's ready
    held low for ``cycles`` cycles after the cycle that accepts tuple ``n`` (0-based), for
    each ``(n, cycles)`` of ``holds``; none with the plusarg ``+nocfg`` (its ``cfg_off``,
    :data:`CONFIG_DECLS`, declared before)."""
    holds = sorted(holds)
    start = " || ".join(f"accepted == 64'd{n}" for n, _ in holds) or "1'b0"
    load = "32'd0"
    for n, cycles in reversed(holds):
        load = f"(accepted == 64'd{n} ? 32'd{cycles} : {load})"
    decls = ("reg [31:0] hold_left = 32'd0;\n"
             "  always @(posedge clk)\n"
             f"    if (!cfg_off && in_valid_q && in_ready && ({start})) hold_left <= {load};\n"
             "    else if (hold_left != 32'd0) hold_left <= hold_left - 32'd1;")  # fmt: skip
    return decls, "hold_left != 32'd0"


@dataclass
class MultihashBench:
    """The multi-hash profiler's native bench (see the module docstring)."""

    #: the top the bench drives (its harness is built as ``<top>-mutants``)
    top = "multihash"

    params: dict
    trace: Path = SHIPPED_DIR / "perl.trace"
    tuples: int = 260_000
    #: ``(tuple, interval, threshold)``: configuration writes, each in the cycle that
    #: accepts that tuple; it takes effect at the end of that tuple's interval (the
    #: golden model's ``configure`` before that tuple's ``step``). The first is in the
    #: middle of the first interval at the defaults (10,000 tuples): 191 intervals of
    #: 1,000 tuples at threshold 5 follow (up to 90 records each on perl, most of the
    #: 100 entries), then 590 of 100 tuples at threshold 2 (the readout of one
    #: interval still running when the next tuples reach the threshold: stalls).
    writes: tuple = ((5_000, 1_000, 5), (200_500, 100, 2))
    #: the keys relabelled in blocks of this many tuples (0: not): every key of block
    #: ``b = (t + block / 2) // block`` XORed with the byte ``97 b mod 256`` repeated in
    #: every byte of the key. A bijection within each block: the trace's repetitions,
    #: hot tuples and collisions stay; over 256 blocks every byte value reaches every
    #: byte position of the hash units' inputs (a program's pcs alone leave most of
    #: the pc byte tables unread). The block boundaries fall in the middle of the
    #: 1,000-tuple intervals, so retained candidates meet their keys again.
    relabel: int = 1_000
    #: the directed interval (``counts_repeat`` 0: none), after the trace's tuples:
    #: ``counts_interval`` tuples at threshold ``counts_threshold`` (written :attr:`lead` tuples
    #: before the trace ends): one key repeated back to back ``counts_repeat`` times (its
    #: counts forwarded from the tuple ahead), then four keys in turn, each as often
    #: (counts read from the memories; the last two in one set, so in two ways), then
    #: distinct keys. Counts in the tables and the entries pass 127, 1,023, 2,047 and
    #: the threshold's bits 10-11, values the trace never produces.
    counts_interval: int = 16_384
    counts_threshold: int = 3_073
    counts_repeat: int = 3_200
    #: the forwarding interval after the directed one (``fwd_repeat`` 0: none):
    #: ``fwd_interval`` tuples at threshold ``fwd_threshold`` (written :attr:`lead`
    #: tuples before the directed interval ends). Two pairs of keys, each pair in one
    #: set that holds none of the directed interval's keys (so that the first of a pair
    #: takes way 0 and the second way 1 at the threshold), ``fwd_repeat`` times each:
    #: the first pair as ``f, g, x`` (``x`` a new key each time), the second as ``f, g,
    #: x`` up to the threshold, then ``f, x`` and then ``g, x``; then distinct keys.
    #: Their entries' counts come from the tuple three (first pair) or two (second)
    #: ahead, stage C's forwarding (``d_fwd_count``: neither the memory nor the tuple
    #: one ahead, which are all the directed interval uses), and pass 1,023, 1,151 and
    #: 1,279 (carries out of 10 and of 7 low bits at 1). A first form (one pair, at
    #: distance 3 and then as ``f, g``) left a mutant of the carry into bit 9 of way 0's
    #: forwarded count unseen: its effect shows when
    #: ``f``'s distance-3 tuples come last, and ``f, g`` alternating (the tuple ahead in
    #: the same set) does not reach that forwarding at all, ``f, x`` does.
    fwd_interval: int = 20_480
    fwd_threshold: int = 1_000
    fwd_repeat: int = 1_300
    #: with 4 ways or more each set gets a second pair after the first, in ways 2 and 3.
    #: Then (``fwd_below`` 0: not) a second interval of the same length and threshold
    #: brings the same keys back, retained and replaceable, with the same distances:
    #: ways 0 and 2 of the first set and 1 and 3 of the second counted past the
    #: threshold (requalified: records), the others to ``fwd_below`` under it (no
    #: record): the forwarded counts' compares with ``threshold - 1``, which only a
    #: requalifying entry makes below the threshold, in every way.
    fwd_below: int = 100
    #: the dense intervals after the forwarding one (``dense_intervals`` 0: none):
    #: ``dense_intervals`` intervals of ``dense_length`` distinct random keys each at
    #: threshold ``dense_threshold`` (one configuration write). A counter's valid bit
    #: wrongly set (or its read address wrong) makes it read a value of an earlier
    #: interval instead of 0; that changes a key's estimate only when the key's other
    #: counters are already written in this interval, and at threshold 2 the key is
    #: then promoted (a record) where it should not be. With 800 keys per interval about
    #: 80 % of each table's 512 counters are written by an interval's end, so each
    #: counter's first write of an interval often comes after its key's other three:
    #: on the golden model with one counter's previous value put back after each
    #: boundary (what those mutants do), 29 of 30 random counters changed the records
    #: in 40 intervals (18 of 20 with 470 keys per interval).
    dense_intervals: int = 40
    dense_length: int = 800
    dense_threshold: int = 2
    #: the table-entry groups after the dense intervals (``rom_groups`` False: none):
    #: one group per entry of every hash unit's byte tables (hash ``i``, a byte of the
    #: value or pc field, a byte value ``v``: 4 x 8 x 256 = 8,192 at the defaults),
    #: :attr:`rom_per_interval` groups per interval at threshold 2. A group is ``K1,
    #: K_u (each other hash u), K2``, fresh keys: K1's byte is ``v``; K2's byte is
    #: ``v`` with its top two bits flipped (another branch of the ROM's case tree) and
    #: K2 collides with K1 in hash ``i`` only through the tables' data (no other
    #: key of the interval before K2 has K2's counter in hash ``i``); each K_u
    #: collides with K2 in hash ``u``. So K2's counters all read 1 when it comes: it
    #: is promoted (a record). A wrong bit in entry ``v`` of that table moves K1's
    #: counter in hash ``i`` away from K2's, K2 reads 0 there and is not promoted.
    #: (The trace's relabelled keys read every entry too, but a changed index
    #: changes a record only where its collisions decide a promotion.)
    rom_groups: bool = True
    rom_per_interval: int = 10
    #: the set intervals after the table-entry groups (``set_groups`` False: none): a
    #: key's accumulator set is a ROM of ``x``, bits of its hash indices (4,096 entries
    #: at the defaults). Intervals of ``accumulator`` fresh keys at threshold 1 (each
    #: promoted when it comes), ``ways`` keys of each set, so the entries fill every way
    #: of every set; over the intervals every ``x`` is some key's. A wrong ROM entry
    #: puts a key in another set, which then has one key too many: one is refused, a
    #: record is missing (41 intervals of 100 at the defaults).
    set_groups: bool = True
    #: the boundary intervals after the set intervals (``boundary_pairs`` False or ``ways``
    #: 0: none): for every pair of sets ``(s, s')``, an interval of
    #: :attr:`boundary_length` tuples at threshold 2: a fresh key of set ``s`` twice and
    #: one of a set above ``s`` twice (promoted: the interval's candidates, the lowest
    #: in set ``s``; for the last set a second key of it), fresh keys of other sets once
    #: (not promoted), the last a fresh key of set ``s'``. The readout's first set is
    #: picked at the boundary from every set's flags, set ``s'``'s from the last tuple's
    #: own update (the entry flags' select): a wrong pick reads the sets out of order
    #: (625 intervals, 6,250 tuples at the defaults).
    boundary_pairs: bool = True
    boundary_length: int = 10
    #: the threshold intervals after the boundary intervals (``threshold_bits`` empty: none).
    #: The other parts' thresholds (at most 3,073) leave bits 12-23 of every compare
    #: with ``threshold - 1`` at 0 on both sides. For each ``p`` here, a flush interval
    #: (8 fresh keys at threshold 8: no candidate at its end, so every entry is emptied
    #: and the setup below places ``F_w`` in way ``w``), a setup interval
    #: of :attr:`setup_length` tuples at threshold 2 (the ``ways`` keys ``F_w`` of one
    #: set hit twice each, the rest fresh keys: the ``F_w`` fill the set and are retained
    #: into the next interval) and a test interval at threshold ``T = 2**p + 2`` (so
    #: ``T - 1 = 2**p + 1``: a count below ``2**p`` compares with it at bit ``p``, and a
    #: count of 1 equals it but for bit ``p``). The test interval: (1) for
    #: ``p <= collider_bits``, per hash ``h`` a fresh key ``K_h`` and, per other hash
    #: ``u``, a key ``J_hu`` that shares ``K_h``'s counter in hash ``u`` only, hit ``T -
    #: 1`` times back to back (not promoted); then ``K_h``, whose other counters now
    #: read ``T - 1`` or more, climbs: :attr:`threshold_window` hits at tuple distances
    #: 2, 3, 1, 4, 5 in turn, back to back, then :attr:`threshold_window` hits with a
    #: ``J_hu`` between two of them (hash ``u``'s counter forwarded from the tuple
    #: ahead, the others read), ``T + 16`` hits in all (promoted at ``T``): hash ``h``'s
    #: compare with ``T - 1`` alone decides the promotion, from 0 up, and the four
    #: counters differ in their low bits at the end (the candidates' pairwise
    #: compares); (2) every ``F_w`` (retained, replaceable, count 0)
    #: :attr:`threshold_window` hits at distances 2, 3, 1, 4, 5 in turn (the entry
    #: counts' compares with ``T - 1`` through the memory and every forwarding path,
    #: counts 0 to 255: their bits 0-7 both ways), then ``F_(p mod ways)`` until it
    #: requalifies at ``T``, its first :attr:`climb_rounds` hits at the five distances in
    #: turn, the rest at distance 2 with a fresh key ``U`` between; then ``U`` with
    #: another key between until ``U`` is promoted at ``T`` (its counters read and ``+
    #: 1``'d at distance 2 from 0 to ``T``, and a wrong ``+ 1`` loses its record). Test
    #: intervals of about ``2 T`` tuples (``18 T`` with the colliders): 5.5M tuples for
    #: ``p`` 4 to 20 at the defaults; bit 21 adds 4.2M (bits 22-23 would take 25M more).
    threshold_bits: tuple = tuple(range(4, 22))
    #: at these of :attr:`threshold_bits`, after ``U``, the other ``F_w`` climb as well, in
    #: turn (each at distance ``ways - 1``, stage C's forwarding; with one other way, ``V``
    #: between), to ``T - 1`` hits each, where the interval ends: their compares with
    #: ``T - 1`` say no up to the last (count ``T - 2``), so they are not read out, and a
    #: compare wrong at a count of ``2**p`` (bit ``p`` of the count and of ``T - 1`` set)
    #: requalifies one early and reads it out (one climber alone leaves the other ways'
    #: high count bits at 0). 3.1M tuples at bit 20.
    all_ways_bits: tuple = (20,)
    collider_bits: int = 15
    setup_length: int = 64
    threshold_window: int = 256
    climb_rounds: int = 4_096
    #: the stop-short interval after the threshold intervals (``stop_short_threshold`` 0:
    #: none): :attr:`stop_short_length` tuples at threshold ``T`` = ``stop_short_threshold``.
    #: Per hash ``h`` a fresh key ``K_h`` and, per other hash ``u``, a key ``J_hu`` that
    #: shares ``K_h``'s counter in hash ``u`` only, hit ``T - 1`` times back to back (not
    #: promoted); then ``K_h`` ``T - 1`` times, at tuple distances 1, 2, 3, ... (a fresh key
    #: between), and never again: its own counter in hash ``h`` alone is below ``T - 1``,
    #: read from the tuple ahead, from stage C's forwarding and from the memory at counts 1
    #: to ``T - 2``, so a compare with ``T - 1`` that says "at least" too early promotes
    #: ``K_h`` (a record of a key the golden model leaves out). The threshold intervals'
    #: keys climb past ``T``, where an early promotion gives the same count.
    stop_short_threshold: int = 5
    stop_short_length: int = 96
    #: the long-count interval after the stop-short interval (``long_count_bit`` 0: none):
    #: one interval at threshold ``T = 2**p + 2`` (``p`` = ``long_count_bit``, ``H =
    #: 2**(p - 1)``). A key ``J`` that shares only table 0's counter with a key ``X`` hit
    #: ``2 H`` times (that counter at ``2 H``: bit ``p`` set, bit ``p - 1`` clear; not
    #: promoted), ``X`` ``2 H - 2`` times back to back (its other counters at ``2 H - 2``:
    #: bit ``p - 1`` set, bit ``p`` clear), then twice a key ``Y_r`` that shares only table
    #: 1's counter with ``X`` and ``X`` right after it (counter 1 forwarded from the tuple
    #: ahead, counter 0 read: the pair compare of counters 0 and 1 at their bits ``p - 1``
    #: and ``p``, with counter 1 a minimum), then ``X`` 8 times back to back (promoted at
    #: ``T``, recorded with ``T + 6``). A compare of the two wrong at those bits leaves
    #: counter 1 (or every counter) where it was, and ``X`` is promoted later, with a lower
    #: count. The other parts' counts stay below ``2**16``. ``4 H + 10`` tuples: 262,154 at
    #: bit 17.
    long_count_bit: int = 17
    #: the hold intervals after the long-count interval (``hold_thresholds`` empty: none):
    #: for each ``T`` here, a setup interval of :attr:`hold_setup` tuples at threshold 2
    #: (:attr:`hold_records` keys of different sets twice each, then fresh keys: that many
    #: records) and a test interval of ``T + 8`` fresh keys at threshold ``T`` (no record).
    #: The consumer holds ``records.ready`` low for ``T +`` :attr:`hold_margin` cycles
    #: after the cycle that accepts the setup interval's last tuple (:meth:`holds`), so
    #: that readout is still incomplete when the test interval reaches position ``T - 1``:
    #: the input must stall exactly there (the stall rule of docs/multihash.md, checked
    #: cycle by cycle against :func:`hwprof.golden.multihash_stall.stall_runs`), until the
    #: hold ends and the readout completes. The thresholds ``2**p + 1`` and ``2**p + 2``
    #: make ``T - 2`` (the position before which the input may not stall, computed from the
    #: written threshold) ``2**p - 1`` (a borrow through bits 0 to ``p - 1``) and ``2**p``
    #: (bit ``p`` set): a wrong bit of it moves the stall. 66,000 tuples for ``p`` 1 to 14.
    hold_thresholds: tuple = tuple(t for p in range(1, 15) for t in ((1 << p) + 1, (1 << p) + 2))
    hold_setup: int = 24
    hold_records: int = 8
    hold_margin: int = 16
    #: the directed, forwarding and dense intervals' configuration writes come this many tuples
    #: before the interval ahead of them ends (in that interval: less than its length)
    lead: int = 50
    ready: float = 0.75
    seed: int = 1
    #: cycles after the last tuple (the last readout, at ``ready``)
    drain: int = 1_000
    #: the second run of each mutant: the first ``free_tuples`` tuples of ``free_trace``
    #: (as traced; sort's hot tuples reach the reset threshold 100: 6-12 candidates per
    #: 10,000-tuple interval, perl's almost none) at the reset values (no configuration
    #: write: ``+nocfg``) with the output always ready. Its records are compared as
    #: well, and it must not stall: the design's stated throughput (docs/multihash.md),
    #: one tuple per cycle while ``threshold >= candidates + 8`` (``>= 7`` without
    #: candidates; checked on the golden model's candidates). 0: no second run.
    free_tuples: int = 40_000
    free_trace: Path = SHIPPED_DIR / "sort.trace"

    #: C++ optimisation of the build (hwprof.sim.native.OPT; "-O0" builds faster)
    opt: str = OPT

    def _load(self, trace: Path, tuples: int) -> np.ndarray:
        """The first ``tuples`` load tuples of ``trace``, ``pc:value`` keys of the top's
        widths."""
        from ..traces.keys import PORT_VALUE_MAP, trace_keys

        keys = np.concatenate(list(trace_keys(trace, limit=tuples, pc_bits=self.params["pc_bits"],
                                              value_bits=self.params["value_bits"],
                                              value_map=PORT_VALUE_MAP)))  # fmt: skip
        if len(keys) < tuples:
            raise ValueError(f"{trace}: {len(keys)} load tuples, the bench needs {tuples}")
        return keys

    def free_keys(self) -> np.ndarray:
        """The always-ready run's tuples (:attr:`free_trace`, as traced)."""
        return self._load(self.free_trace, self.free_tuples)

    def _directed_parts(self) -> list[tuple[int, int, int]]:
        """``(first tuple, interval, threshold)`` of each directed part present (the
        directed, forwarding and dense intervals, the table-entry groups and the set
        intervals), in order after the trace's tuples."""
        parts, start = [], self.tuples
        for present, tuples, interval, threshold in (
                (self.counts_repeat, self.counts_interval, self.counts_interval,
                 self.counts_threshold),
                (self.fwd_repeat, self.fwd_interval, self.fwd_interval, self.fwd_threshold),
                (self.fwd_repeat and self.fwd_below, self.fwd_interval, self.fwd_interval,
                 self.fwd_threshold),
                (self.dense_intervals, self.dense_intervals * self.dense_length,
                 self.dense_length, self.dense_threshold),
                (self.rom_groups, len(self._rom_entries()) * self._rom_group,
                 self.rom_per_interval * self._rom_group, 2),
                (self.set_groups and self.params["ways"],
                 self._set_rounds() * self.params["accumulator"], self.params["accumulator"],
                 1)):  # fmt: skip
            if present:
                parts.append((start, interval, threshold))
                start += tuples
        if self.boundary_pairs and self.params["ways"]:
            pairs = len(self._boundary_sets())
            parts.append((start, self.boundary_length, 2))
            start += pairs * self.boundary_length
        for keys, threshold in self._threshold_intervals:
            parts.append((start, len(keys), threshold))
            start += len(keys)
        if self.stop_short_threshold:
            parts.append((start, self.stop_short_length, self.stop_short_threshold))
            start += self.stop_short_length
        if self.long_count_bit:
            n = len(self.long_count())
            parts.append((start, n, (1 << self.long_count_bit) + 2))
            start += n
        for t in self.hold_thresholds:
            parts.append((start, self.hold_setup, 2))
            parts.append((start + self.hold_setup, t + 8, t))
            start += self.hold_setup + t + 8
        return parts

    def schedule(self) -> tuple:
        """The configuration writes: :attr:`writes` and the directed intervals', each
        :attr:`lead` tuples before its part starts, or fewer when the interval ahead of it
        is shorter than ``lead + 4`` (a write must not fall in an interval's first 4
        tuples); ValueError if that interval is shorter than 5."""
        writes, before = [], None
        for start, interval, threshold in self._directed_parts():
            lead = self.lead if before is None else min(self.lead, before - 4)
            if lead < 1:
                raise ValueError(f"the directed part at tuple {start} follows intervals of "
                                 f"{before} tuples: too short for its configuration write")
            writes.append((start - lead, interval, threshold))
            before = interval
        return (*self.writes, *writes)

    def _key_source(self, seed: int):
        """``(config, key, set_of)``: the top's :class:`MultiHashConfig`, ``key()`` a
        random key of its width (numpy generator ``seed``), ``set_of(k)`` the
        accumulator set of ``k`` (0 when fully associative)."""
        from ..golden.multihash import MultiHashConfig

        config = MultiHashConfig(**self.params)
        hashes = config.hashes()
        rng = np.random.default_rng(seed)

        def key():
            return int(rng.integers(0, 1 << config.key_bits, dtype=np.uint64))

        def set_of(k):
            return config.set_index([h(k) for h in hashes]) if config.ways else 0

        return config, key, set_of

    def directed(self) -> np.ndarray:
        """The keys of the directed interval (see :attr:`counts_interval`)."""
        n, r = self.counts_interval, self.counts_repeat
        if not r:
            return np.zeros(0, np.uint64)
        if 5 * r > n:
            raise ValueError(f"counts_interval {n} < 5 x counts_repeat {r}")
        _, key, set_of = self._key_source(16)
        a, b, c, d = key(), key(), key(), key()
        e = key()
        while set_of(e) != set_of(d) or e == d:
            e = key()
        rest = [key() for _ in range(n - 5 * r)]
        return np.array([a] * r + [b, c, d, e] * r + rest, dtype=np.uint64)

    def _forwarding_keys(self):
        """``(sets, fresh)``: the forwarding interval's keys, per set a list of pairs
        (:meth:`forwarding`), and a source of fresh keys (distinct, none of the pairs')."""
        n, r, t = self.fwd_interval, self.fwd_repeat, self.fwd_threshold
        config, key, set_of = self._key_source(17)
        pairs_per_set = max(1, min(2, config.ways // 2))
        if not t < r or pairs_per_set * (7 * r - t) > n:
            raise ValueError(f"the forwarding interval needs fwd_threshold {t} < fwd_repeat "
                             f"{r} and {pairs_per_set * 7} x fwd_repeat - {pairs_per_set} x "
                             f"fwd_threshold <= fwd_interval {n}")  # fmt: skip
        directed, counts = np.unique(self.directed(), return_counts=True)
        # the sets of the directed interval's repeated keys (its entries, retained)
        taken = {set_of(int(k)) for k in directed[counts > 1]} if config.ways else set()
        if len(taken) + 2 > config.sets:  # (a small profiler): any sets, ways not guaranteed
            taken = set()
        sets = []
        for _ in range(2):
            f = key()
            while set_of(f) in taken:
                f = key()
            keys = [f]
            while len(keys) < 2 * pairs_per_set:
                g = key()
                if set_of(g) == set_of(f) and g not in keys:
                    keys.append(g)
            taken.add(set_of(f))
            sets.append([tuple(keys[k : k + 2]) for k in range(0, len(keys), 2)])
        paired = {k for pairs in sets for pair in pairs for k in pair}

        def fresh():
            while True:
                x = key()
                if x not in paired:
                    paired.add(x)
                    return x

        return sets, fresh

    def forwarding(self) -> np.ndarray:
        """The keys of the forwarding interval (see :attr:`fwd_interval`) and of the
        requalifying interval after it (see :attr:`fwd_below`), in one array."""
        n, r, t, below = self.fwd_interval, self.fwd_repeat, self.fwd_threshold, self.fwd_below
        if not r:
            return np.zeros(0, np.uint64)
        (first, second), fresh = self._forwarding_keys()
        keys = []
        for (f1, g1), (f2, g2) in zip(first, second, strict=True):
            keys += [k for _ in range(r) for k in (f1, g1, fresh())]
            keys += [k for _ in range(t) for k in (f2, g2, fresh())]
            for k in (f2, g2):  # then each alone, a new key (in another set) between its tuples
                keys += [y for _ in range(r - t) for y in (k, fresh())]
        keys += [fresh() for _ in range(n - len(keys))]
        if not below:
            return np.array(keys, dtype=np.uint64)
        again = []  # the same keys, retained: ways 0 and 2 of the first set and 1, 3 of the
        for (f1, g1), (f2, g2) in zip(first, second, strict=True):  # second pass the threshold
            again += [k for _ in range(t - below) for k in (f1, g1, fresh())]
            again += [k for _ in range(r - t + below) for k in (f1, fresh(), fresh())]
            again += [y for _ in range(t - below) for y in (f2, fresh())]
            again += [y for _ in range(r) for y in (g2, fresh())]
        if len(again) > n:
            raise ValueError(f"the requalifying interval needs {len(again)} tuples, more than "
                             f"fwd_interval {n}")  # fmt: skip
        again += [fresh() for _ in range(n - len(again))]
        return np.array(keys + again, dtype=np.uint64)

    def dense(self) -> np.ndarray:
        """The keys of the dense intervals (see :attr:`dense_intervals`): distinct."""
        from ..golden.multihash import MultiHashConfig

        n = self.dense_intervals * self.dense_length
        bits = MultiHashConfig(**self.params).key_bits
        if n > (1 << bits) // 4:
            raise ValueError(f"{n} distinct dense keys of {bits} bits: too many")
        rng = np.random.default_rng(19)
        keys: dict = {}
        while len(keys) < n:
            keys.update(dict.fromkeys(rng.integers(0, 1 << bits, size=n - len(keys),
                                                   dtype=np.uint64).tolist()))  # fmt: skip
        return np.array(list(keys), dtype=np.uint64)

    @property
    def _rom_group(self) -> int:
        """Tuples per table-entry group: K1, one K_u per other hash, K2."""
        return self.params["tables"] + 1

    def _rom_entries(self) -> list[tuple[int, int, int, int]]:
        """``(hash, bit offset in the key, byte width, byte value)`` of every table entry
        a key can read, as many times over as fill whole intervals of groups."""
        value_bits, pc_bits = self.params["value_bits"], self.params["pc_bits"]
        fields = [(0, value_bits), (value_bits, pc_bits)]
        entries = [(i, base + lo, min(8, bits - lo), v)
                   for i in range(self.params["tables"]) for base, bits in fields
                   for lo in range(0, bits, 8) for v in range(1 << min(8, bits - lo))]
        per = self.rom_per_interval
        return [entries[j % len(entries)] for j in range(-(-len(entries) // per) * per)]

    def rom(self) -> np.ndarray:
        """The keys of the table-entry groups (see :attr:`rom_groups`)."""
        if not self.rom_groups:
            return np.zeros(0, np.uint64)
        from ..golden.multihash import MultiHashConfig

        config = MultiHashConfig(**self.params)
        hashes, n, bits = config.hashes(), config.tables, config.key_bits
        rng = np.random.default_rng(23)
        everything = np.uint64((1 << bits) - 1)
        # the K_u come from a pool of random keys sorted by their counter in each hash
        pool = rng.integers(0, 1 << bits, size=1 << 18, dtype=np.uint64)
        index = np.stack([h.many(pool) for h in hashes])
        order = [np.argsort(index[u], kind="stable") for u in range(n)]
        starts = [np.searchsorted(index[u][order[u]], np.arange(config.table_size + 1))
                  for u in range(n)]  # fmt: skip
        taken = np.zeros(len(pool), bool)
        seen: set = set()

        def collider(u, target, i, avoid):
            """A fresh pool key with counter ``target`` in hash ``u``, not ``avoid`` in ``i``."""
            for at in order[u][starts[u][target] : starts[u][target + 1]]:
                if not taken[at] and index[i][at] != avoid and int(pool[at]) not in seen:
                    taken[at] = True
                    return int(pool[at])
            raise ValueError(f"the key pool has no more keys at counter {target} of hash {u}")

        keys, used = [], [set() for _ in range(n)]  # counters read in this interval
        for j, (i, lo, width, v) in enumerate(self._rom_entries()):
            if j % self.rom_per_interval == 0:
                used = [set() for _ in range(n)]
            mask = np.uint64(((1 << width) - 1) << lo)
            other = v ^ (((1 << min(2, width)) - 1) << (width - min(2, width)))
            k1 = k2 = None
            for _ in range(100):
                if k2 is not None:
                    break
                k1 = int(rng.integers(0, 1 << bits, dtype=np.uint64) & (everything ^ mask)
                         | np.uint64(v << lo))  # fmt: skip
                c = rng.integers(0, 1 << bits, size=2048, dtype=np.uint64) & (everything ^ mask) \
                    | np.uint64(other << lo)
                for k in c[hashes[i].many(c) == hashes[i](k1)].tolist():
                    if k not in seen and k1 not in seen and hashes[i](k) not in used[i]:
                        k2 = k
                        break
            if k2 is None:
                raise ValueError(f"table-entry groups: no K2 found for hash {i}, bit {lo}, "
                                 f"byte {v}: {self.rom_per_interval} groups per interval are "
                                 f"too many for {config.table_size} counters per table")
            target = [h(k2) for h in hashes]
            group = [k1, *(collider(u, target[u], i, target[i]) for u in range(n) if u != i), k2]
            for k in group:
                seen.add(k)
                for t in range(n):
                    used[t].add(hashes[t](k))
            keys += group
        return np.array(keys, dtype=np.uint64)

    def _set_rounds(self) -> int:
        """Set intervals: enough for every ``x`` of the largest set, ``ways`` a time."""
        from ..golden.multihash import MultiHashConfig

        config = MultiHashConfig(**self.params)
        bits = config.set_source_bits
        sizes = np.bincount((np.arange(1 << bits) * config.sets) >> bits)
        return -(-int(sizes.max()) // max(1, config.ways))

    def set_keys(self) -> np.ndarray:
        """The keys of the set intervals (see :attr:`set_groups`)."""
        from ..golden.multihash import MultiHashConfig

        config = MultiHashConfig(**self.params)
        if not (self.set_groups and config.ways):
            return np.zeros(0, np.uint64)
        bits = config.set_source_bits
        rng = np.random.default_rng(29)
        pool = _shuffled_pool(rng, config.key_bits)
        x = config.set_source([h.many(pool).astype(np.uint64) for h in config.hashes()])
        by_x = {}  # x -> pool keys with it, in pool order
        for k, v in zip(pool.tolist(), x.tolist(), strict=True):
            by_x.setdefault(v, []).append(k)
        per_set = [[] for _ in range(config.sets)]
        for v in rng.permutation(1 << bits).tolist():
            per_set[(v * config.sets) >> bits].append(v)
        keys = []
        for r in range(self._set_rounds()):
            chosen = [xs[(r * config.ways + w) % len(xs)] for xs in per_set
                      for w in range(config.ways)]  # fmt: skip
            for v in rng.permutation(chosen).tolist():
                if not by_x.get(v):
                    raise ValueError(f"set intervals: the key pool has no key with x = {v}")
                keys.append(by_x[v].pop())
        return np.array(keys, dtype=np.uint64)

    def _boundary_sets(self) -> list[tuple[int, int]]:
        """``(s, s')`` of every boundary interval (see :attr:`boundary_pairs`)."""
        sets = self.params["accumulator"] // self.params["ways"]
        return [(s, last) for s in range(sets) for last in range(sets)]

    def boundary(self) -> np.ndarray:
        """The keys of the boundary intervals (see :attr:`boundary_pairs`)."""
        from ..golden.multihash import MultiHashConfig

        config = MultiHashConfig(**self.params)
        if not (self.boundary_pairs and config.ways):
            return np.zeros(0, np.uint64)
        if self.boundary_length < 9:
            raise ValueError(f"boundary_length {self.boundary_length} < 9: too short for "
                             "two keys twice, fresh keys and the last key")  # fmt: skip
        rng = np.random.default_rng(37)
        pool = _shuffled_pool(rng, config.key_bits)
        sets = config.set_index([h.many(pool).astype(np.uint64) for h in config.hashes()])
        by_set = [pool[sets == s].tolist()[::-1] for s in range(config.sets)]
        keys = []
        for s, last in self._boundary_sets():
            other = s + 1 + (s + len(keys)) % (config.sets - 1 - s) if s + 1 < config.sets else s
            a, b = by_set[s].pop(), by_set[other].pop()
            fresh = [by_set[(s + 1 + j) % config.sets].pop()
                     for j in range(self.boundary_length - 5)]  # fmt: skip
            keys += [a, b, a, b, *fresh, by_set[last].pop()]
        return np.array(keys, dtype=np.uint64)

    @cached_property
    def _threshold_intervals(self) -> list[tuple[np.ndarray, int]]:
        """``(keys, threshold)`` of the threshold intervals (see :attr:`threshold_bits`),
        a flush, a setup and a test interval per ``p``; ValueError if a test interval does not
        fit the counters or a key cannot be found."""
        from ..golden.multihash import MultiHashConfig

        config = MultiHashConfig(**self.params)
        hashes, n = config.hashes(), config.tables
        limit = (1 << config.counter_bits) - 1
        if self.threshold_bits and self.setup_length < 2 * max(1, config.ways) + 5:
            raise ValueError(f"setup_length {self.setup_length} is too short for "
                             f"{max(1, config.ways)} keys hit twice")  # fmt: skip
        rng = np.random.default_rng(31)
        pool = _shuffled_pool(rng, config.key_bits)
        index = np.stack([h.many(pool) for h in hashes])
        sets = (config.set_index([i.astype(np.uint64) for i in index]) if config.ways
                else np.zeros(len(pool), np.int64))  # fmt: skip
        free = np.ones(len(pool), bool)

        def take(mask=True, count=1):
            at = np.flatnonzero(free & mask)[:count]
            if len(at) < count:
                raise ValueError("threshold intervals: the key pool has too few keys")
            free[at] = False
            return [int(k) for k in pool[at]]

        window, out = self.threshold_window, []
        for p in self.threshold_bits:
            t = (1 << p) + 2
            home = int(sets[np.flatnonzero(free)[0]])
            f = take(sets == home, max(1, config.ways))
            away = sets != home if config.ways else True  # keys outside the F_w's set
            # the flush: FLUSH_LENGTH fresh keys at threshold FLUSH_LENGTH, nothing promoted,
            # so its end empties every entry and the setup fills the F_w's set in order
            out.append((np.array(take(count=FLUSH_LENGTH), dtype=np.uint64), FLUSH_LENGTH))
            setup = f * 2
            out.append((np.array(setup + take(count=self.setup_length - len(setup)),
                                 dtype=np.uint64), 2))  # fmt: skip
            fillers = take(away, 16)
            keys: list = []

            def rounds(key, hits, between=None, _keys=keys, _fillers=fillers):
                _distance_rounds(_keys, key, hits, _fillers, between)

            if p <= self.collider_bits and n > 1:
                for h in range(n):
                    k = take(away)[0]
                    at = np.flatnonzero(pool == np.uint64(k))[0]
                    js = []
                    for u in range(n):
                        if u != h:
                            alone = index[u] == index[u][at]
                            for v in range(n):
                                if v != u:
                                    alone &= index[v] != index[v][at]
                            js += take(alone & away)
                    for j in js:
                        keys += [j] * (t - 1)
                    rounds(k, window)
                    keys += [k] * max(0, t + 16 - 2 * window)
                    rounds(k, window, between=js)
            for key in f:
                rounds(key, window)
            # the climber: its first climb_rounds hits at the five distances, the rest
            # at distance 2 with u between (u's counters read and + 1'd at distance 2),
            # then u with v between until u is promoted at T
            climber, (u, v) = f[p % len(f)], take(away, 2)
            rounds(climber, min(t + 8, self.climb_rounds))
            paired = max(0, t + 8 - self.climb_rounds)
            keys += [climber, u] * paired
            keys += [u, v] * max(2, t + 2 - paired)
            others = [key for key in f if key != climber]
            if p in self.all_ways_bits and others:
                # each to T - 1 hits, the interval's end: its last compare (at T - 2) says
                # no, so it is not read out; requalifying early (a compare wrong at bit p)
                # would read it out
                keys += (others if len(others) > 1 else [*others, v]) * max(0, t - 1 - window)
            if len(keys) > limit:
                raise ValueError(f"the threshold interval of bit {p} needs {len(keys)} tuples, "
                                 f"more than {config.counter_bits}-bit counters allow")  # fmt: skip
            out.append((np.array(keys, dtype=np.uint64), t))
        return out

    def thresholds(self) -> np.ndarray:
        """The keys of the threshold intervals (see :attr:`threshold_bits`)."""
        parts = [keys for keys, _ in self._threshold_intervals]
        return np.concatenate(parts) if parts else np.zeros(0, np.uint64)

    def stop_short(self) -> np.ndarray:
        """The keys of the stop-short interval (see :attr:`stop_short_threshold`), each with
        counters no other key of the interval has (but the one a ``J_hu`` shares with its
        ``K_h``); ValueError if they do not fit :attr:`stop_short_length` or if that many
        such keys do not exist (at most about the counters per table)."""
        from ..golden.multihash import MultiHashConfig

        t = self.stop_short_threshold
        if not t:
            return np.zeros(0, np.uint64)
        config = MultiHashConfig(**self.params)
        hashes, n = config.hashes(), config.tables
        rng = np.random.default_rng(41)
        pool = _shuffled_pool(rng, config.key_bits)
        index = np.stack([h.many(pool) for h in hashes])
        free = np.ones(len(pool), bool)
        used = [set() for _ in range(n)]  # counters of the interval's keys so far

        def take(mask=True):
            """A fresh pool key in ``mask`` whose counters no earlier key of the interval has."""
            for at in np.flatnonzero(free & mask):
                if all(int(index[i][at]) not in used[i] for i in range(n)):
                    free[at] = False
                    for i in range(n):
                        used[i].add(int(index[i][at]))
                    return at
            raise ValueError(f"stop-short interval: no key left whose counters no other key of "
                             f"the interval has (stop_short_length {self.stop_short_length}, "
                             f"{config.table_size} counters per table)")  # fmt: skip

        keys: list = []
        for h in range(n):
            k = take()
            for u in range(n):
                if u == h:
                    continue
                alone = index[u] == index[u][k]
                for v in range(n):
                    if v != u:
                        alone &= index[v] != index[v][k]
                for at in np.flatnonzero(free & alone):
                    if all(int(index[v][at]) not in used[v] for v in range(n) if v != u):
                        free[at] = False
                        for v in range(n):
                            used[v].add(int(index[v][at]))
                        keys += [int(pool[at])] * (t - 1)
                        break
                else:
                    raise ValueError("stop-short interval: no collider in the key pool")
            keys.append(int(pool[k]))
            for r in range(t - 2):  # then at distances 1, 2, 3, ... (r fresh keys before it)
                keys += [int(pool[take()]) for _ in range(r)] + [int(pool[k])]
        if len(keys) > self.stop_short_length:
            raise ValueError(f"the stop-short interval needs {len(keys)} tuples, more than "
                             f"stop_short_length {self.stop_short_length}")  # fmt: skip
        keys += [int(pool[take()]) for _ in range(self.stop_short_length - len(keys))]
        return np.array(keys, dtype=np.uint64)

    @cached_property
    def _long_count(self) -> tuple[np.ndarray, int, list]:
        """``(keys, X, [Y_0, Y_1])`` of the long-count interval (see
        :attr:`long_count_bit`)."""
        from ..golden.multihash import MultiHashConfig

        p = self.long_count_bit
        if not p:
            return np.zeros(0, np.uint64), 0, []
        config = MultiHashConfig(**self.params)
        n = config.tables
        half = 1 << (p - 1)
        if n < 2 or p + 1 > config.counter_bits or 4 * half + 12 >= 1 << config.counter_bits:
            raise ValueError(f"the long-count interval of bit {p} needs 2 tables or more and "
                             f"counters of {p + 2} bits or more ({config.tables} tables, "
                             f"{config.counter_bits}-bit counters)")  # fmt: skip
        rng = np.random.default_rng(43)
        pool = _shuffled_pool(rng, config.key_bits)
        index = np.stack([h.many(pool) for h in config.hashes()])
        x = 0

        def sharing(table, start=1):
            """The pool keys after ``start`` that share table ``table``'s counter with X only."""
            alone = index[table] == index[table][x]
            for v in range(n):
                if v != table:
                    alone &= index[v] != index[v][x]
            alone[:start] = False
            return np.flatnonzero(alone)

        j, ys = sharing(0), sharing(1)
        if len(j) < 1 or len(ys) < 2:
            raise ValueError("long-count interval: no key in the pool shares one counter "
                             "with X only")  # fmt: skip
        jk, xk, (y0, y1) = int(pool[j[0]]), int(pool[x]), (int(k) for k in pool[ys[:2]])
        keys = [jk] * (2 * half) + [xk] * (2 * half - 2) + [y0, xk, y1, xk] + [xk] * 8
        return np.array(keys, dtype=np.uint64), xk, [y0, y1]

    def long_count(self) -> np.ndarray:
        """The keys of the long-count interval (see :attr:`long_count_bit`)."""
        return self._long_count[0]

    def hold_keys(self) -> np.ndarray:
        """The keys of the hold intervals (see :attr:`hold_thresholds`); ValueError if
        :attr:`hold_setup` is too short for :attr:`hold_records` keys twice."""
        if not self.hold_thresholds:
            return np.zeros(0, np.uint64)
        if self.hold_setup < 2 * self.hold_records + 1:
            raise ValueError(f"hold_setup {self.hold_setup} is too short for "
                             f"{self.hold_records} keys twice")  # fmt: skip
        config, key, set_of = self._key_source(47)
        seen: set = set()

        def fresh(avoid=()):
            while True:
                k = key()
                if k not in seen and set_of(k) not in avoid:
                    seen.add(k)
                    return k

        keys = []
        for t in self.hold_thresholds:
            twice: list = []  # in different sets while there are sets left
            for _ in range(self.hold_records):
                sets = {set_of(k) for k in twice} if len(twice) < config.sets else ()
                twice.append(fresh(sets))
            keys += twice + twice
            keys += [fresh() for _ in range(self.hold_setup - 2 * self.hold_records)]
            keys += [fresh() for _ in range(t + 8)]
        return np.array(keys, dtype=np.uint64)

    def holds(self) -> tuple:
        """``(tuple, cycles)``: ``records.ready`` held low for ``cycles`` cycles after the
        cycle that accepts that tuple, the last of each hold interval's setup (see
        :attr:`hold_thresholds`)."""
        parts = self._directed_parts()
        tests = parts[len(parts) - 2 * len(self.hold_thresholds) :][1::2]
        return tuple((start - 1, t + self.hold_margin) for start, _, t in tests)

    def keys(self) -> np.ndarray:
        """The first :attr:`tuples` load tuples of :attr:`trace`, relabelled
        (:attr:`relabel`), then the directed interval (:meth:`directed`), the
        forwarding interval (:meth:`forwarding`), the dense intervals
        (:meth:`dense`), the table-entry groups (:meth:`rom`), the set intervals
        (:meth:`set_keys`), the boundary intervals (:meth:`boundary`), the threshold
        intervals (:meth:`thresholds`), the stop-short interval (:meth:`stop_short`), the
        long-count interval (:meth:`long_count`) and the hold intervals
        (:meth:`hold_keys`)."""
        keys = self._load(self.trace, self.tuples)
        if self.relabel:
            block = (np.arange(len(keys), dtype=np.uint64) + np.uint64(self.relabel // 2)) \
                // np.uint64(self.relabel)
            byte = block * np.uint64(97) % np.uint64(256)
            bits = self.params["pc_bits"] + self.params["value_bits"]
            mask = np.uint64((1 << bits) - 1)
            keys = keys ^ (byte * np.uint64(0x0101010101010101) & mask)
        return np.concatenate([keys, self.directed(), self.forwarding(), self.dense(),
                               self.rom(), self.set_keys(), self.boundary(),
                               self.thresholds(), self.stop_short(),
                               self.long_count(), self.hold_keys()])  # fmt: skip

    def expected(self, keys, writes=None) -> np.ndarray:
        """Rows ``(key, count, end)`` the golden model reads out (markers: ``(0, 0, 1)``),
        with the configuration writes ``writes`` (default: :attr:`writes`).

        Raises ValueError if a write falls in the first 4 tuples of an interval (it
        would race the previous interval's end in the pipeline), or if the directed,
        forwarding or dense intervals do not start where an interval starts.
        """
        from ..golden.multihash import MultiHashProfiler

        model = MultiHashProfiler(**self.params)
        starts = set()  # the directed intervals must start where an interval starts
        if writes is None:
            starts = {start for start, _, _ in self._directed_parts()}
        writes = self.schedule() if writes is None else writes
        writes = {n: (length, threshold) for n, length, threshold in writes}
        rows = []
        for i, key in enumerate(keys.tolist()):
            if i in starts and model.position:
                raise ValueError(f"the directed intervals start at tuple {i}, position "
                                 f"{model.position} of an interval: the trace's tuples "
                                 f"({self.tuples}) must end where an interval ends")  # fmt: skip
            if i in writes:
                if model.position < 4:
                    raise ValueError(f"configuration write at tuple {i}: position "
                                     f"{model.position} of its interval, need >= 4")  # fmt: skip
                model.configure(*writes[i])
            profile = model.step(key)
            if profile is not None:
                rows += [(k, c, 0) for k, c in profile] + [(0, 0, 1)]
        return np.array(rows, dtype=np.uint64).reshape(-1, 3)

    def expected_stalls(self, keys, want: np.ndarray) -> np.ndarray:
        """The runs of input stalls of the back-pressured run (rows ``(first cycle, tuple
        waiting, cycles)``, as :attr:`hwprof.sim.native.StreamRun.stall_runs`) by the stall
        rule's cycle model (:func:`hwprof.golden.multihash_stall.stall_runs`), from the
        interval lengths and thresholds (the reset values and :meth:`schedule`), the
        record count of each interval (``want``: :meth:`expected`'s rows), the consumer's
        ready (:attr:`ready`, :attr:`seed`: ``stream.cpp``'s pattern) and :meth:`holds`."""
        from ..golden.multihash_stall import stall_runs
        from ..sim.native import ready_pattern

        ends = np.flatnonzero(want[:, 2] == 1)
        records = np.diff(np.concatenate([[-1], ends])) - 1
        cycles = len(keys) + len(keys) // 8 + 100_000
        while True:
            try:
                return stall_runs(len(keys), self.params["interval_length"],
                                  self.params["threshold"], records,
                                  ready_pattern(cycles, self.ready, self.seed),
                                  writes=self.schedule(), holds=self.holds())["runs"]  # fmt: skip
            except ValueError as exc:
                if "out_ready has" not in str(exc):
                    raise
                cycles *= 2

    @staticmethod
    def compare_stalls(run, want: np.ndarray) -> tuple[int, str]:
        """``(mismatches, what)`` of a run's input stalls (``run.stall_runs``) against
        :meth:`expected_stalls`: runs that differ in their first cycle, tuple or length, or
        that only one side has."""
        got = np.asarray(run.stall_runs, dtype=np.uint64).reshape(-1, 3)
        want = np.asarray(want, dtype=np.uint64).reshape(-1, 3)
        common = min(len(got), len(want))
        differ = np.flatnonzero((got[:common] != want[:common]).any(axis=1))
        mismatches = int(differ.size) + abs(len(got) - len(want))
        if mismatches == 0:
            return 0, (f"{len(want)} runs of stalls match the stall rule "
                       f"({int(want[:, 2].sum())} cycles)")  # fmt: skip
        first = int(differ[0]) if differ.size else common

        def side(rows):
            if first >= len(rows):
                return "none"
            cycle, tuple_, length = (int(v) for v in rows[first])
            return f"cycle {cycle}, tuple {tuple_}, {length} cycles"

        return mismatches, (f"{mismatches} runs of stalls differ from the stall rule "
                            f"(first: run {first}: {side(got)}; the rule: {side(want)}; "
                            f"{len(got)} runs, the rule {len(want)})")  # fmt: skip

    def free_expected(self, keys) -> np.ndarray:
        """:meth:`expected` of the always-ready run (no writes); ValueError unless the
        parameters and every interval's candidates allow it no stall."""
        p = self.params
        want = self.expected(keys, writes=())
        ends = np.flatnonzero(want[:, 2] == 1)
        candidates = int(np.diff(np.concatenate([[-1], ends])).max() - 1) if len(ends) else 0
        if p["threshold"] < (candidates + 8 if candidates else 7):
            raise ValueError(f"the always-ready run may stall: threshold {p['threshold']}, "
                             f"{candidates} candidates, interval {p['interval_length']}, "
                             f"accumulator {p['accumulator']}")  # fmt: skip
        return want

    def build(self, component, verilog: str, build_root: Path = DEFAULT_BUILD_ROOT,
              extra_args: tuple[str, ...] = (), name: str | None = None) -> StreamHarness:
        """The harness on ``verilog`` (module ``multihash``; ``component``: its ports)."""
        drive = config_drive(self.schedule(), self.params["counter_bits"])
        decls, hold = hold_drive(self.holds())
        return StreamHarness(component, verilog, "multihash", build_root, self.opt,
                             drive=drive, extra_args=extra_args, name=name,
                             decls=f"{CONFIG_DECLS}\n  {decls}", hold=hold)  # fmt: skip

    @staticmethod
    def compare(run, want: np.ndarray) -> tuple[int, str]:
        """``(mismatches, what)`` of a run's records against :meth:`expected`'s rows.

        End markers are compared by their ``end`` flag only (the golden model defines
        no payload for them).
        """
        end = run.fields["end"].astype(np.uint64)
        got = np.stack([run.fields["key"], run.fields["count"], end], axis=1).astype(np.uint64)
        got[end == 1, :2] = 0
        common = min(len(got), len(want))
        differ = np.flatnonzero((got[:common] != want[:common]).any(axis=1))
        mismatches = int(differ.size) + abs(len(got) - len(want))
        if mismatches == 0:
            return 0, f"{len(want)} records and markers match"
        first = int(differ[0]) if differ.size else common
        interval = int(want[:first, 2].sum())
        return mismatches, (f"{mismatches} records differ (first: record {first}, interval "
                            f"{interval}; {len(got)} read out, golden model {len(want)})")


def _shuffled_pool(rng, key_bits: int) -> np.ndarray:
    """2**18 random keys of ``key_bits`` bits from ``rng``, duplicates dropped, in a random
    order (the key pool of the set, boundary and threshold intervals)."""
    pool = np.unique(rng.integers(0, 1 << key_bits, size=1 << 18, dtype=np.uint64))
    return pool[rng.permutation(len(pool))]


#: tuples (and threshold) of the threshold intervals' flush interval
FLUSH_LENGTH = 8


def _distance_rounds(keys: list, key: int, hits: int, fillers: list, between=None) -> None:
    """Append ``hits`` tuples of ``key`` to ``keys``, each followed by 1, 2, 0, 3, 4 other
    tuples in turn (so ``key`` comes back at distances 2, 3, 1, 4, 5): the next of
    ``fillers`` (in turn, by position), or, for the one-tuple gaps, the next of
    ``between`` if given."""
    for r in range(hits):
        gap = (1, 2, 0, 3, 4)[r % 5]
        keys.append(key)
        if between and gap == 1:
            keys.append(between[r % len(between)])
        else:
            keys.extend(fillers[(len(keys) + j) % len(fillers)] for j in range(gap))
