"""Table-wide stimulus for the profile-flag predictor (the Amaranth and cocotb checks).

The front-end programs live at one small address range (base 0x1000, upper
address bits 0), fill a set's two ways rarely and walk every profile block in
program order. Here the golden predictor alone is driven with blocks in every
set, ``ways + 2`` of them per set with random full-width tags (so both ways of a
set are valid, then one is evicted, and the tag bits of the full width are 0 and
1), blocks across a carry (their words differ from bit ``b`` up, ``b`` random:
the follow compares at every level), a block at the top of the address space
(its follow wraps), lengths around ``min_block``, and, on some visits, the
block's PIs out of program order (a PI branch back or forward inside the block,
to its leader or before it: the follow compares between lanes), some of them
dispatched. Decode groups of random width run in parallel with fetches of the
leaders, and after each round every leader is fetched (a sweep), so that every
entry the table holds is read out through ``skip``/``follow``. Last, directed
blocks at a carry at every word bit from the index bits up: a block that ends
exactly below the carry with its last PI in each lane of a later decode group
(against the stored follow of each way), out-of-order groups with a PI above the
carry in a lane before one below it, and the creating group with a PI above the
carry in each lane after the leader (mutation runs: two such compares had survived).
After them (two more mutants survived),
blocks whose leader and last PI are of every PI operation (not only ``lw``) in
every decode and fetch lane, and passes that evict a block in every set, with
either way the least recently updated one and writes to other sets between a
set's last LRU update and its eviction (two random orders of the sets a pass).
"""

from __future__ import annotations

import random

from hwprof.golden.frontend import PredictorStep
from hwprof.golden.isa_profile import CUSTOM2, NOP, PI_OPS, Insn, encode, encode_pflen
from hwprof.golden.predictor import PredictorConfig, ProfileFlagPredictor

__all__ = ["table_steps"]

#: sets visited at most (all of them at the default 64)
MAX_SETS = 64


def _pi(k, op="lw"):
    return encode(Insn("pi", op, k, rd=5, rs1=5))


def _any_pi(rng, op, k):
    """A PI of operation ``op`` and type ``k`` with random registers and immediate."""
    if op == "lui":
        imm = rng.randrange(-(1 << 13), 1 << 13)
    elif op in ("beq", "bne"):
        imm = 2 * rng.randrange(-256, 256)
    else:  # add: no immediate (its bits 28:25 stay 0)
        imm = 0 if op == "add" else rng.randrange(-256, 256)
    return encode(Insn("pi", op, k, rd=rng.randrange(32), rs1=rng.randrange(32),
                       rs2=rng.randrange(32), imm=imm))  # fmt: skip


def _not_add(rng, k=None):
    """A custom-2 word of funct3 0 (``add/b``) with a reserved bit 28:25 set: not a PI;
    its type field ``k`` (random if None: the same draws either way)."""
    reserved, drawn = rng.randrange(1, 16), rng.getrandbits(3)
    rest = rng.getrandbits(5) << 20 | rng.getrandbits(5) << 15 | rng.getrandbits(5) << 7
    return CUSTOM2 | reserved << 25 | (drawn if k is None else k) << 29 | rest


def table_steps(rng, params, squash_rate=0.01, carries=256, exact_carries=True,
                ops_and_lru=True, lru_passes=12, late_create=True, two_starts=True,
                marks=None):
    """Golden steps (``fetch_latency`` 0: the cocotb replay shifts them itself).

    Rounds: fill (every set's first ``ways`` blocks, each visited twice with its
    flag off: created locked, then unlocked by its leader; one way at a time),
    evict (each set's block ``ways``, twice), predicted (a block per set visited
    with the flag on, then off again), jumbled (each set's last block, new, visited
    with its PIs in random order, some of them dispatched, then in order; then the
    block it evicted, the same way), carries (``carries`` short blocks across a
    carry in the last 8 sets, each learnt and its leader fetched), and, with
    ``exact_carries`` (the steps before them do not change), directed blocks at
    a carry at every bit (:func:`exact_carry_rounds`), and, with ``ops_and_lru``
    (after them: the steps before do not change), :func:`op_lane_rounds` and
    ``lru_passes`` passes of :func:`lru_rounds`, and, with ``late_create`` (after
    them), :func:`late_create_rounds`, and, with ``two_starts`` (after them),
    :func:`two_start_rounds` (``marks``, a dict: the index of the first step of each
    of the last rounds, by name). Each round ends
    with a sweep that fetches every leader, after a probe: PIs of tag 0 in every
    set (no block has it; a valid bit set on a way never written would show), also
    after every 8 sets of the fill.
    """
    c = PredictorConfig(**params)
    golden = ProfileFlagPredictor(**{**params, "fetch_latency": 0})
    mask = (1 << c.addr_width) - 1
    sets = list(range(c.sets)) if c.sets <= MAX_SETS else rng.sample(range(c.sets), MAX_SETS)
    blocks = []  # per set: [(leader pc, length, k)] with ways + 2 distinct tags
    for n, s in enumerate(sets):
        tags = set()
        if n == len(sets) - 1 and s == c.sets - 1:
            tags.add((1 << c.tag_bits) - 1)  # the last word: follow wraps to 0
        while len(tags) < min(c.ways + 2, 1 << c.tag_bits):
            tags.add(rng.getrandbits(c.tag_bits) or 1)
        row = []
        for tag in sorted(tags, key=lambda t: rng.random()):
            if rng.random() < 0.3:  # around the skip threshold
                length = max(1, c.min_block + rng.choice((-1, 0, 1)))
            else:
                length = rng.randint(c.min_block, c.min_block + 12)
            row.append(((tag << c.index_bits | s) << 2 & mask, length, rng.randrange(c.n_flags)))
        blocks.append(row)
    leaders = [b for row in blocks for b in row]
    steps = []
    decode, fetch = [], []

    def fetch_words(block):
        leader, length, k = block
        words = [(encode_pflen(length), leader - 4 & mask)] if rng.random() < 0.9 else []
        if rng.random() < 0.05:  # a PI at 4n + 2 is never looked up
            return words + [(_pi(k), leader + 2 & mask)]
        return words + [(_pi(k), leader)]

    def other_fetch():
        r = rng.random()
        if r < 0.5:
            return [(encode(Insn("pci", rng.choice(("setpf", "resetpf")), k=rng.randrange(8))),
                     rng.getrandbits(c.addr_width) & ~3)]  # fmt: skip
        return [(encode(Insn("pi", rng.choice(("beq", "bne", "jalr")), rng.randrange(8))),
                 rng.getrandbits(c.addr_width) & ~3)]  # fmt: skip

    def cycle(lanes_fetched=None, take=None):
        """One step: random fetches (``lanes_fetched`` None) or that many of ``fetch``;
        a decode group of random width, or of ``take`` lanes and no squash (directed)."""
        while lanes_fetched is None and len(fetch) < c.lanes:
            fetch.extend(fetch_words(rng.choice(leaders)) if rng.random() < 0.8
                         else other_fetch())  # fmt: skip
        n = rng.randint(0, c.lanes) if lanes_fetched is None else lanes_fetched
        f, fetch[:] = fetch[:n], fetch[n:]
        directed = take is not None
        if not directed:
            take = min(len(decode), rng.choice((c.lanes, c.lanes, rng.randint(1, c.lanes))))
        u, decode[:] = decode[:take], decode[take:]
        squash = 0 if directed else int(rng.random() < squash_rate)
        steps.append(PredictorStep(f, u, squash, golden.step(fetch=f, update=u, squash=squash)))

    def visit(block, flag, jumbled=False):
        leader, length, k = block
        order, flags = list(range(length)), [flag] * length
        if jumbled and length > 2:  # the leader, then its PIs with jumps back and forth
            # (now and then to the leader itself or a PI of the block's type before it)
            order = [0] + [rng.randrange(1, length) if rng.random() < 0.9
                           else rng.randrange(-2, 1) for _ in range(2 * length)]  # fmt: skip
            flags = [flag] + [int(rng.random() < 0.15) for _ in order[1:]]  # some dispatched
        decode.append((encode_pflen(length), leader - 4 & mask, 0))
        decode.extend((_pi(k), leader + 4 * j & mask, f) for j, f in zip(order, flags, strict=True))
        decode.append((NOP, leader + 4 * length & mask, 0))

    def probe():
        """PIs of tag 0 in every set: they hit only a way marked valid that holds the
        memory's initial zeros (no block has tag 0)."""
        for s in sets:
            fetch.append((_pi(0), s << 2))
            while len(fetch) >= c.lanes:
                cycle(c.lanes)
        cycle(len(fetch))

    def run(sweep=leaders):
        """Decode what is queued, then the probe and a fetch of every block in ``sweep``."""
        while decode:
            cycle()
        for _ in range(c.update_latency + 2):
            cycle()
        fetch.clear()
        probe()
        for block in sweep:
            fetch.extend(fetch_words(block))
            while len(fetch) >= c.lanes:
                cycle(c.lanes)
        cycle(len(fetch))

    probe()
    for way in range(c.ways):  # fill, one way at a time, a probe after every 8 sets
        for n, row in enumerate(blocks):
            visit(row[way], 0, jumbled=rng.random() < 0.5)
            visit(row[way], 0)
            if n % 8 == 7:
                run(())
    run()
    for row in blocks:  # evict
        visit(row[min(c.ways, len(row) - 1)], 0)
        visit(row[min(c.ways, len(row) - 1)], 0)
    run()
    for row in blocks:  # predicted: on, then off again
        block = rng.choice(row)
        visit(block, 1)
    run()
    for row in blocks:
        visit(rng.choice(row), 0)
    run()
    for block in (row[-1] for row in blocks for _ in range(2)):  # jumbled: twice, a new
        visit(block, 0, jumbled=True)  # block evicts one and is learnt out of order
        visit(block, 0)
        visit(block, 0, jumbled=True)  # (unlocked: no change)
    run()
    for row in blocks:  # and the block it evicted, learnt again out of order
        for block in row[:-1]:
            if golden.find(*golden.split(block[0])[1:]) is None:
                visit(block, 0, jumbled=True)
                visit(block, 0)
    run()
    # carries: short blocks in the last sets whose words differ from bit b up (b
    # random: the tag's low bits all 1), learnt (in order or not), then fetched
    top = sorted(sets)[-min(8, len(sets)):]
    learnt = []
    for _ in range(carries):
        s = rng.choice(top)
        b = rng.randrange(c.index_bits, c.word_bits + 1)
        tag = rng.getrandbits(c.tag_bits) | (1 << (b - c.index_bits)) - 1
        length = max(c.min_block, c.sets - s + rng.randint(0, 4))
        block = ((tag << c.index_bits | s) << 2 & mask, length, rng.randrange(c.n_flags))
        visit(block, 0, jumbled=rng.random() < 0.5)
        visit(block, 0)
        learnt.append(block)
        if len(learnt) == 16:
            run(learnt)
            learnt.clear()
    run(learnt)
    marks = {} if marks is None else marks
    if exact_carries:
        marks["exact_carries"] = len(steps)
        exact_carry_rounds(c, rng, cycle, decode, fetch)
    if ops_and_lru:
        marks["op_lane"] = len(steps)
        op_lane_rounds(c, rng, cycle, decode, fetch, sets)
        marks["lru"] = len(steps)
        lru_rounds(c, rng, cycle, decode, fetch, sets, lru_passes)
    if late_create:
        marks["late_create"] = len(steps)
        late_create_rounds(c, rng, cycle, decode, fetch, sets)
    if two_starts:
        marks["two_starts"] = len(steps)
        two_start_rounds(c, cycle, decode, fetch, sets)
    return steps


def two_start_rounds(c, cycle, decode, fetch, sets):
    """Two blocks started in one decode group: for every pair of lanes ``a < b - 1``, a
    new block A's leader alone in lane ``a`` (A is created: length 1) and another
    block's PI at least ``min_block`` words above it in lane ``b`` (NOPs between and
    around); A is then unlocked by its leader and fetched: it does not skip (a decoder
    that takes lane ``b`` for one on A's row grows A's follow to lane ``b``'s, and A
    skips). Its own RNG: the rounds before draw the same words as without it.
    """
    rng = random.Random(len(sets))
    mask = (1 << c.addr_width) - 1
    pairs = [(a, b) for a in range(c.lanes) for b in range(a + 2, c.lanes)]
    learnt = []
    for (a, b), s in zip(pairs, rng.sample(sets, len(pairs)), strict=True):
        k = rng.randrange(c.n_flags)
        leader = (rng.getrandbits(c.tag_bits) << c.index_bits | s) << 2 & mask
        group = [(NOP, 0, 0)] * c.lanes
        group[a] = (_pi(k), leader, 0)
        group[b] = (_pi(k), leader + 4 * (c.min_block + rng.randint(0, 8)) & mask, 0)
        _decoded(c, cycle, decode, [(NOP, 0, 0)] * c.lanes + group + [(NOP, 0, 0)] * c.lanes)
        _decoded(c, cycle, decode, [(_pi(k), leader, 0), (NOP, leader + 4 & mask, 0)])
        learnt.append((leader, k))
    for _ in range(c.update_latency + 2):
        cycle(0, take=0)
    flat = []
    for leader, k in learnt:
        flat += [(encode_pflen(1), leader - 4 & mask), (_pi(k), leader)]
    _fetched(c, cycle, fetch, flat)

def _decoded(c, cycle, decode, flat):
    """Decode ``flat`` in groups of ``lanes`` (directed: no squash)."""
    for n in range(0, len(flat), c.lanes):
        decode[:] = flat[n:n + c.lanes]
        cycle(0, take=len(decode))


def _fetched(c, cycle, fetch, flat):
    """Fetch ``flat`` in groups of ``lanes``, nothing decoded."""
    fetch.clear()
    for n in range(0, len(flat), c.lanes):
        fetch[:] = flat[n:n + c.lanes]
        cycle(len(fetch), take=0)


def op_lane_rounds(c, rng, cycle, decode, fetch, sets):
    """Blocks led and ended by a PI of operation ``op`` in decode lane ``lane``, for every
    ``op`` of :data:`PI_OPS` and every lane, and fetched with the leader in that lane.

    Each block (its own set within a batch of 8) is decoded in groups of ``lanes``
    from a lane-aligned start: NOPs, ``pflen``, the leader in lane ``lane``, PIs of
    random operations, the last PI (``op`` again) in lane ``lane``, then a custom-2
    word of funct3 0 with a reserved bit set and the block's type (not a PI: it ends the
    block) in the next lane. A decoder that takes the leader or the last PI for
    something else, or the word after for a PI (of the same type: the block goes on),
    learns another block (no skip, or another ``follow``). The
    leader is then decoded again (unlocked), and after the batch every leader is
    fetched in lane ``lane`` (after a ``pflen``), the fetch side's decoder of that lane;
    then fetched again in that lane with such a reserved-bit word at the leader's pc in
    the PI's place: not a PI, so no lookup (a fetch decoder that takes it for a PI
    predicts a skip). Its words come from an RNG of their own: the rounds after these
    draw the same words as without it.
    """
    mask = (1 << c.addr_width) - 1
    cases = [(lane, op) for lane in range(c.lanes) for op in PI_OPS]
    batch = min(8, len(sets))
    steps_per_lane = -(-max(c.min_block - 1, 1) // c.lanes)  # length 1 + lanes * q
    for start in range(0, len(cases), batch):
        learnt = []
        for (lane, op), s in zip(cases[start:start + batch], rng.sample(sets, batch),
                                 strict=False):  # fmt: skip
            k = rng.randrange(c.n_flags)
            leader = (rng.getrandbits(c.tag_bits) << c.index_bits | s) << 2 & mask
            length = 1 + c.lanes * rng.randint(steps_per_lane, steps_per_lane + 1)
            ops = [op] + [rng.choice(PI_OPS) for _ in range(length - 2)] + [op]
            head = [(NOP, 0, 0)] * ((lane - 1) % c.lanes)
            head.append((encode_pflen(length), leader - 4 & mask, 0))
            flat = head + [(_any_pi(rng, o, k), leader + 4 * j & mask, 0)
                           for j, o in enumerate(ops)]  # fmt: skip
            flat.append((_not_add(rng, k), leader + 4 * length & mask, 0))
            _decoded(c, cycle, decode, flat)
            unlock = head + [(_any_pi(rng, op, k), leader, 0), (NOP, leader + 4 & mask, 0)]
            _decoded(c, cycle, decode, unlock)
            learnt.append((leader, length, k, op, lane))
        for _ in range(c.update_latency + 2):
            cycle(0, take=0)
        flat = []
        for leader, length, k, op, lane in learnt:
            flat += [(NOP, 0)] * ((lane - 1 - len(flat)) % c.lanes)
            flat += [(encode_pflen(length), leader - 4 & mask), (_any_pi(rng, op, k), leader)]
        _fetched(c, cycle, fetch, flat)
        words, flat = random.Random(start), []
        for leader, length, _k, _op, lane in learnt:
            flat += [(NOP, 0)] * ((lane - 1 - len(flat)) % c.lanes)
            flat += [(encode_pflen(length), leader - 4 & mask), (_not_add(words), leader)]
        _fetched(c, cycle, fetch, flat)


def late_create_rounds(c, rng, cycle, decode, fetch, sets):
    """Entries created by a PI after the leader: the leader (in lane 0 of the group, or
    in the register: decoded in the group before) and the lanes before lane ``cl``
    dispatched, lane ``cl`` an ignored PI of the block, which creates the entry
    (follow: the leader's word + 1); a later lane ``i`` holds a PI of the block below
    lane ``cl``'s (its ``nxt`` is the largest after the creation: the follow), and
    the case's second block the other way round (lane ``i`` above lane ``cl``).

    For every ``cl`` and ``i > cl``. Lanes between ``cl`` and ``i`` and after ``i`` hold
    PIs of the block just after the leader (below lane ``i``). The entry is then
    unlocked by its leader (dispatched, then ignored: predicted ignored) and, after
    every 8 cases (8 sets), every leader is fetched; the follow (lane ``i``'s ``nxt``,
    at least ``min_block`` past the leader) shows in ``skip``/``follow``. A mutation
    run's survivor (lane 2's eligibility in the no-hit hypothesis
    forced to "not flagged") made lane 3's growth need ``nxt3 > nxt2`` after lane 2
    created the entry; the earlier rounds create every entry at its leader.
    """
    mask = (1 << c.addr_width) - 1
    cases = [(reg, cl, i) for reg in (0, 1) for cl in range(1 - reg, c.lanes)
             for i in range(cl + 1, c.lanes)]  # fmt: skip
    batch = min(8, len(sets))
    m = c.min_block
    for start in range(0, len(cases), batch):
        learnt = []
        chunk = cases[start:start + batch]
        for (reg, cl, i), s in zip(chunk, rng.sample(sets, len(chunk)), strict=True):
            k = rng.randrange(c.n_flags)
            for second in (0, 1):  # two blocks in one set (two ways with LRU)
                leader = (rng.getrandbits(c.tag_bits) << c.index_bits | s) << 2 & mask
                low = rng.randint(max(m - 1, 1), m + 2)  # lane i's offset: below lane cl's
                offs = {cl: low + rng.randint(1, 4), i: low}
                if second:  # lane i above lane cl
                    offs = {cl: low, i: low + rng.randint(1, 4)}
                group = []
                for lane in range(c.lanes):
                    if lane == 0 and not reg:
                        group.append((_pi(k), leader, 1))  # the leader, dispatched
                    elif lane < cl:  # dispatched PIs of the block
                        group.append((_pi(k), leader + 4 * rng.randint(1, m + 6) & mask, 1))
                    elif lane in offs:
                        group.append((_pi(k), leader + 4 * offs[lane] & mask, 0))
                    else:  # just after the leader: below lane i
                        group.append((_pi(k), leader + 4 * rng.randint(1, min(offs.values()) - 1)
                                      & mask if min(offs.values()) > 1 else leader, 0))
                length = 1 + offs[i]  # the follow: lane i's nxt (created at leader + 1)
                head = [(encode_pflen(length), leader - 4 & mask, 0)]
                if reg:  # the leader in the register, dispatched (no entry)
                    _decoded(c, cycle, decode, head + [(_pi(k), leader, 1)])
                    _decoded(c, cycle, decode, group)
                else:
                    _decoded(c, cycle, decode, head)
                    _decoded(c, cycle, decode, group)
                end = [(NOP, leader + 4 * length & mask, 0)]
                _decoded(c, cycle, decode, end + head + [(_pi(k), leader, 1), (_pi(k), leader, 0),
                                                         (NOP, leader + 4 & mask, 0)])
                learnt.append((leader, length, k))
        for _ in range(c.update_latency + 2):
            cycle(0, take=0)
        _fetched(c, cycle, fetch, [word for leader, length, k in learnt
                                   for word in ((encode_pflen(length), leader - 4 & mask),
                                                (_pi(k), leader))])  # fmt: skip


def lru_rounds(c, rng, cycle, decode, fetch, sets, passes):
    """``passes`` passes over every set: in a random order of the sets, now and then a
    resident block visited again (it becomes the most recently updated one); then, in
    another order (so that writes to other sets come between a set's last LRU update
    and the eviction that reads it), a new block learnt (it evicts the least recently
    updated one) and unlocked; after
    each pass, every block the set held in the pass (the two resident, the evicted one)
    is fetched: a wrong victim (an LRU bit changed by writes to another set, or not
    updated) keeps a block that the golden model evicted, or evicts one it keeps.

    Every block of at least ``min_block`` PIs, predicted ignored and unlocked, so
    that a fetch of its leader skips exactly while it is in the table.
    """
    mask = (1 << c.addr_width) - 1
    resident = {s: [] for s in sets}  # least recently updated first (as the golden model)
    used = {s: set() for s in sets}

    def visit_leader(block):
        leader, length, k = block
        _decoded(c, cycle, decode, [(encode_pflen(length), leader - 4 & mask, 0),
                                    (_pi(k), leader, 0), (NOP, leader + 4 & mask, 0)])

    for _ in range(passes):
        fetched = []
        for s in rng.sample(sets, len(sets)):  # first the visits, in one order of the sets
            row = resident[s]
            if len(row) == c.ways and rng.random() < 0.5:  # the other way becomes the LRU
                block = row.pop(rng.randrange(len(row)))
                visit_leader(block)
                row.append(block)
        for s in rng.sample(sets, len(sets)):  # then the new blocks, in another: the
            row = resident[s]  # writes to other sets between a set's LRU update and its use
            tag = rng.getrandbits(c.tag_bits)
            while tag in used[s]:
                tag = rng.getrandbits(c.tag_bits)
            used[s].add(tag)
            leader = (tag << c.index_bits | s) << 2 & mask
            block = (leader, rng.randint(c.min_block, c.min_block + 3), rng.randrange(c.n_flags))
            fetched += row[:1] if len(row) == c.ways else []  # the victim
            if len(row) == c.ways:
                row.pop(0)
            leader, length, k = block
            _decoded(c, cycle, decode,
                     [(encode_pflen(length), leader - 4 & mask, 0)]
                     + [(_pi(k), leader + 4 * j & mask, 0) for j in range(length)]
                     + [(NOP, leader + 4 * length & mask, 0)])  # fmt: skip
            visit_leader(block)
            row.append(block)
        for _ in range(c.update_latency + 2):
            cycle(0, take=0)
        fetched += [block for s in sets for block in resident[s]]
        rng.shuffle(fetched)
        _fetched(c, cycle, fetch, [word for leader, length, k in fetched
                                   for word in ((encode_pflen(length), leader - 4 & mask),
                                                (_pi(k), leader))])  # fmt: skip


def exact_carry_rounds(c, rng, cycle, decode, fetch):
    """Directed blocks at a carry at word bit ``b``, for every ``b`` from the index bits
    up to the word width (``b = word_bits``: the last word, its successor wraps to 0).

    *end* (``b``, lane ``l``): a block whose last PI is the word ``W`` below the carry
    (bits ``0..b-1`` all 1, bit ``b`` 0), decoded in fixed groups: the entry created
    in the first group, ``W`` in lane ``l`` of a later group (after the NOP nothing of
    the block): ``W + 1`` is compared against the stored follow (of the hit way),
    and the two differ first at bit ``b``. *jumbled* (``b``, lanes ``j < i``): a
    block across the carry, learnt with a group whose lane ``j`` holds a PI above
    the carry and lane ``i`` one below it (the other lanes the leader's successor):
    ``gt_new`` of ``i`` against ``j`` must say "below" where the words differ first
    at bit ``b`` (the case's second block in order: lane ``j`` below, ``i`` above);
    then a group of PIs below the carry in every lane, compared against the follow
    above it (each lane's ``nxt`` against the stored follow, from above). *first*
    (``b``, lane ``l`` > 0): the leader in lane 0 of a group (the entry created
    there, its follow ``first`` = the leader's word + 1, below the carry), a PI above
    the carry in lane ``l`` (between them the leader's successor): ``nxt`` against
    ``first``; the case's second block the other way round (the leader just above
    the carry, PIs below it in lanes ``1..l``: a branch back before the leader).
    Every case twice in one set (two ways, with LRU: the second goes to the other
    way; *first*'s second block in another set) with complementary bits above ``b``
    (random), and again with the two swapped, so that each way sees each bit above
    ``b`` at 0 and at 1. *near* (``k`` = 1..4, lanes ``j < i``): as *jumbled*, without
    a carry: lane ``j``'s word has bit ``k`` set, lane ``i``'s is below it with the
    same bits from ``k`` up (``gt_new``'s low nodes, where both words have a 1).
    *before* (``k``, lane ``l`` > 0): as *first*'s second block without a carry: the
    leader in lane 0, PIs 1..``2**k`` words before it in lanes ``1..l``, ``first`` and
    lane ``l``'s ``nxt`` with the same bits from ``k`` up.
    Each block is then visited at its leader, dispatched (unlocked without growing
    its follow: a follow gone below the leader by a wrong compare stays there) and
    ignored (predicted ignored), and, after 8 cases (8 sets),
    every leader is fetched: a wrong follow shows as a ``skip``/``follow`` mismatch.
    """
    wb = c.word_bits
    wmask, mask = (1 << wb) - 1, (1 << c.addr_width) - 1
    cases = [("end", b, lane) for b in range(c.index_bits, wb + 1) for lane in range(c.lanes)]
    cases += [("jumbled", b, (j, i)) for b in range(c.index_bits, wb + 1)
              for i in range(c.lanes) for j in range(i)]  # fmt: skip
    cases += [("first", b, lane) for b in range(c.index_bits, wb + 1)
              for lane in range(1, c.lanes)]  # fmt: skip
    cases += [("near", k, (j, i)) for k in range(1, min(5, wb - c.index_bits))
              for i in range(c.lanes) for j in range(i)]  # fmt: skip
    cases += [("before", k, lane) for k in range(1, min(5, wb - c.index_bits))
              for lane in range(1, c.lanes)]  # fmt: skip
    patterns = [rng.getrandbits(wb) for _ in cases]
    batch = min(8, c.sets)  # distinct lengths below the carry: distinct sets
    base = max(c.min_block, c.lanes + 1, 3)

    def decoded(groups):
        for group in groups:
            decode[:] = group
            cycle(0, take=len(group))

    def end_groups(leader, length, k, lane):
        """pflen, the entry created in the first group, the last PI in ``lane`` later."""
        flat = [(encode_pflen(length), leader - 4 & mask, 0)]
        flat += [(_pi(k), leader + 4 * j & mask, 0) for j in range(length)]
        flat.append((NOP, leader + 4 * length & mask, 0))
        final = length - lane  # flat index of the final group's first lane
        k1 = rng.randint(1, min(c.lanes - 1, final - 1)) if c.lanes > 1 else 0
        sizes, pos = [1 + k1], 1 + k1
        while pos < final:
            sizes.append(min(final - pos, rng.randint(1, c.lanes)))
            pos += sizes[-1]
        sizes.append(min(c.lanes, lane + 2))
        pos += sizes[-1]
        if pos < len(flat):
            sizes.append(len(flat) - pos)
        groups, pos = [], 0
        for size in sizes:
            groups.append(flat[pos:pos + size])
            pos += size
        return groups

    def jumbled_groups(leader, length, below, above, k, j, i, ordered, back):
        """pflen and the leader; a group with ``above`` in lane j, ``below`` in lane i
        (``ordered``: the other way round); a group of PIs ``back`` (below the carry,
        below the follow now: compared against it). The next decoded (the unlock's
        pflen, not a PI) ends the block."""
        second = [(_pi(k), leader + 4 & mask, 0)] * c.lanes  # the others: the leader's successor
        second[i if ordered else j] = (_pi(k), above << 2 & mask, 0)
        second[j if ordered else i] = (_pi(k), below << 2 & mask, 0)
        return [[(encode_pflen(length), leader - 4 & mask, 0), (_pi(k), leader, 0)],
                second[:i + 1], [(_pi(k), word << 2 & mask, 0) for word in back]]

    def in_groups(flat):
        return [flat[n:n + c.lanes] for n in range(0, len(flat), c.lanes)]

    for swap in (0, 1):
        for start in range(0, len(cases), batch):
            learnt = []
            for n, (kind, b, lanes) in enumerate(cases[start:start + batch]):
                pattern = patterns[start + n]
                below = base + n  # PIs below the carry, the leader's included
                his = [~pattern, pattern] if swap else [pattern, ~pattern]
                his = his[:1 if b >= wb - 1 else c.ways]  # no bits above b: one block
                for second, hi in enumerate(his):
                    w = (hi << (b + 1) | (1 << b) - 1) & wmask  # the last word below the carry
                    lword = w - below + 1 & wmask
                    leader, k = lword << 2 & mask, rng.randrange(c.n_flags)
                    if kind == "near":  # lane j above lane i, first different below bit b
                        lword = (hi << c.index_bits | -below % c.sets) & wmask  # (b = k, 1..4)
                        leader = lword << 2 & mask
                        region = ((lword + 4) | (2 << b) - 1) + 1 + (1 << b)  # bit b set
                        r = rng.randrange(1, 1 << b)
                        above, below_word = region + r, region + rng.randrange(r)
                        length = above - lword + 1
                        groups = jumbled_groups(leader, length, below_word & wmask, above & wmask,
                                                k, *lanes, ordered=False, back=())
                    elif kind == "before":  # the leader in lane 0, PIs before it in
                        # lanes 1..``lanes``: ``nxt`` below ``first`` with the same bits
                        # from bit b (= k, 1..4) up, where both have a 1
                        lword = (hi << c.index_bits | (-below % c.sets ^ c.sets >> 1)) & wmask
                        r = rng.randrange(1, 1 << b)  # first: bits below b r, bit b 1
                        lword = (lword >> (b + 1) << (b + 1) | 1 << b | r) - 1
                        leader, length = lword << 2 & mask, 1
                        top = lword - rng.randrange(1, r + 1)  # its nxt: below first
                        groups = [[(_pi(k), leader, 0)] + [(_pi(k), top - lanes + j << 2 & mask, 0)
                                                           for j in range(1, lanes + 1)]]
                    elif kind == "end":
                        length = below
                        groups = end_groups(leader, length, k, lanes)
                    elif kind == "first" and not second:  # the leader in lane 0, a PI
                        x = rng.randint(0, 2)  # above the carry in lane ``lanes``
                        length = below + x + 1
                        above = w + 1 + x & wmask
                        groups = [[(_pi(k), leader + 4 * min(j, 1) & mask, 0)
                                   for j in range(lanes)] + [(_pi(k), above << 2 & mask, 0)]]
                    elif kind == "first":  # the leader above the carry in lane 0, PIs
                        lword = w + 1 + n & wmask  # below it in lanes 1..``lanes``
                        leader, length = lword << 2 & mask, 1
                        top = w - rng.randint(1, 3)  # lane ``lanes``: the highest of them
                        groups = [[(_pi(k), leader, 0)] + [(_pi(k), top - lanes + j << 2 & mask, 0)
                                                           for j in range(1, lanes + 1)]]
                    else:
                        j, i = lanes
                        y = rng.randint(0, min(3, below - 3))  # above the stored follow
                        x = rng.randint(0, 2)
                        length = below + x + 1
                        back = [w - rng.randint(1, 3) for _ in range(c.lanes)]
                        groups = jumbled_groups(leader, length, w - y, w + 1 + x & wmask, k, j, i,
                                                ordered=bool(second), back=back)
                    # learnt (locked), then unlocked by its leader, dispatched (a follow
                    # that went below the leader's successor is not raised back to it),
                    # and again, ignored (predicted ignored: the entry may skip)
                    unlock = [(encode_pflen(length), leader - 4 & mask, 0), (_pi(k), leader, 1),
                              (_pi(k), leader, 0), (NOP, leader + 4 & mask, 0)]  # fmt: skip
                    decoded([g for g in groups if g] + in_groups(unlock))
                    learnt.append((leader, length, k))
            for _ in range(c.update_latency + 2):
                cycle(0, take=0)
            for leader, length, k in learnt:  # every leader fetched: skip and follow
                fetch.extend([(encode_pflen(length), leader - 4 & mask), (_pi(k), leader)])
                while len(fetch) >= c.lanes:
                    cycle(c.lanes, take=0)
            cycle(len(fetch), take=0)


def reset_passes(rng, params):
    """Step lists, each replayed from a reset (the golden model empty): the valid bits
    of sets partly filled, against the table memory's old contents.

    Reset clears the valid bits, not the memory. The first list fills every way of
    every set with a known block (learnt and unlocked: it would skip). Each later
    list starts from a reset, so the memory still holds the list before's blocks
    with their valid bits clear: first every one of them is fetched in every fetch
    lane (none may skip: a valid bit read as set hits the old entry), then the sets
    are filled again in batches of 8, in ascending order in the second list and in
    descending order in the third (new blocks, half of them with the tag the way
    held before: the update side must not hit it either), and after each batch every
    block of the batch is fetched in every lane (each must skip) while the later
    sets are still empty, and the old blocks of the sets not yet filled again (no
    skip). So a fetch lane's valid bit of one set that depends on another set's
    bit (a mutation run's survivor: fetch lane 2's valid bit of set
    29 way 1 inverted while set 57's way 0 was clear) shows, in one of the orders.
    Every block of at least ``min_block`` PIs, decoded in order after its
    ``pflen``, its leader then visited dispatched and ignored (unlocked, predicted
    ignored).
    """
    c = PredictorConfig(**params)
    sets = list(range(c.sets)) if c.sets <= MAX_SETS else rng.sample(range(c.sets), MAX_SETS)
    lists, old = [], {}
    for order in (None, sorted(sets), sorted(sets, reverse=True)):
        steps, old = _reset_pass(c, rng, params, sets, order, old)
        lists.append(steps)
    return lists


def _reset_pass(c, rng, params, sets, order, old):
    """One list of :func:`reset_passes` (``order`` None: the first, every set filled)
    from an empty golden model; the steps and the blocks each set now holds."""
    mask = (1 << c.addr_width) - 1
    golden = ProfileFlagPredictor(**{**params, "fetch_latency": 0})
    steps = []

    def cycle(f, u):
        steps.append(PredictorStep(f, u, 0, golden.step(fetch=f, update=u, squash=0)))

    def learn(block):
        leader, length, k = block
        flat = [(encode_pflen(length), leader - 4 & mask, 0)]
        flat += [(_pi(k), leader + 4 * j & mask, 0) for j in range(length)]
        flat += [(NOP, leader + 4 * length & mask, 0),
                 (encode_pflen(length), leader - 4 & mask, 0),
                 (_pi(k), leader, 1), (_pi(k), leader, 0), (NOP, leader + 4 & mask, 0)]
        for n in range(0, len(flat), c.lanes):
            cycle([], flat[n:n + c.lanes])

    def fetch_all(blocks):
        """Every block's leader in every fetch lane, after its ``pflen``."""
        for _ in range(c.update_latency + 2):
            cycle([], [])
        flat = []
        for lane in range(c.lanes):
            for leader, length, k in blocks:
                flat += [(NOP, 0)] * ((lane - 1 - len(flat)) % c.lanes)
                flat += [(encode_pflen(length), leader - 4 & mask), (_pi(k), leader)]
        for n in range(0, len(flat), c.lanes):
            cycle(flat[n:n + c.lanes], [])

    def new_blocks(s):
        tags = [rng.getrandbits(c.tag_bits) for _ in range(c.ways)]
        if s in old:  # half of them with the tag a way held before the reset
            tags = [b[0] >> 2 >> c.index_bits if rng.random() < 0.5 else t
                    for b, t in zip(old[s], tags, strict=True)]  # fmt: skip
        while len(set(tags)) < len(tags):
            tags[-1] = rng.getrandbits(c.tag_bits)
        return [((t << c.index_bits | s) << 2 & mask, rng.randint(c.min_block, c.min_block + 3),
                 rng.randrange(c.n_flags)) for t in tags]  # fmt: skip

    new = {}
    if order is None:  # the first list: every set filled
        for s in sets:
            new[s] = new_blocks(s)
            for block in new[s]:
                learn(block)
        return steps, new
    empty = list(order)
    while empty:
        fetch_all([b for s in empty for b in old[s]])  # none may skip
        done, empty = empty[:8], empty[8:]
        for s in done:
            new[s] = new_blocks(s)
            for block in new[s]:
                learn(block)
        fetch_all([b for s in done for b in new[s]])  # each skips
    return steps, new
