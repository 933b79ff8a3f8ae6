"""Stratified-sampling compressors on Verilator against the golden models, every cycle.

One module for every top of hwprof/tops/samplers.py (the golden model is chosen
by the toplevel's name) and for the test-only ``sampler_bank`` wrapper that holds
several samplers side by side (one Verilator build for all of them). Streams, in
phases: random keys, one key (every tuple aliases to one entry; saturates the
counters), a ping-pong pair of keys that share a set (drives an entry through
Evict again and again), keys aliasing to one set, a hot/cold mix; each phase
with a different random output backpressure.
"""

from __future__ import annotations

import copy

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly
from harness import check_equal, golden_params, param, rng, start_in_reset

from hwprof.golden import samplers as gs
from hwprof.golden import tagged as gt

SIMPLE = {
    "sampler_random": gs.RandomSampler,
    "sampler_countdown": gs.CountdownSampler,
    "sampler_periodic": gs.PeriodicSampler,
    "sampler_counter": gs.Counter,
    "sampler_cr": gs.CountingRandomSampler,
    "stratified": gs.Stratified,
    "tagged_compressor": gt.TaggedCompressor,
    "assoc_table": gt.AssocTable,
}

#: The bank (tests/sampler_bank.py): channel prefix -> (golden class, parameters).
BANK = param("bank", {})


def golden_for(name, params):
    if name == "stratified_pipeline":
        p = params
        return gs.Pipeline([
            gs.Stratified(p["rate"], p["entries"], p["key_bits"], p["pc_bits"], p["hash_seed"],
                          skid=p["skid"]),
            gt.AssocTable(p["assoc_entries"], p["key_bits"], p["rate"].bit_length(),
                          p["count_bits"], skid=p["skid"]),
            gt.MessageBuffer(p["depth"]),
        ])  # fmt: skip
    return SIMPLE[name](**params)


def colliding_keys(model, r, count=4):
    """Keys that share one table entry/set of ``model`` (if it hashes), else random."""
    inner = first_stage(model)
    if isinstance(inner, gt.TaggedCompressor):
        return gt.aliasing_keys(inner, min(count, 1 << inner.config.tag_bits), r.getrandbits(20))
    if hasattr(inner, "hash"):
        return gs.same_index_keys(inner.hash, count, r.getrandbits(32))
    return [r.getrandbits(32) for _ in range(count)]


class Channel:
    """One stream-in/stream-out port pair of the DUT and its golden model."""

    def __init__(self, dut, prefix, model, r, structured, key_bits, in_count_bits):
        self.dut, self.model, self.r = dut, model, r
        self.port = lambda name: getattr(dut, f"{prefix}{name}")
        self.structured = structured
        self.key_bits, self.in_count_bits = key_bits, in_count_bits
        self.aliases = colliding_keys(model, r)
        self.hot = [r.getrandbits(key_bits) for _ in range(6)]
        self.pending = None
        self.holding = False
        self.tuples = 0
        self.name = prefix or "top"

    def next_key(self, phase, i):
        r = self.r
        if phase == "random":
            return r.getrandbits(self.key_bits)
        if phase == "one-key":
            return self.aliases[0]
        if phase == "ping-pong":
            return self.aliases[i % 2]
        if phase == "alias":
            return r.choice(self.aliases)
        return r.choice(self.hot) if r.random() < 0.8 else r.getrandbits(self.key_bits)

    def drive(self, phase, i, ready_p):
        r = self.r
        if self.pending is None:
            count = r.randrange(1, 1 << self.in_count_bits) if self.structured else 1
            self.pending = (self.next_key(phase, i), count)
        self.valid = int(self.holding or r.random() < 0.9)
        self.ready = int(r.random() < ready_p)
        key, count = self.pending
        payload = key | (count << self.key_bits) if self.structured else key
        self.port("tuples__valid").value = self.valid
        self.port("tuples__payload").value = payload
        self.port("messages__ready").value = self.ready

    def check(self, cycle):
        key, count = self.pending
        want = self.model.step(in_valid=self.valid, in_key=key, in_count=count,
                               out_ready=self.ready)  # fmt: skip
        ctx = f"{self.name}, tuple {self.tuples}"
        check_equal(cycle, f"{self.name} tuples.ready", int(self.port("tuples__ready").value),
                    want["in_ready"], ctx)  # fmt: skip
        check_equal(cycle, f"{self.name} messages.valid",
                    int(self.port("messages__valid").value), want["out_valid"], ctx)  # fmt: skip
        if want["out_valid"]:
            payload = int(self.port("messages__payload").value)
            mask = (1 << self.key_bits) - 1
            check_equal(cycle, f"{self.name} message key", payload & mask, want["out_key"], ctx)
            check_equal(cycle, f"{self.name} message count", payload >> self.key_bits,
                        want["out_count"], ctx)  # fmt: skip
        if "irq" in want:
            check_equal(cycle, "irq", int(self.dut.irq.value), want["irq"], ctx)
        accepted = self.valid and want["in_ready"]
        self.holding = bool(self.valid and not accepted)
        if accepted:
            self.pending = None
            self.tuples += 1


#: Width of the samplers' LFSR (hwprof.rtl.samplers: 32 bits, 16 steps an advance).
LFSR_BITS = gs.LFSR_WIDTH
#: Golden models whose LFSR is the sampler's own ``lfsr`` submodule.
LFSR_SAMPLERS = (gs.RandomSampler, gs.CountdownSampler, gs.CountingRandomSampler)

PHASES = [("random", 0.7), ("one-key", 1.0), ("ping-pong", 0.5), ("alias", 0.9),
          ("mix", 0.2), ("one-key", 0.05), ("alias", 1.0)]  # fmt: skip


@cocotb.test()
async def compressor_matches_golden(dut):
    cycles = param("cycles", 20_000)
    r = rng()
    name = dut._name
    channels = []
    if name == "sampler_bank":
        for prefix, (kind, params) in BANK.items():
            model = golden_for(kind, {k: v for k, v in params.items()})
            channels.append(Channel(dut, f"{prefix}_", model, r, False, params.get("key_bits", 64),
                                    0))  # fmt: skip
    else:
        params = golden_params()
        model = golden_for(name, params)
        structured = name == "assoc_table"
        channels.append(Channel(dut, "", model, r, structured, params["key_bits"],
                                params.get("in_count_bits", 0)))  # fmt: skip
    inputs = {}
    for ch in channels:
        prefix = "" if ch.name == "top" else f"{ch.name}"
        inputs.update({f"{prefix}tuples__valid": 0, f"{prefix}messages__ready": 0})
    await start_in_reset(dut, inputs)
    if name == "tagged_compressor":  # first: it needs sets that are still empty
        await high_counts(dut, channels[0], -(1 << 20))
    per_phase = max(1, cycles // len(PHASES))
    for cycle in range(cycles):
        phase, ready_p = PHASES[min(cycle // per_phase, len(PHASES) - 1)]
        for ch in channels:
            ch.drive(phase, cycle, ready_p)
        await ReadOnly()
        for ch in channels:
            ch.check(cycle)
        await FallingEdge(dut.clk)
    if name != "sampler_bank" and isinstance(channels[0].model, gs.Counter):
        await saturate(dut, channels[0], cycle + 1)
    if name != "sampler_bank" and isinstance(channels[0].model, gs.CountdownSampler):
        cycle = await folded_reload(dut, channels[0], cycle + 1)
    for ch in channels:  # last: the other channels are idled, never checked again
        if isinstance(ch.model, LFSR_SAMPLERS):
            for other in channels:
                if other is not ch:
                    other.port("tuples__valid").value = 0
                    other.port("messages__ready").value = 0
            cycle = await one_hot_lfsr_states(dut, ch, cycle + 1)
    if name == "assoc_table":
        await every_entry(dut, channels[0], cycle + 1)
    if name == "tagged_compressor":
        await alias_groups(dut, channels[0], cycle + 1)
    if name in ("stratified", "stratified_pipeline") and \
            first_stage(channels[0].model).config.sampler == "periodic":
        # the pipeline: enough messages that A_k fills and evicts (its output shows them)
        groups = 4 + (2 * golden_params()["assoc_entries"] if name == "stratified_pipeline" else 0)
        cycle = await counter_groups(dut, channels[0], cycle + 1, groups)
        if name == "stratified_pipeline":
            cycle = await assoc_hits(dut, channels[0], cycle)
        await back_to_back(dut, channels[0], cycle)
    dut._log.info("tuples accepted: %s", {ch.name: ch.tuples for ch in channels})


async def saturate(dut, ch, cycle, periods=2, window=48):
    """Drive ``C`` through ``periods`` saturations; the phases above never reach one.

    The default 16-bit counter reports once per 65,535 tuples, more than the
    phases feed, so its counter would go unobserved. Each period: the checked
    loop until no tuple or message waits; then every tuple but the last
    ``window`` before saturation with ``tuples.valid`` = 1 and ``messages.ready``
    = 0, not checked cycle by cycle (fast), where a message sent too early is
    held and seen at the end; then ``3 * window`` checked cycles with random
    backpressure across the saturation and its message (which is held its first
    two cycles, so the output register's hold path is seen), every tuple with one
    key in even periods and its complement in odd ones (so each bit of the
    message key is seen as 0 and as 1).
    """
    model, r = ch.model, ch.r
    last = (1 << model.count_bits) - 1
    first = r.getrandbits(ch.key_bits)
    keys = [first, first ^ ((1 << ch.key_bits) - 1)]
    for period in range(periods):
        cycle = await settle(dut, ch, cycle)
        cycle = await fast_forward(dut, ch, cycle, last - 1 - model.counter - window, ready=0)
        held = 0
        for _ in range(3 * window):
            if ch.pending is None:  # every key bit seen as 0 and as 1
                ch.pending = (keys[period % 2], 1)
            ch.drive("random", cycle, 0.5)
            if model.out_valid and held < 2:  # the message waits two cycles first
                ch.ready = 0
                ch.port("messages__ready").value = 0
                held += 1
            await ReadOnly()
            ch.check(cycle)
            await FallingEdge(dut.clk)
            cycle += 1


async def folded_reload(dut, ch, cycle, window=48):
    """The countdown sampler's rare reload: a gap of ``2r`` folded to ``r``.

    The fold happens when the 16 random bits are at least ``2**16 - 2**16 / 2r``
    (1 reload in 2r, so about once per ``2 r**2`` tuples), which the phases above
    may not reach. The reload at which it happens next is found from the golden
    model's own countdown and LFSR (a copy, stepped as the sampler steps them);
    the tuples up to ``window`` before it go in with ``tuples.valid`` =
    ``messages.ready`` = 1 and are not checked cycle by cycle (fast; messages sent
    then are not compared), then ``window + 2r + 64`` checked cycles cover the
    folded reload and the message it schedules ``r`` tuples later.
    """
    model = ch.model
    cycle = await settle(dut, ch, cycle)
    rate = model.config.rate
    lfsr, countdown, ahead = copy.deepcopy(model.lfsr), model.countdown, 0
    while True:  # tuples until the reload that folds
        ahead += 1
        if countdown == 1:
            gap = 1 + ((gs.random_bits(lfsr) * 2 * rate) >> gs.RAND_BITS)
            if gap == 2 * rate:
                break
            countdown = gs.countdown_reload(gs.random_bits(lfsr), rate)
            lfsr.step(enable=True)
        else:
            countdown -= 1
    dut._log.info("folded reload %d tuples ahead", ahead)
    cycle = await fast_forward(dut, ch, cycle, ahead - window, ready=1)
    for _ in range(window + 2 * rate + 64):
        cycle = await checked_cycle(dut, ch, cycle, 1.0)
    return cycle


def lfsr_register(dut, ch):
    """The LFSR register of ``ch``'s sampler (``--public-flat-rw``: VPI may write it).

    ``lfsr.register`` in the generated Verilog (``<channel>.lfsr.register`` in the
    bank); in ``hwprof mutate``'s build the netlist is flattened into the
    wrapper's instance ``dut``, where it is ``lfsr.register``, or
    ``lfsr.register$dff`` when a mutation reroutes the flop's output
    (:func:`hwprof.verify.mutate.flop_renames`; writing the rerouted wire would not stick).
    """
    scope = dut if ch.name == "top" else getattr(dut, ch.name.rstrip("_"))
    try:
        return scope.lfsr.register
    except AttributeError:
        pass
    inner = dut.dut
    for name in ("\\lfsr.register$dff ", "\\lfsr.register "):  # a mutated output: the flop's
        try:                                                  # own name (flop_renames)
            return inner[name]
        except KeyError:
            pass
    raise AssertionError(f"no LFSR register in {dut._name} or {dut._name}.dut")


async def one_hot_lfsr_states(dut, ch, cycle, advances=2):
    """Each of the 32 one-hot LFSR states, deposited into the DUT and the model alike.

    The lock-up escape's zero detector differs from ``register == 0`` (an input
    inverted or dropped) only on a state next to zero: one bit set. From reset
    the LFSR reaches such a state once in about 2^32 advances, so the phases
    above never do; a backdoor write puts it there. For each bit: the checked
    loop until no tuple or message waits, then the register and the model's
    LFSR set to ``1 << bit``, then checked cycles (output always ready) until the
    model's LFSR has advanced ``advances`` times (the countdown sampler advances
    only at a reload: the tuples up to two before it go in unchecked), comparing
    the DUT's register with the model's state after every checked cycle besides
    the outputs.
    """
    model, register = ch.model, lfsr_register(dut, ch)
    for bit in range(LFSR_BITS):
        cycle = await settle(dut, ch, cycle)
        register.value = 1 << bit
        model.lfsr.state = 1 << bit
        for _ in range(advances):
            if isinstance(model, gs.CountdownSampler) and model.countdown > 2:
                cycle = await fast_forward(dut, ch, cycle, model.countdown - 2, ready=1)
            start = model.lfsr.state
            while model.lfsr.state == start:
                cycle = await checked_cycle(dut, ch, cycle, 1.0)
                check_equal(cycle, f"{ch.name} LFSR register", int(register.value),
                            model.lfsr.state, f"one-hot state 1 << {bit}")  # fmt: skip
    dut._log.info("%s: one-hot LFSR states, all %d checked", ch.name, LFSR_BITS)
    return cycle


async def checked_cycle(dut, ch, cycle, ready_p):
    """One cycle driven at random (``messages.ready`` on a ``ready_p`` fraction) and checked."""
    ch.drive("random", cycle, ready_p)
    await ReadOnly()
    ch.check(cycle)
    await FallingEdge(dut.clk)
    return cycle + 1


async def settle(dut, ch, cycle):
    """Checked cycles (output always ready) until no tuple and no message waits."""
    while ch.holding or ch.model.out_valid:
        cycle = await checked_cycle(dut, ch, cycle, 1.0)
    return cycle


async def fast_forward(dut, ch, cycle, tuples, ready):
    """``tuples`` tuples of one random key with ``tuples.valid`` = 1 and ``messages.ready`` =
    ``ready``, the model stepped alike but the DUT not compared cycle by cycle (fast)."""
    if tuples <= 0:
        return cycle
    key = ch.r.getrandbits(ch.key_bits)
    ch.port("tuples__valid").value = 1
    ch.port("tuples__payload").value = key
    ch.port("messages__ready").value = ready
    for _ in range(tuples):
        ch.model.step(in_valid=1, in_key=key, out_ready=ready)
    await ClockCycles(dut.clk, tuples, FallingEdge)
    ch.tuples += tuples
    return cycle + tuples


async def every_entry(dut, ch, cycle):
    """``A_k``: every entry counts up to an overflow and reports it, checked every cycle.

    The phases above overflow only the entries their few hot keys land in (a
    count bit stuck in another entry went unseen). Here ``k`` keys, one of them
    and the others each with one more bit flipped (near misses of it, one key
    bit each), take over the table (the misses evict the round-robin victims),
    then come round-robin with counts in the upper half of the input range,
    ``2**count_bits // lo + 1`` times each (``lo`` the smallest count), so every
    entry overflows at least once: every count bit of every entry is seen as 0
    and as 1, and every entry reports its count.
    """
    model, r = ch.model, ch.r
    k = model.config.entries
    lo = 1 << (ch.in_count_bits - 1)
    base = r.getrandbits(ch.key_bits)
    keys = [base] + [base ^ (1 << b) for b in r.sample(range(ch.key_bits), k - 1)]
    for i in range(k * (1 + (1 << model.count_bits) // lo + 1)):
        cycle = await offer(dut, ch, cycle, keys[i % k], r.randrange(lo, 2 * lo))
    await drain(dut, ch, cycle)


async def alias_groups(dut, ch, cycle, groups=256, per_group=32):
    """Tagged compressor: ``groups`` sets fought over by 4 random full-width keys each.

    The phases above alias one set with keys searched upward from a 20-bit start
    (their upper bytes are 0), so the hash's byte tables (mux trees in the RTL)
    were checked on a handful of byte values: an index bit flipped for the keys
    with one byte value went unseen. Here the keys are random 64-bit keys, the
    golden hash (its numpy path) groups them by set, and each group holds
    ``2**tag_bits`` (at most 4) keys with pairwise different tags in one set,
    more than its ways, so they evict one another and report; ``per_group``
    tuples pick among them at random. A key the RTL places in another set changes
    the hits, misses and messages. 1,024 keys: each byte value at each byte
    position in about 4 of them.
    """
    model, r = ch.model, ch.r
    c = model.config
    size = min(4, 1 << c.tag_bits)
    gen = np.random.default_rng(r.getrandbits(32))
    keys = gen.integers(0, 1 << 64, size=groups * 64, dtype=np.uint64)
    keys &= np.uint64((1 << c.key_bits) - 1)
    sets = model.hash.many(keys)
    order = np.argsort(sets, kind="stable")
    chosen = []
    start = 0
    while start < len(order) and len(chosen) < groups:
        end = start
        while end < len(order) and sets[order[end]] == sets[order[start]]:
            end += 1
        group, tags = [], set()
        for j in order[start:end]:
            key = int(keys[j])
            tag = gt.tag_of(key, c.tag_bits, c.key_bits, c.pc_bits)
            if tag not in tags:
                group.append(key)
                tags.add(tag)
        if len(group) >= size:
            chosen.append(group[:size])
        start = end
    for group in chosen:
        for _ in range(per_group):
            cycle = await offer(dut, ch, cycle, r.choice(group))
    await drain(dut, ch, cycle)
    dut._log.info("alias groups: %d of 4 keys, %d tuples each", len(chosen), per_group)


def keys_of_one_set(model, r, count, sets_wanted):
    """``sets_wanted`` lists of ``count`` keys, each list one set's keys with pairwise
    different tags (random full-width keys grouped with the golden hash)."""
    c = model.config
    gen = np.random.default_rng(r.getrandbits(32))
    keys = gen.integers(0, 1 << 64, size=c.sets * 16, dtype=np.uint64)
    keys &= np.uint64((1 << c.key_bits) - 1)
    by_set = {}
    for key, index in zip(keys.tolist(), model.hash.many(keys).tolist(), strict=True):
        tags = by_set.setdefault(index, {})
        tags.setdefault(gt.tag_of(key, c.tag_bits, c.key_bits, c.pc_bits), key)
    groups = [list(tags.values())[:count] for tags in by_set.values() if len(tags) >= count]
    assert len(groups) >= sets_wanted, "too few sets with distinct tags"
    return groups[:sets_wanted]


async def high_counts(dut, ch, cycle):
    """Tagged compressor: the counters near their top, in each way of a set.

    Run first, from reset, so that its sets are empty (its cycles are numbered from
    ``-2**20`` in the log; the main phases keep their numbers). The main phases
    never bring a second-way entry to a saturating hit count, nor an entry with
    about ``hit_max - replace_misses`` hits to its ShouldReplace miss; the RTL
    compares those thresholds as constant compares (one gate tree per threshold
    and way), which only such counts exercise. Per round, a fresh set with three
    keys of different tags: X and Y fill the two ways (the victim-to-be with ``h``
    hits, the other with ``h + 3``), then ``replace_misses`` tuples of Z replace
    the victim (E4, E5a.., E5): its count ``h + replace_misses`` is reported iff it
    reaches ``hit_max`` (Figure 6), for ``h`` on both sides of that boundary; then
    one round per way that saturates an entry (E2 at ``hit_max`` hits); then four
    rounds of equal hit counts in both ways, odd and even, with and without tuples of
    another set between the key changes (the victim of a miss is way 0).
    """
    model, r = ch.model, ch.r
    c = model.config
    if c.ways != 2 or c.tag_bits < 2:
        return cycle
    boundary = c.hit_max - c.replace_misses  # the fewest hits whose replacement reports
    rounds = [(victim, h) for victim in (0, 1) for h in range(boundary - 2, boundary + 2)
              if 0 < h and h + 3 < c.hit_max]  # fmt: skip
    ties = [(h, spaced) for h in (c.evict_hits + 1, c.evict_hits + 2) if h + 1 < c.hit_max
            for spaced in (False, True)]  # fmt: skip
    groups = keys_of_one_set(model, r, 3, len(rounds) + 2 + len(ties) + 1)
    spacers = groups[-1]  # keys of another set, between the tie rounds' key changes
    before = dict(model.transitions)
    for (victim, h), (x, y, z) in zip(rounds, groups, strict=False):
        hits = (h, h + 3) if victim == 0 else (h + 3, h)
        for key, n in ((x, hits[0]), (y, hits[1]), (z, c.replace_misses)):
            for _ in range(n):
                cycle = await offer(dut, ch, cycle, key)
    for way, (x, y, _) in enumerate(groups[len(rounds): len(rounds) + 2]):
        if way:  # a first key in way 0, the saturating one in way 1
            cycle = await offer(dut, ch, cycle, x)
        for _ in range(c.hit_max):
            cycle = await offer(dut, ch, cycle, y)
    # equal hit counts (odd and even): a miss goes to way 0 (the first of the fewest
    # hits); X's next hit then finds its entry in Evict and reports it (E6). Spaced:
    # two tuples of another set before each key change, so that the choice is made
    # on the words read from the table, not on the write of the tuple ahead (forwarded)
    for i, ((h, spaced), (x, y, z)) in enumerate(zip(ties, groups[len(rounds) + 2:], strict=False)):
        for key, n in ((x, h), (y, h), (z, 1), (x, 1)):
            for _ in range(n):
                cycle = await offer(dut, ch, cycle, key)
            for spacer in spacers[i % 2: i % 2 + 2] if spaced else ():
                cycle = await offer(dut, ch, cycle, spacer)
    cycle = await drain(dut, ch, cycle)
    done = {k: model.transitions[k] - before[k] for k in before}
    dut._log.info("high counts: %d replacement rounds, %d ties, transitions %s", len(rounds),
                  len(ties), done)  # fmt: skip
    assert done["E2"] >= 2 and done["E5"] >= len(rounds) and done["E6"] >= len(ties), \
        "the rounds did not happen"
    return cycle


def first_stage(model):
    """The first stage of a golden pipeline (``H[X_r]_n`` of ``stratified_pipeline``),
    else the model itself."""
    return model.stages[0] if isinstance(model, gs.Pipeline) else model


async def counter_groups(dut, ch, cycle, groups=4):
    """``H[P_r]_n``: ``groups`` counters each driven to a message by distinct random keys.

    The random phases spread tuples over the ``n`` counters (none reaches ``r``),
    and the aliasing phases use keys searched upward from a 20-bit start (upper
    bytes 0), so the hash's byte tables (mux trees in the RTL) were checked on a
    few byte values only. Here random 64-bit keys are grouped by counter with the
    golden hash (its numpy path); for each of ``groups`` counters, ``r - c``
    distinct keys of that counter (``c`` its count now) go in, so the golden model
    sends a message on the last one. A key the RTL hashes elsewhere leaves that
    counter one short: no message. About ``groups * r`` keys (1,024 by default),
    each byte value at each byte position in about 4 of them. In ``stratified_pipeline``
    the messages go on into ``A_k`` (the phases above fill few of its entries: their
    messages come from a handful of aliasing keys), so it gets ``4 + 2 k`` groups:
    ``A_k`` fills and evicts, and a missing message changes the evictions, which the
    pipeline's output shows.
    """
    model, r = first_stage(ch.model), ch.r
    c = model.config
    gen = np.random.default_rng(r.getrandbits(32))
    keys = gen.integers(0, 1 << 64, size=c.entries * c.rate, dtype=np.uint64)
    keys &= np.uint64((1 << c.key_bits) - 1)
    index = model.hash.many(keys)
    fullest = np.argsort(np.bincount(index, minlength=c.entries), kind="stable")[::-1]
    for counter in fullest[:groups]:
        members = [int(k) for k in keys[index == counter]]
        for key in members[: c.rate - model.table[int(counter)]]:
            cycle = await offer(dut, ch, cycle, key)
    cycle = await drain(dut, ch, cycle)
    dut._log.info("counter groups: %d counters driven to a message", groups)
    return cycle


def own_counter_key(sampler, r, used):
    """A random key of ``sampler`` whose counter and its complement's differ from each
    other and from the counters in ``used`` (both added to it)."""
    mask = (1 << sampler.config.key_bits) - 1
    while True:
        key = r.getrandbits(sampler.config.key_bits)
        counters = {sampler.hash(key), sampler.hash(key ^ mask)}
        if len(counters) == 2 and not counters & used:
            used.update(counters)
            return key


async def assoc_hits(dut, ch, cycle, hits=3):
    """``stratified_pipeline``'s ``A_k``: every entry hit, then evicted and reported.

    The phases before send ``A_k`` distinct keys (each message a new key), so its
    entries are filled and evicted but never hit: a count bit of an entry's
    update, or a key bit of an entry's compare, stuck at a value went unseen.
    Here ``k`` keys, each in its own counter of ``H[P_r]``, are sent as messages
    (a key offered until its counter reaches ``r``: the message carries it) once
    to fill the ``k`` entries (A_k is full: each new key evicts the round-robin
    victim, so the ``k`` keys take all ``k`` entries), ``hits`` more times each,
    then ``k`` new keys evict them and the reports show their counts (with
    ``hits = 3`` and ``r = 256`` each entry counts 256, 512, 768 and 1,024, so
    bits 8, 9 and 10 of every entry's count are seen at 1; the higher bits would
    need 8 to 256 messages per entry, too many tuples for this tier). Two passes,
    the second with the complements of the first pass's keys: the pointer is back
    where it was after each ``k`` evictions, so each entry compares a key and its
    complement (every compare bit seen at 0 and 1). The keys are drawn so that no
    two share a counter (each key's run of offers starts from its counter's count).
    """
    model, r = ch.model, ch.r
    sampler, k = first_stage(model), model.stages[1].config.entries
    if 6 * k > sampler.config.entries:  # 3k keys and their complements, one counter each
        dut._log.info("assoc hits: skipped (%d counters for %d entries)",
                      sampler.config.entries, k)  # fmt: skip
        return cycle
    mask = (1 << sampler.config.key_bits) - 1
    used = set()

    def fresh_key():
        return own_counter_key(sampler, r, used)

    async def message(cycle, key):
        counter = sampler.hash(key)
        for _ in range(sampler.config.rate - sampler.table[counter]):
            cycle = await offer(dut, ch, cycle, key)
        return cycle

    first = [fresh_key() for _ in range(k)]
    for keys in (first, [key ^ mask for key in first]):
        for _ in range(1 + hits):
            for key in keys:
                cycle = await message(cycle, key)
        for _ in range(k):  # evict them: each reports its count
            cycle = await message(cycle, fresh_key())
    cycle = await drain(dut, ch, cycle)
    dut._log.info("assoc hits: %d entries hit %d times, two passes", k, hits)
    return cycle


async def back_to_back(dut, ch, cycle, group=8, ready=0.05):
    """``H[P_r]_n``: messages on consecutive tuples while its output stalls.

    Every phase before sends a message about once per ``r`` tuples, so ``H[P_r]``'s
    output never stalls with a second message on its way: stage 2 holding a tuple
    that completes a counter (its key then goes out in the message) was never
    checked. Here keys in distinct counters each first bring their counter to ``r -
    1`` (offers with the output always ready), then go in one after the other: each
    completes its counter, so messages come back to back. In ``stratified_pipeline``
    the messages reach ``H[P_r]``'s output only through ``A_k`` (full after the
    phases before: every new key evicts, and the eviction goes to the message
    buffer) and the message buffer: filler keys with the output never ready first
    fill the buffer (``depth`` minus 4: it is empty after the pre-charge, and a
    few messages are in flight), so that ``A_k`` and then ``H[P_r]`` stall. Then
    ``group`` random keys and their complements (every key bit held at 0 and at 1)
    go in with ``messages.ready`` on a ``ready`` fraction, and in the pipeline
    ``k`` more keys, whose messages evict the group's last entries: every key the
    group's messages carried is reported (an eviction) before the drain ends.
    """
    model = ch.model
    sampler = first_stage(model)
    # the buffer is empty after the pre-charge below (thousands of cycles always ready)
    filler, tail = 0, 0
    if isinstance(model, gs.Pipeline):
        filler, tail = max(0, model.stages[2].depth - 4), model.stages[1].config.entries
    mask = (1 << sampler.config.key_bits) - 1
    if 2 * (filler + group + tail) > sampler.config.entries:
        dut._log.info("back to back: skipped (%d counters)", sampler.config.entries)
        return cycle
    used = set()
    keys = [own_counter_key(sampler, ch.r, used) for _ in range(filler + group + tail)]
    group_keys = keys[filler : filler + group]
    stalled = group_keys + [key ^ mask for key in group_keys] + keys[filler + group :]
    for key in keys[:filler] + stalled:  # each counter to r - 1
        for _ in range(sampler.config.rate - 1 - sampler.table[sampler.hash(key)]):
            cycle = await offer(dut, ch, cycle, key, ready=1.0)
    for key in keys[:filler]:  # (each offer drives the tuple before it)
        cycle = await offer(dut, ch, cycle, key, ready=0.0)
    for key in stalled:
        cycle = await offer(dut, ch, cycle, key, ready=ready)
    cycle = await drain(dut, ch, cycle, extra=8 + filler + len(stalled))  # the buffer emptied
    dut._log.info("back to back: %d filler messages, then %d with the output stalled",
                  filler, len(stalled))  # fmt: skip
    return cycle


async def offer(dut, ch, cycle, key, count=1, ready=0.8):
    """The tuple ahead first (checked cycles, ``messages.ready`` on a ``ready`` fraction),
    then ``(key, count)`` pending; the next cycle number."""
    while ch.pending is not None:
        ch.drive("random", cycle, ready)
        await ReadOnly()
        ch.check(cycle)
        await FallingEdge(dut.clk)
        cycle += 1
    ch.pending = (key, count)
    return cycle


async def drain(dut, ch, cycle, extra=8):
    """The pending tuple in, then ``extra`` checked idle cycles (``tuples.valid`` = 0,
    ``messages.ready`` = 1): the pipelined blocks show a message up to ``latency``
    (+ 1 with the skid buffer) cycles after its tuple, and it must be compared too."""
    cycle = await offer(dut, ch, cycle, 0, ready=1.0)  # (0, 1) not offered: valid is low
    for _ in range(extra):
        ch.valid, ch.ready = 0, 1
        ch.port("tuples__valid").value = 0
        ch.port("messages__ready").value = 1
        await ReadOnly()
        ch.check(cycle)
        await FallingEdge(dut.clk)
        cycle += 1
    ch.pending = None
    return cycle
