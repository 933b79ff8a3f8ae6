"""Table-wide stimulus for the profile-flag predictor (the Amaranth and cocotb checks).

The front-end programs live at one small address range (base 0x1000, upper
address bits 0), fill a set's two ways rarely and walk every profile block in
program order. Here the golden predictor alone is driven with blocks in every
set, ``ways + 2`` of them per set with random full-width tags (so both ways of a
set are valid, then one is evicted, and the tag bits of the full width are 0 and
1), a block at the top of the address space (its follow wraps), lengths around
``min_block``, and, on some visits, the block's PIs out of program order (a PI
branch back or forward inside the block: the follow compares between lanes).
Decode groups of random width run in parallel with fetches of the leaders, and
after each round every leader is fetched (a sweep), so that every entry the
table holds is read out through ``skip``/``follow``.
"""

from __future__ import annotations

from hwprof.golden.frontend import PredictorStep
from hwprof.golden.isa_profile import NOP, Insn, encode, encode_pflen
from hwprof.golden.predictor import PredictorConfig, ProfileFlagPredictor

__all__ = ["table_steps"]

#: sets visited at most (all of them at the default 64)
MAX_SETS = 64


def _pi(k, op="lw"):
    return encode(Insn("pi", op, k, rd=5, rs1=5))


def table_steps(rng, params, squash_rate=0.01):
    """Golden steps (``fetch_latency`` 0: the cocotb replay shifts them itself).

    Rounds: fill (every set's first ``ways`` blocks, each visited twice with its
    flag off: created locked, then unlocked by its leader), evict (each set's
    block ``ways``, twice), predicted (a block per set visited with the flag on,
    then off again), jumbled (each set's last block, new, visited once with its
    PIs in random order, then in order). Each round ends with a sweep that
    fetches every leader.
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
            tags.add(rng.getrandbits(c.tag_bits))
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

    def cycle(lanes_fetched=None):
        while len(fetch) < c.lanes:
            fetch.extend(fetch_words(rng.choice(leaders)) if rng.random() < 0.8
                         else other_fetch())  # fmt: skip
        n = rng.randint(0, c.lanes) if lanes_fetched is None else lanes_fetched
        f, fetch[:] = fetch[:n], fetch[n:]
        take = min(len(decode), rng.choice((c.lanes, c.lanes, rng.randint(1, c.lanes))))
        u, decode[:] = decode[:take], decode[take:]
        squash = int(rng.random() < squash_rate)
        steps.append(PredictorStep(f, u, squash, golden.step(fetch=f, update=u, squash=squash)))

    def visit(block, flag, jumbled=False):
        leader, length, k = block
        order = list(range(length))
        if jumbled and length > 2:  # the leader, then its PIs with jumps back and forth
            order = [0] + [rng.randrange(1, length) for _ in range(length + 2)]
        decode.append((encode_pflen(length), leader - 4 & mask, 0))
        decode.extend((_pi(k), leader + 4 * j & mask, flag) for j in order)
        decode.append((NOP, leader + 4 * length & mask, 0))

    def run():
        while decode:
            cycle()
        for _ in range(c.update_latency + 2):
            cycle()
        fetch.clear()
        for block in leaders:  # the sweep
            fetch.extend(fetch_words(block))
            if len(fetch) >= c.lanes:
                cycle(c.lanes)
        cycle(len(fetch))

    for row in blocks:  # fill
        for block in row[:c.ways]:
            visit(block, 0, jumbled=rng.random() < 0.3)
            visit(block, 0)
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
    for row in blocks:  # jumbled: a new block evicts one and is learnt out of order
        block = row[-1]
        visit(block, 0, jumbled=True)
        visit(block, 0)
    run()
    return steps
