"""Golden model of the decode-stage selective-dispatch filter (Vaswani et al., sec. III-B, V).

Per cycle the decode stage looks at up to ``lanes`` instructions at the head of the
fetch queue, in program order, and for each one (paper, sec. III-B.1..B.4):

* ``setpf k`` / ``resetpf k`` set / reset profile flag ``k`` *at decode*; they use a
  decode slot but are not dispatched. ``pushpf k`` pushes flag ``k`` on the flag
  stack, ``poppf k`` pops the top into flag ``k`` (hwprof keeps the stack in the
  decode stage, ``stack_depth`` one-bit entries; these are not dispatched either).
  A push on a full stack is discarded and reported on ``overflow``; a pop of an
  empty stack resets the flag (profiling off) and is reported on ``underflow``.
* Later lanes see earlier lanes' flag writes ("serial order of decode"), except
  the RAW hazard of sec. III-B.3: the popped value is available only in the next
  cycle, so an instruction that reads flag ``k`` (a PI of type ``k`` or ``pushpf k``)
  after a ``poppf k`` of the same cycle stalls: decode ends before it (``stall``).
* A PI of type ``k`` is dispatched when flag ``k`` is set, otherwise dropped.
* Profile mis-fetch: a dropped PI that is a control transfer and was predicted
  taken: the fetch queue is squashed and fetch redirected to its fall-through
  ``pc + 4``; later lanes of the cycle are squashed with the queue.
* Profile-flag mis-prediction (appendix A.1): a PI that the profile-flag
  predictor marked as the leader of a skipped block (``skipped``) but whose flag
  is on: it is dispatched, the queue squashed and fetch redirected to ``pc + 4``
  to fetch the rest of the block.
* Branch checkpoints (sec. III-B.4): ``ckpt[i]`` is the flag state (flags, stack,
  stack pointer) after lane ``i``; the core keeps it with a branch in lane ``i``
  and, on a mis-prediction squash, gives it back on ``restore`` with ``squash``.
  A squash cycle decodes nothing and loads the restored state.

Packed state (``ckpt``/``restore``): ``flags | stack << n_flags | sp << (n_flags +
stack_depth)``; stack entry ``j`` is bit ``j`` (0 = bottom); a pop leaves the popped
bit in place. Lanes must be valid as a prefix (a fetch-queue head).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .isa_profile import MAX_FLAGS, decode

__all__ = ["DispatchConfig", "Lane", "DispatchOutputs", "DispatchFilter", "MAX_LANES"]

MAX_LANES = 4
MAX_STACK_DEPTH = 64


def _int_in(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, not {value!r}")


@dataclass(frozen=True)
class DispatchConfig:
    """Parameters: decode ``lanes`` (1..4), ``n_flags`` (1..8), ``stack_depth``
    (1..64), ``addr_width`` (8..64, instruction addresses, 4-byte instructions)."""

    lanes: int = 1
    n_flags: int = 1
    stack_depth: int = 8
    addr_width: int = 32

    def __post_init__(self):
        _int_in("lanes", self.lanes, 1, MAX_LANES)
        _int_in("n_flags", self.n_flags, 1, MAX_FLAGS)
        _int_in("stack_depth", self.stack_depth, 1, MAX_STACK_DEPTH)
        _int_in("addr_width", self.addr_width, 8, 64)

    @property
    def sp_width(self) -> int:
        return self.stack_depth.bit_length()

    @property
    def ckpt_width(self) -> int:
        return self.n_flags + self.stack_depth + self.sp_width


@dataclass(frozen=True)
class Lane:
    """One fetch-queue entry offered to decode."""

    valid: int = 0
    insn: int = 0
    pc: int = 0
    pred_taken: int = 0
    skipped: int = 0


@dataclass
class DispatchOutputs:
    """Per cycle; lane sets are bit masks (bit ``i`` = lane ``i``)."""

    take: int = 0  # decoded this cycle (the fetch queue pops these)
    dispatch: int = 0  # sent on to rename/ROB
    drop: int = 0  # PIs ignored by selective dispatch
    stall: int = 0  # a poppf RAW hazard ended decode early
    redirect: int = 0  # squash the fetch queue, fetch from redirect_pc
    misfetch: int = 0  # ... because of a profile mis-fetch
    flag_mispredict: int = 0  # ... because of a profile-flag mis-prediction
    redirect_pc: int = 0
    overflow: int = 0
    underflow: int = 0
    flags: int = 0  # the flag register at the start of the cycle
    ckpt: list[int] = field(default_factory=list)


class DispatchFilter:
    """Cycle model; ``step(lanes=[Lane...], squash=0, restore=0, reset=0)``.

    ``reset`` (synchronous) clears the state at the end of the cycle; the cycle's
    outputs are computed as usual.
    """

    def __init__(self, **params):
        self.config = DispatchConfig(**params)
        self.reset()

    def reset(self) -> None:
        self.flags = 0
        self.stack = 0
        self.sp = 0

    def pack(self) -> int:
        c = self.config
        return self.flags | self.stack << c.n_flags | self.sp << (c.n_flags + c.stack_depth)

    def unpack(self, state: int) -> None:
        c = self.config
        self.flags = state & ((1 << c.n_flags) - 1)
        self.stack = state >> c.n_flags & ((1 << c.stack_depth) - 1)
        self.sp = min(state >> (c.n_flags + c.stack_depth), c.stack_depth)

    def flag(self, k: int) -> int:
        return self.flags >> k & 1 if k < self.config.n_flags else 0

    def _write_flag(self, k: int, value: int) -> None:
        if k < self.config.n_flags:
            self.flags = self.flags & ~(1 << k) | value << k

    def step(self, lanes=(), squash=0, restore=0, reset=0) -> DispatchOutputs:
        c = self.config
        out = DispatchOutputs(flags=self.flags)
        if reset:  # this cycle's outputs as usual, state cleared at the clock edge
            out = self.step(lanes, squash, restore)
            self.reset()
            return out
        if squash:
            self.unpack(restore)
            out.ckpt = [self.pack()] * c.lanes
            return out
        lanes = list(lanes) + [Lane()] * (c.lanes - len(lanes))
        popped = set()  # flags popped earlier this cycle
        stopped = False
        for i, lane in enumerate(lanes):
            if not stopped:
                stopped = self._lane(i, lane, popped, out)
            out.ckpt.append(self.pack())
        return out

    def _lane(self, i, lane, popped, out) -> bool:
        """Decode lane ``i``; return True when decode stops after (or before) it."""
        if not lane.valid:
            return True
        insn = decode(lane.insn)
        reads_flag = insn.kind == "pi" or (insn.kind == "pci" and insn.op == "pushpf")
        if reads_flag and insn.k in popped:
            out.stall = 1
            return True
        out.take |= 1 << i
        fall_through = (lane.pc + 4) & ((1 << self.config.addr_width) - 1)
        if insn.kind == "pci":
            self._control(insn.op, insn.k, popped, out)
            return False
        if insn.kind != "pi":
            out.dispatch |= 1 << i
            return False
        if self.flag(insn.k):
            out.dispatch |= 1 << i
            if lane.skipped:
                out.redirect = out.flag_mispredict = 1
                out.redirect_pc = fall_through
                return True
            return False
        out.drop |= 1 << i
        if insn.is_cti and lane.pred_taken:
            out.redirect = out.misfetch = 1
            out.redirect_pc = fall_through
            return True
        return False

    def _control(self, op, k, popped, out) -> None:
        c = self.config
        if op in ("setpf", "resetpf"):
            self._write_flag(k, int(op == "setpf"))
        elif op == "pushpf":
            if k >= c.n_flags:
                return
            if self.sp == c.stack_depth:
                out.overflow = 1
            else:
                self.stack = self.stack & ~(1 << self.sp) | self.flag(k) << self.sp
                self.sp += 1
        else:  # poppf
            popped.add(k)
            if k >= c.n_flags:
                return
            if self.sp == 0:
                out.underflow = 1
                self._write_flag(k, 0)
            else:
                self.sp -= 1
                self._write_flag(k, self.stack >> self.sp & 1)
