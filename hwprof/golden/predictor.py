"""Golden model of the profile-flag predictor (Vaswani et al., sec. III-B.2, IV, IV-A.1).

Fetch side, per fetched instruction (lanes in program order):

* **Prediction bits** (sec. III-B.2, *prediction bit based branch prediction*): one
  bit per profile flag, set/reset by *fetched* ``setpf``/``resetpf`` (speculatively;
  never restored). A PI transfer of type ``k`` whose bit is off is predicted not
  taken (``not_taken``); otherwise the ordinary branch predictor decides.
* **Lookup** (sec. IV-A): a PI whose address hits a block-descriptor entry whose
  prediction bit is 0 (predicted ignored) and whose lock bit is 0 is the leader of
  a block to skip: ``skip`` with the entry's block ``follow`` address, but only for
  blocks of at least ``min_block`` instructions (``follow - leader >= 4 *
  min_block``; sec. VII-C: skipping pays from 4). Fetch then continues at
  ``follow``; the leader itself still goes to the fetch queue, marked skipped.

Decode side, per decoded instruction (``update`` lanes, in order):

* The **leader address register** holds the leader's address and its profile
  type. An instruction that is not a PI (ordinary or PCI) clears it; a PI that
  finds it clear, *or holding another profile type*, becomes the leader. So a
  profile block is a run of PIs of one type: all of them see the same flag (only
  a PCI, which ends the block, changes a flag), and the leader's flag, checked at
  decode (sec. IV-A.1), stands for the whole block. The paper studies one type
  at a time (sec. V); with several, a block of types off/on/off led by an "off"
  PI would otherwise be skipped whole, "on" PI included.
* For every PI, the table is indexed with the leader address. No entry: create
  one only if the flag is off (tag, ``follow = leader + 4``, prediction 0, lock 1).
  Entry found: while locked, an *ignored* PI (flag off) sets ``follow := pc + 4``
  if that is larger (an ignored PI never transfers control, so ``[leader,
  follow)`` is exactly the static run of PIs; a dispatched PI branch could jump
  over ordinary instructions); the lock is cleared when ``pc`` is the leader
  itself (the leader is seen again, so the whole block has been seen once); the
  prediction bit := the flag.
* Leaders must be 4-byte aligned: on a core with 2-byte instructions a PI at
  ``4n + 2`` is never looked up and never gets an entry (its block is fetched and
  filtered as usual), so word-address tags and follows are never ambiguous.
* Table: ``sets`` x ``ways`` (``ways`` 1 or 2), index = word address bits, tag = the
  rest; a new entry goes to an invalid way, else to the least recently updated one
  (one LRU bit per set).
* One table row is written per cycle: the updates of a decode group that belong
  to the first leader of the group are applied; PIs of a second profile block in
  the same group only move the leader register (hwprof's choice: one
  read-modify-write port).
* ``squash`` (branch mis-prediction) clears the leader register.
* Option ``length_check`` (sec. IV-A.2): the compiler puts ``pflen n``
  (:func:`hwprof.golden.isa_profile.encode_pflen`) right before every profile
  block. Fetch skips only when the instruction fetched just before the leader is
  a ``pflen`` whose length equals the entry's ``follow - leader``; at decode, a
  leader found in the table whose entry length differs from the preceding
  ``pflen`` has a stale entry: it is reset (``follow = leader + 4``, locked) and
  learnt again.
* Mis-prediction recovery (sec. IV-A.1) is the decode filter's job
  (:mod:`hwprof.golden.dispatch`, ``skipped`` lanes); the update of the leader then
  sets the entry's prediction bit to 1.

Addresses are byte addresses of 4-byte instructions, modulo ``2**addr_width``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .dispatch import MAX_LANES, _int_in
from .isa_profile import MAX_FLAGS, decode, decode_pflen

__all__ = ["PredictorConfig", "Entry", "FetchOut", "PredictorOutputs", "ProfileFlagPredictor"]


@dataclass(frozen=True)
class PredictorConfig:
    """``lanes`` 1..4, ``n_flags`` 1..8, ``sets`` a power of two 1..1024, ``ways`` 1..2,
    ``min_block`` 1..64 instructions, ``addr_width`` 8..64, ``length_check``
    (sec. IV-A.2, off by default)."""

    lanes: int = 4
    n_flags: int = 1
    sets: int = 64
    ways: int = 2
    min_block: int = 4
    addr_width: int = 32
    length_check: bool = False
    #: cycles between a decode group and its table write: 0 (the paper's
    #: behaviour: the row is written at the end of the decode cycle), 1, 2 or 3 (the
    #: RTL pipelined for timing: the row updates of the group decoded in cycle c are
    #: applied at the end of cycle c + update_latency, so the fetches of the cycles
    #: in between still see the old row). The leader register is not delayed.
    update_latency: int = 0
    #: cycles between a fetch and its ``skip``/``follow``/``not_taken`` outputs in
    #: :meth:`ProfileFlagPredictor.step`: 0 (combinational) or 1 (registered: the
    #: lookup is that of the fetch cycle, delivered a cycle later).
    fetch_latency: int = 0

    def __post_init__(self):
        if not isinstance(self.length_check, bool):
            raise TypeError(f"length_check must be a bool, not {self.length_check!r}")
        _int_in("lanes", self.lanes, 1, MAX_LANES)
        _int_in("n_flags", self.n_flags, 1, MAX_FLAGS)
        _int_in("sets", self.sets, 1, 1024)
        if self.sets & (self.sets - 1):
            raise ValueError(f"sets must be a power of two, not {self.sets!r}")
        _int_in("ways", self.ways, 1, 2)
        _int_in("min_block", self.min_block, 1, 64)
        _int_in("addr_width", self.addr_width, 8, 64)
        _int_in("update_latency", self.update_latency, 0, 3)
        _int_in("fetch_latency", self.fetch_latency, 0, 1)
        if self.addr_width - 2 - self.index_bits < 1:
            raise ValueError(
                f"addr_width {self.addr_width} leaves no tag bits for {self.sets} sets")

    @property
    def index_bits(self) -> int:
        return (self.sets - 1).bit_length()

    @property
    def word_bits(self) -> int:
        return self.addr_width - 2

    @property
    def tag_bits(self) -> int:
        return self.word_bits - self.index_bits

    @property
    def entry_bits(self) -> int:
        """Tag, follow (word address), prediction bit, lock bit (in the memory)."""
        return self.tag_bits + self.word_bits + 2

    @property
    def memory_bits(self) -> int:
        return self.sets * self.ways * self.entry_bits

    @property
    def flop_bits(self) -> int:
        """Valid bits and LRU bits (flops, so that reset clears them)."""
        return self.sets * self.ways + (self.sets if self.ways == 2 else 0)


@dataclass
class Entry:
    """One way of a predictor set: valid, tag, follow (word address), pred, lock."""

    valid: int = 0
    tag: int = 0
    follow: int = 0  # word address
    pred: int = 0
    lock: int = 0


@dataclass
class FetchOut:
    skip: int = 0
    follow: int = 0  # byte address
    not_taken: int = 0


@dataclass
class PredictorOutputs:
    """Per cycle; lane sets are bit masks."""

    skip: int = 0
    not_taken: int = 0
    follow: list[int] = field(default_factory=list)  # per fetch lane, 0 unless skip
    bits: int = 0  # prediction bits at the start of the cycle


class ProfileFlagPredictor:
    """Cycle model: ``step(fetch=[(insn, pc)...], update=[(insn, pc, flag)...], squash=0)``.

    ``fetch`` are the instructions fetched this cycle, ``update`` those decoded
    this cycle with the flag value each saw (dispatched PI: 1, dropped: 0).
    For the front-end model, ``begin()``, ``fetch_lane()`` and ``end()`` do the
    same one fetch lane at a time.
    """

    def __init__(self, **params):
        self.config = PredictorConfig(**params)
        c = self.config
        self.table = [[Entry() for _ in range(c.ways)] for _ in range(c.sets)]
        self.mru = [0] * c.sets
        self.bits = 0
        self.leader = 0
        self.leader_valid = 0
        self.leader_k = 0  # profile type of the leader
        self._bits = 0
        self.fetch_declared = None  # pflen length of the last fetched instruction
        self.decode_declared = None  # ... of the last decoded instruction
        self._fetch_declared = None
        # row updates of the last update_latency decode groups, oldest first (one list
        # per cycle, empty for a cycle that updated nothing or squashed)
        self._pending = [[] for _ in range(self.config.update_latency)]
        self._delayed = None  # outputs of the last cycle (fetch_latency=1)

    # ---------------------------------------------------------------- address
    def split(self, pc: int) -> tuple[int, int, int]:
        """``pc``'s word address (in the table's range), set index and tag."""
        c = self.config
        word = pc >> 2 & ((1 << c.word_bits) - 1)
        return word, word & (c.sets - 1), word >> c.index_bits

    def find(self, index: int, tag: int) -> int | None:
        """The way of set ``index`` holding a valid entry of ``tag``, or None."""
        for way, entry in enumerate(self.table[index]):
            if entry.valid and entry.tag == tag:
                return way
        return None

    # ------------------------------------------------------------------ fetch
    def begin(self) -> None:
        self._bits = self.bits
        self._fetch_declared = self.fetch_declared

    def fetch_lane(self, insn: int, pc: int) -> FetchOut:
        c = self.config
        d = decode(insn)
        out = FetchOut()
        declared, self._fetch_declared = self._fetch_declared, decode_pflen(insn)
        bit = self._bits >> d.k & 1 if d.k < c.n_flags else 0
        if d.is_cti and not bit:
            out.not_taken = 1
        if d.kind == "pci" and d.op in ("setpf", "resetpf") and d.k < c.n_flags:
            self._bits = self._bits & ~(1 << d.k) | int(d.op == "setpf") << d.k
        if d.is_pi and self._aligned(pc):
            word, index, tag = self.split(pc)
            way = self.find(index, tag)
            if way is not None:
                entry = self.table[index][way]
                length = (entry.follow - word) & ((1 << c.word_bits) - 1)
                checked = not c.length_check or declared == length
                if not entry.pred and not entry.lock and length >= c.min_block and checked:
                    out.skip = 1
                    out.follow = entry.follow << 2
        return out

    # ----------------------------------------------------------------- update
    def end(self, update=(), squash=0) -> None:
        self.bits = self._bits
        self.fetch_declared = self._fetch_declared
        # update_latency=L > 0: the row updates of the group decoded L cycles ago are
        # applied now, squash or not (they were decoded before it), before this
        # group's; this group's wait in the queue for L cycles.
        group = []
        if self.config.update_latency:
            for args in self._pending.pop(0):
                self._update(*args)
            self._pending.append(group)
        if squash:
            self.leader_valid = 0
            self.decode_declared = None
            return
        row_leader = None
        for insn, pc, flag in update:
            declared, self.decode_declared = self.decode_declared, decode_pflen(insn)
            d = decode(insn)
            if self._clears_leader(d):
                self.leader_valid = 0
                continue
            if self._new_leader(d):
                self.leader, self.leader_valid, self.leader_k = pc, 1, d.k
            if row_leader is None:
                row_leader = self.leader
            if self.leader == row_leader:
                if self.config.update_latency:
                    group.append((pc, self.leader, flag, declared))
                else:
                    self._update(pc, self.leader, flag, declared)

    @staticmethod
    def _aligned(pc: int) -> bool:
        """Leaders are 4-byte aligned (word-address tags and follows)."""
        return pc & 3 == 0

    def _new_leader(self, d) -> bool:
        """A PI leads a block when the register is clear or holds another type."""
        return not self.leader_valid or d.k != self.leader_k

    @staticmethod
    def _clears_leader(d) -> bool:
        """Any instruction but a PI ends the block (sec. IV-A; PCIs included)."""
        return not d.is_pi

    @staticmethod
    def _grows(entry, word: int, flag: int) -> bool:
        """``follow := word + 1`` only while locked, from an ignored PI, if larger."""
        return bool(entry.lock) and not flag and word > entry.follow

    def _update(self, pc: int, leader: int, flag: int, declared=None) -> None:
        c = self.config
        if not self._aligned(leader):
            return
        mask = (1 << c.word_bits) - 1
        word = pc >> 2 & mask
        lword, index, tag = self.split(leader)
        way = self.find(index, tag)
        if way is None:
            if flag:
                return
            row = self.table[index]
            invalid = [w for w in range(c.ways) if not row[w].valid]
            way = invalid[0] if invalid else (1 - self.mru[index] if c.ways == 2 else 0)
            row[way] = Entry(1, tag, (lword + 1) & mask, 0, 1)
            self.mru[index] = way
            return
        entry = self.table[index][way]
        if self._grows(entry, (word + 1) & mask, flag):
            entry.follow = (word + 1) & mask
        if word == lword:
            stale = (c.length_check and declared is not None
                     and (entry.follow - lword) & mask != declared)  # fmt: skip
            if stale:  # sec. IV-A.2: learn the block again
                entry.follow, entry.lock = (lword + 1) & mask, 1
            else:
                entry.lock = 0
        entry.pred = flag
        self.mru[index] = way

    def step(self, fetch=(), update=(), squash=0) -> PredictorOutputs:
        out = PredictorOutputs(bits=self.bits)
        self.begin()
        for i, (insn, pc) in enumerate(fetch):
            lane = self.fetch_lane(insn, pc)
            out.skip |= lane.skip << i
            out.not_taken |= lane.not_taken << i
            out.follow.append(lane.follow)
        out.follow += [0] * (self.config.lanes - len(out.follow))
        self.end(update, squash)
        if self.config.fetch_latency:  # the lookup of the last cycle (none in the first)
            lookup, self._delayed = self._delayed, out
            if lookup is None:
                lookup = PredictorOutputs(follow=[0] * self.config.lanes)
            return PredictorOutputs(lookup.skip, lookup.not_taken, lookup.follow, out.bits)
        return out
