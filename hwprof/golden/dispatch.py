"""Golden model of the decode-stage selective-dispatch filter (Vaswani et al., sec. III-B, V).

Per cycle the decode stage looks at up to ``lanes`` instructions at the head of the
fetch queue, in program order, and for each one (paper, sec. III-B.1..B.4):

* ``setpf k`` / ``resetpf k`` set / reset profile flag ``k`` *at decode*; they use a
  decode slot but are not dispatched. ``pushpf k`` pushes flag ``k`` on the flag
  stack, ``poppf k`` pops the top into flag ``k`` (hwprof keeps the stack in the
  decode stage, ``stack_depth`` one-bit entries, so these are not dispatched
  either: our choice, not the paper's, which says so of ``setpf``/``resetpf``
  only, sec. III-B.1, and has pushpf/poppf act on the runtime stack, sec. III-A.2).
  The paper's pushpf/poppf use "the runtime stack", which has no bound: the
  hardware stack is its top, and a ``pushpf`` on a full stack or a ``poppf`` on an
  empty one is a *precise exception* (``overflow`` / ``underflow``, a lane mask):
  the instruction changes nothing, is taken and dispatched to carry the exception
  to commit, and decode stops behind it (``halted``) until the core's ``squash``.
  At commit the core traps; the handler (:class:`FlagStackSpill`, docs/isa.md)
  spills or fills through the ``pfstate`` view of the state, performs the
  instruction and returns after it; the core writes the new state with
  ``squash``/``restore``. Nothing is ever lost or overwritten.
* Later lanes see earlier lanes' flag writes ("serial order of decode"), except
  the RAW hazard of sec. III-B.3: the popped value is available only in the next
  cycle, so an instruction that reads flag ``k`` (a PI of type ``k`` or ``pushpf k``)
  after a ``poppf k`` of the same cycle stalls: decode ends before it (``stall``).
* A PI of type ``k`` is dispatched when flag ``k`` is set, otherwise dropped.
* Profile mis-fetch: a dropped PI that is a control transfer and was predicted
  taken: the fetch queue is squashed and fetch redirected to its fall-through
  ``pc + 4``; later lanes of the cycle are squashed with the queue.
* Profile-flag mis-prediction (sec. IV-A.1): a PI that the profile-flag
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

__all__ = ["DispatchConfig", "Lane", "DispatchOutputs", "DispatchFilter", "FlagStackSpill",
           "MAX_LANES", "golden_filter_params"]

MAX_LANES = 4
MAX_STACK_DEPTH = 64


def golden_filter_params(params: dict) -> dict:
    """The filter's parameters of a ``dispatch_filter`` catalog set without the RTL-only
    ``predecoded`` (where the decode happens; behaviour is the same either way)."""
    return {k: v for k, v in params.items() if k != "predecoded"}


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
    overflow: int = 0  # lane whose pushpf found the stack full (precise exception)
    underflow: int = 0  # lane whose poppf found the stack empty (precise exception)
    halted: int = 0  # (register) a stack exception waits for commit: decode takes nothing
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
        self.halted = 0

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
        out = DispatchOutputs(flags=self.flags, halted=self.halted)
        if reset:  # this cycle's outputs as usual, state cleared at the clock edge
            out = self.step(lanes, squash, restore)
            self.reset()
            return out
        if squash:
            self.unpack(restore)
            self.halted = 0
            out.ckpt = [self.pack()] * c.lanes
            return out
        lanes = list(lanes) + [Lane()] * (c.lanes - len(lanes))
        popped = set()  # flags popped earlier this cycle
        stopped = bool(self.halted)
        for i, lane in enumerate(lanes):
            if not stopped:
                stopped = self._lane(i, lane, popped, out)
            out.ckpt.append(self.pack())
        if out.overflow or out.underflow:
            self.halted = 1
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
            if self._control(i, insn.op, insn.k, popped, out):
                out.dispatch |= 1 << i  # carries the exception to commit
                return True
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

    def _control(self, i, op, k, popped, out) -> bool:
        """Perform a PCI in lane ``i``; True when it raises a stack exception."""
        c = self.config
        if op in ("setpf", "resetpf"):
            self._write_flag(k, int(op == "setpf"))
        elif op == "pushpf":
            if k < c.n_flags:
                return self._push(i, k, out)
        else:  # poppf
            popped.add(k)
            if k < c.n_flags:
                return self._pop(i, k, out)
        return False

    def _push(self, i, k, out) -> bool:
        """``pushpf k``: a full stack raises ``overflow`` and changes nothing."""
        if self.sp == self.config.stack_depth:
            out.overflow |= 1 << i
            return True
        self.stack = self.stack & ~(1 << self.sp) | self.flag(k) << self.sp
        self.sp += 1
        return False

    def _pop(self, i, k, out) -> bool:
        """``poppf k``: an empty stack raises ``underflow`` and changes nothing."""
        if self.sp == 0:
            out.underflow |= 1 << i
            return True
        self.sp -= 1
        self._write_flag(k, self.stack >> self.sp & 1)
        return False


class FlagStackSpill:
    """The software side of the flag stack: the trap handler and its spill area.

    The hardware stack holds the top ``stack_depth`` entries of the runtime flag
    stack; ``memory`` holds the rest (bottom first), as the handler's spill area
    in memory would. ``handle(state, cause, k)`` is the handler of a ``pushpf k``
    (``cause="overflow"``) or ``poppf k`` (``"underflow"``) exception: it reads the
    ``pfstate`` view (``state``, the packed ``ckpt`` layout), spills the bottom
    ``chunk`` entries to memory (overflow) or fills up to ``chunk`` entries back
    (underflow), performs the instruction and returns the new state; the core
    resumes after the instruction. A ``poppf`` with nothing left anywhere (more
    pops than pushes) resets flag ``k`` (profiling off): the handler's policy.
    ``chunk`` defaults to half the stack (at least 1).
    """

    def __init__(self, config: DispatchConfig, chunk: int | None = None):
        self.config = config
        self.chunk = chunk if chunk is not None else max(1, config.stack_depth // 2)
        _int_in("chunk", self.chunk, 1, config.stack_depth)
        self.memory: list[int] = []
        self.exceptions = 0

    def handle(self, state: int, cause: str, k: int) -> int:
        c = self.config
        model = DispatchFilter(lanes=1, n_flags=c.n_flags, stack_depth=c.stack_depth,
                               addr_width=c.addr_width)  # fmt: skip
        model.unpack(state)
        entries = [model.stack >> j & 1 for j in range(model.sp)]  # bottom first
        self.exceptions += 1
        if cause == "overflow":
            self.memory += entries[: self.chunk]
            entries = entries[self.chunk:] + [model.flag(k)]
        elif cause == "underflow":
            n = min(self.chunk, len(self.memory))
            entries = self.memory[len(self.memory) - n:]
            del self.memory[len(self.memory) - n:]
            model._write_flag(k, entries.pop() if entries else 0)
        else:
            raise ValueError(f"cause must be 'overflow' or 'underflow', not {cause!r}")
        model.stack = sum(bit << j for j, bit in enumerate(entries))
        model.sp = len(entries)
        return model.pack()
