"""Stimulus for the brr variants (used by hwprof/cocotb_tests/ and tests/; golden imports only).

* :func:`random_word`: instruction words: brr with random fields, near misses
  (a brr with one bit of its match pattern flipped), real RISC-V branches with
  the same immediate layout, and random words.
* :func:`outcome_states`: LFSR states that just meet each ``freq``'s outcome
  mask, and states one mask bit short of it (for units with a load port).
* :class:`CoreSchedule`: a small out-of-order core around the deterministic
  brr: it decodes a program of brr in order, goes down wrong paths (random
  extra brr) that are later squashed together with some correct-path brr
  (refetched afterwards), commits the oldest correct-path brr, stalls on
  ``overflow``, and records what every committed brr saw. Per cycle
  :meth:`CoreSchedule.inputs` gives the unit's inputs and
  :meth:`CoreSchedule.observe` takes its outputs (the schedule reacts to
  ``accept`` as a core would).
"""

from __future__ import annotations

import random

from hwprof.golden.brr_isa import MATCH_MASK, encode_brr, is_brr

__all__ = ["random_word", "random_packet", "outcome_states", "CoreSchedule"]

BEQ = 0b1100011


def random_word(rng: random.Random, p_brr: float = 0.3) -> int:
    """One instruction word: a brr with probability ``p_brr``, else never a brr."""
    offset = 2 * rng.randrange(-2048, 2048)
    if rng.random() < p_brr:
        return encode_brr(rng.randrange(16), offset)
    kind = rng.randrange(3)
    if kind == 0:  # near miss: flip one bit the decoder must check
        bits = [b for b in range(32) if MATCH_MASK >> b & 1]
        return encode_brr(rng.randrange(16), offset) ^ (1 << rng.choice(bits))
    if kind == 1:  # a real beq/bne with the same immediate bits
        return (encode_brr(0, offset) & ~0x7F) | BEQ | (rng.randrange(2) << 12)
    while True:  # a random word that is not a brr (1 in 2^16 would be)
        word = rng.getrandbits(32)
        if not is_brr(word):
            return word


def random_packet(rng: random.Random, lanes: int, p_brr: float) -> dict:
    """Per-lane ``insn``, ``pc``, ``valid`` lists for one fetch packet."""
    base = rng.getrandbits(30) << 2
    return {
        "insn": [random_word(rng, p_brr) for _ in range(lanes)],
        "pc": [(base + 4 * i) % (1 << 32) for i in range(lanes)],
        "valid": [int(rng.random() < 0.9) for _ in range(lanes)],
    }


def outcome_states(masks, width: int, rng: random.Random):
    """Per outcome mask: the mask itself, the mask with random other bits, and for
    each of its bits the mask with random other bits and that bit clear.

    Random states take a brr of the high frequencies (probability 2^-14..2^-16)
    almost never; loaded one by one and read with every ``freq``, these decide
    each AND term and each outcome-mux input.
    """
    full = (1 << width) - 1
    for mask in masks:
        yield mask
        yield mask | rng.getrandbits(width)
        for b in range(width):
            if mask >> b & 1:
                yield (mask | rng.getrandbits(width)) & ~(1 << b) & full


class CoreSchedule:
    """Random decode/commit/squash schedule of a core running ``program`` (a list of freqs).

    ``committed`` lists ``(program index, state seen, taken)`` in commit order.
    ``rob_walk``: squashes are given one brr per cycle (a ROB walk).
    """

    def __init__(self, rng, program, max_inflight, rob_walk=False, p_decode=0.7,
                 p_commit=0.35, p_wrong=0.08, p_squash=0.15):  # fmt: skip
        self.rng = rng
        self.program = program
        self.max_inflight = max_inflight
        self.rob_walk = rob_walk
        self.p = (p_decode, p_commit, p_wrong, p_squash)
        self.inflight: list[tuple] = []  # (index or None for wrong path, freq), oldest first
        self.next_index = 0
        self.wrong_path = False
        self.walk_left = 0  # brr still to remove in a ROB walk
        self.refetch = None  # program index to refetch from after the squash
        self.committed: list[tuple] = []
        self._seen: list[tuple] = []  # (state, taken) of each in-flight brr
        self.overflows = 0
        self.squashed = 0
        self._presented = None
        self._commit = 0
        self._squash = 0

    @property
    def done(self) -> bool:
        return len(self.committed) >= len(self.program)

    def _begin_squash(self) -> int:
        """Pick how many youngest brr a misprediction or exception squashes."""
        wrong = sum(1 for index, _ in self.inflight if index is None)
        correct = len(self.inflight) - wrong
        extra = self.rng.randrange(correct + 1) if self.rng.random() < 0.5 else 0
        return wrong + extra

    def inputs(self) -> dict:
        rng = self.rng
        p_decode, p_commit, p_wrong, p_squash = self.p
        squash = 0
        if self.walk_left:
            squash = 1
        elif self.inflight and (self.wrong_path and rng.random() < 0.3
                                or rng.random() < p_squash / 4):  # fmt: skip
            count = self._begin_squash()
            if count:
                removed = self.inflight[len(self.inflight) - count:]
                correct = [index for index, _ in removed if index is not None]
                self.refetch = min(correct) if correct else None
                if self.rob_walk:
                    self.walk_left, squash = count, 1
                else:
                    squash = count
        self._squash = squash
        # Commit the oldest correct-path brr that are not being squashed.
        keep = len(self.inflight) - (self.walk_left or squash)
        ready = 0
        while ready < keep and self.inflight[ready][0] is not None:
            ready += 1
        self._commit = rng.randrange(ready + 1) if ready and rng.random() < p_commit else 0
        # Present the next brr (in program order, or a wrong-path one).
        self._presented = None
        if rng.random() < p_decode and self.next_index < len(self.program):
            if self.wrong_path or rng.random() < p_wrong:
                self._presented = (None, rng.randrange(16))
            else:
                self._presented = (self.next_index, self.program[self.next_index])
        freq = self._presented[1] if self._presented else rng.randrange(16)
        return {"decode_valid": int(self._presented is not None), "freq": freq,
                "commit": self._commit, "squash": squash}  # fmt: skip

    def observe(self, *, accept: int, taken: int, state: int, overflow: int) -> None:
        """Apply one cycle's outputs (the values shown before the clock edge)."""
        for _ in range(self._commit):
            index, freq = self.inflight.pop(0)
            seen = self._seen.pop(0)
            self.committed.append((index, *seen))
        if self._squash:
            for _ in range(self._squash):
                self.inflight.pop()
                self._seen.pop()
                self.squashed += 1
            if self.rob_walk:
                self.walk_left -= 1
            if not self.walk_left:
                self.wrong_path = False
                if self.refetch is not None:
                    self.next_index = self.refetch
                self.refetch = None
        self.overflows += overflow
        if accept:
            index, freq = self._presented
            self.inflight.append(self._presented)
            self._seen.append((state, taken))
            if index is None:
                self.wrong_path = True
            else:
                self.next_index += 1


def lost_count_inputs(rng: random.Random, golden) -> dict:
    """Commit + squash one more brr than are in flight (each within its port)."""
    extra, most = golden.inflight + 1, golden.config.max_inflight
    if golden.config.rob_walk:  # squash is a 1-bit strobe
        commit = extra - 1
    else:
        commit = rng.randrange(max(0, extra - most), min(extra, most) + 1)
    return {"commit": commit, "squash": extra - commit, "decode_valid": rng.randrange(2)}
