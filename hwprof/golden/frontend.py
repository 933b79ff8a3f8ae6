"""Golden front-end pipeline model: fetch -> fetch queue -> decode/selective dispatch.

The model is driven by a :class:`Program`: instruction words at addresses, the
target and taken probability of every control transfer, and a branch
mis-prediction rate. It answers, cycle by cycle, what was fetched, dispatched,
dropped, squashed and where fetch was redirected (:class:`CycleRecord`), and
it records the decode-stage filter's inputs and outputs, which the RTL
``dispatch_filter`` must reproduce (hwprof/cocotb_tests/test_dispatch_filter.py).

Pipeline (paper sec. III-B, Table I for the shape):

* **Oracle.** The architectural execution of the program along the correct path:
  flags and flag stack as in :mod:`hwprof.golden.dispatch`, branch directions
  drawn from a seeded generator (a dropped PI branch falls through).
* **Fetch.** Up to ``lanes`` sequential instructions per cycle into the fetch
  queue (``queue_size`` entries), stopping after a predicted-taken transfer.
  Direction prediction: on the correct path the true direction, flipped with
  probability ``mispredict_rate``; on a wrong path a fair coin. (For a PI branch
  the "true direction" is the direction it would take if executed: the branch
  predictor does not know the flag.) Fetch leaves the correct path when it follows
  a prediction that disagrees with the oracle.
* **Decode.** :class:`hwprof.golden.dispatch.DispatchFilter` on the queue head.
  Its redirects (profile mis-fetch, profile-flag mis-prediction) flush the queue
  and restart fetch at the fall-through the next cycle.
* **Resolution.** A dispatched, correct-path control transfer whose fetched
  successor was wrong resolves ``resolve_latency`` cycles after dispatch: the
  queue is flushed, the filter gets ``squash`` with the branch's checkpoint, and
  fetch restarts on the correct path the next cycle.
* **Flag-stack exceptions.** A ``pushpf``/``poppf`` that overflows/underflows the
  hardware stack is dispatched with its exception and decode halts behind it; it
  commits ``resolve_latency`` cycles later (unless an older branch squashes it
  first): the trap handler (:class:`~hwprof.golden.dispatch.FlagStackSpill`)
  spills or fills, performs the instruction, and the new state is written with
  ``squash``/``restore``; decode resumes with the next instruction, which is
  still in the fetch queue (the model keeps the queue instead of refetching the
  same words after the handler returns: the handler's own instructions and the
  refetch are not timed). The oracle runs the same handler, so the architecture
  has an unbounded flag stack.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from .dispatch import DispatchFilter, FlagStackSpill, Lane
from .isa_profile import MAX_FLAGS, NOP, Insn, decode, decode_pflen, encode, encode_pflen
from .predictor import PredictorOutputs, ProfileFlagPredictor

__all__ = [
    "Program", "FrontEnd", "CycleRecord", "FilterStep", "BRANCH", "basic_block_program",
    "fig3_basic_block", "fig4_call_graph", "nested_push_pop", "overflow_program",
    "directed_programs", "stale_block_patches", "mixed_type_program", "recursion_program",
    "off_on_off_program",
]

BRANCH = 0x00000063  # an ordinary conditional branch word (beq x0, x0, 0)


@dataclass
class Program:
    """Instruction words by address, transfer targets and taken probabilities.

    ``words[pc]``; ``targets[pc]`` for every control transfer (ordinary ones are
    the addresses listed here; PI branches are recognised by decode and must be
    listed too); ``taken[pc]`` the probability it is taken when executed.
    """

    words: dict[int, int]
    targets: dict[int, int] = field(default_factory=dict)
    taken: dict[int, float] = field(default_factory=dict)
    entry: int = 0

    def word(self, pc: int) -> int:
        return self.words.get(pc, NOP)


@dataclass
class FilterStep:
    """One cycle of the decode-stage filter: its inputs and the golden outputs."""

    lanes: list[Lane]
    squash: int
    restore: int
    out: object  # DispatchOutputs


@dataclass
class CycleRecord:
    fetched: list[int] = field(default_factory=list)  # pcs
    dispatched: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    squashed: int = 0  # fetch-queue entries flushed
    redirect: int | None = None  # next fetch pc after a redirect or squash
    cause: str = ""  # "misfetch", "flag_mispredict" or "branch"


@dataclass
class _Entry:
    pc: int
    word: int
    pred_taken: int
    on_path: bool
    wrong_next: bool  # on the correct path, but fetch continued at the wrong successor
    next_pc: int  # the correct successor (on the correct path only)
    skipped: int = 0  # the profile-flag predictor skipped the block this PI leads


@dataclass
class PredictorStep:
    """One cycle of the profile-flag predictor: its inputs and the golden outputs."""

    fetch: list[tuple[int, int]]  # (insn, pc) of the fetched lanes
    update: list[tuple[int, int, int]]  # (insn, pc, flag) of the decoded lanes
    squash: int
    out: object  # PredictorOutputs


class _Oracle:
    def __init__(self, program: Program, params: dict, rng: random.Random):
        self.program = program
        self.state = DispatchFilter(**params)
        self.spill = FlagStackSpill(self.state.config)
        self.rng = rng
        self.pc = program.entry
        self.retired = 0
        self.log: list[tuple[int, bool]] = []  # (pc, dispatched) in program order
        #: direction of every executed control transfer, per address, in order
        #: (the branch outcomes an independent reference replays)
        self.outcomes: dict[int, list[int]] = {}

    def execute(self) -> tuple[int, int, bool]:
        """Execute the instruction at ``pc``: ``(pc, direction, executed_transfer)``."""
        pc = self.pc
        word = self.program.word(pc)
        out = self.state.step([Lane(1, word, pc)])
        if out.overflow or out.underflow:  # the trap handler, at once
            cause = "overflow" if out.overflow else "underflow"
            new = self.spill.handle(out.ckpt[0], cause, decode(word).k)
            self.state.step(squash=1, restore=new)
        direction = 0
        if pc in self.program.targets:
            direction = int(self.rng.random() < self.program.taken.get(pc, 1.0))
        transfer = bool(out.dispatch) and pc in self.program.targets
        if transfer:
            self.outcomes.setdefault(pc, []).append(direction)
        self.pc = self.program.targets[pc] if transfer and direction else pc + 4
        self.retired += 1
        self.log.append((pc, bool(out.dispatch)))
        return pc, direction, transfer

    def skip_to(self, follow: int) -> tuple[int, int]:
        """Fetch skipped ``pc .. follow``: ``(profile instructions, genuine ones)`` skipped.

        A skipped instruction is *genuine* when the architecture would have
        executed it (not a PI, or a PI whose flag is on): a stale block (IV-A.2).
        """
        pis = genuine = 0
        for pc in range(self.pc, follow, 4):
            d = decode(self.program.word(pc))
            pis += d.is_pi
            genuine += not d.is_pi or bool(self.state.flag(d.k))
        self.retired += (follow - self.pc) // 4  # program instructions passed over
        self.pc = follow
        return pis, genuine


class FrontEnd:
    """Cycle model. ``run(instructions)`` until that many correct-path instructions.

    Parameters: those of :class:`~hwprof.golden.dispatch.DispatchConfig` plus
    ``queue_size`` (fetch queue entries), ``resolve_latency`` (dispatch to branch
    resolution, cycles), ``mispredict_rate``, ``seed``, and ``predictor``: None (no
    profile-flag predictor) or a dict of :class:`~hwprof.golden.predictor.
    PredictorConfig` parameters (``{}`` for the defaults) to fetch with one;
    ``predictor_model``: the predictor's class (None: :class:`~hwprof.golden.predictor.
    ProfileFlagPredictor`, looked up when the front end is made, so that a test can
    patch it) or a subclass (a what-if, e.g. bench/bench_same_set_hazards.py).
    """

    def __init__(self, program: Program, *, lanes=1, n_flags=1, stack_depth=8, addr_width=32,
                 queue_size=8, resolve_latency=3, mispredict_rate=0.05, seed=0,
                 predictor=None, predictor_model=None):
        params = dict(lanes=lanes, n_flags=n_flags, stack_depth=stack_depth,
                      addr_width=addr_width)  # fmt: skip
        self.filter = DispatchFilter(**params)
        self.spill = FlagStackSpill(self.filter.config)  # the core's trap handler
        self.lanes = lanes
        self.queue_size = queue_size
        self.resolve_latency = resolve_latency
        self.mispredict_rate = mispredict_rate
        self.program = program
        self.rng = random.Random(seed)
        self.oracle = _Oracle(program, params, random.Random(seed + 1))
        self.queue: deque[_Entry] = deque()
        self.fetch_pc = program.entry
        self.last_fetch_pc = None  # address of the last word fetched
        self.on_path = True
        #: (resolve cycle, ckpt, next pc, trap): a mispredicted branch, or a flag-stack
        #: exception (trap = (cause, k)) reaching commit
        self.inflight: deque[tuple[int, int, int, tuple | None]] = deque()
        self.cycle = 0
        self.trace: list[FilterStep] = []
        self.predictor = None
        self.predictor_trace: list[PredictorStep] = []
        if predictor is not None:
            model = predictor_model or ProfileFlagPredictor
            self.predictor = model(lanes=lanes, n_flags=n_flags, addr_width=addr_width,
                                   **predictor)  # fmt: skip
        self._fetch_log: list[tuple[int, int]] = []
        self._lookups: list = []
        self.records: list[CycleRecord] = []
        #: (pc, dispatched) of every correct-path instruction decoded, in order; it
        #: must equal the oracle's log (a pipelined filter changes nothing architectural).
        self.path_log: list[tuple[int, bool]] = []
        self.counts = {"fetched": 0, "pi_fetched": 0, "decoded": 0, "pi_decoded": 0,
                       "dispatched": 0, "pi_dispatched": 0, "dropped": 0, "squashed": 0,
                       "misfetch": 0, "flag_mispredict": 0, "branch_mispredict": 0,
                       "skips": 0, "skipped": 0, "pi_skipped": 0, "genuine_skipped": 0,
                       "path_pi": 0, "pf_exception": 0,
                       # flag-stack faults dispatched on the correct and on a wrong path,
                       # and those a branch squash discarded before they trapped
                       "pf_fault_on_path": 0, "pf_fault_wrong_path": 0,
                       "pf_fault_discarded": 0}  # fmt: skip

    def faults_in_flight(self) -> int:
        """Flag-stack faults dispatched that have neither trapped nor been squashed."""
        return sum(trap is not None for *_, trap in self.inflight)

    # ------------------------------------------------------------------ fetch
    def _fetch(self, rec: CycleRecord) -> None:
        for _ in range(self.lanes):
            if len(self.queue) >= self.queue_size:
                return
            pc = self.fetch_pc
            word = self.program.word(pc)
            transfer = pc in self.program.targets
            lookup = None
            if self.predictor is not None:
                lookup = self.predictor.fetch_lane(word, pc)
                self._fetch_log.append((word, pc))
                self._lookups.append(lookup)
            if self.on_path:
                _, direction, _ = self.oracle.execute()
                pred = direction ^ int(transfer and self.rng.random() < self.mispredict_rate)
                next_pc = self.oracle.pc
                self.counts["path_pi"] += decode(word).is_pi
            else:
                pred, next_pc = int(self.rng.random() < 0.5), 0
            pred &= int(transfer)
            skip = bool(lookup and lookup.skip)
            pred = self._predict(pred, lookup)
            fetched_next = lookup.follow if skip else self.program.targets[pc] if pred else pc + 4
            if skip:
                self.counts["skips"] += 1
                leader_dropped = self.on_path and not self.oracle.log[-1][1]
                if leader_dropped and next_pc == pc + 4:
                    # a correct skip: the oracle walks over the block
                    pis, genuine = self.oracle.skip_to(fetched_next)
                    next_pc = fetched_next
                    self.counts["skipped"] += (fetched_next - pc - 4) // 4
                    self.counts["pi_skipped"] += pis
                    self.counts["path_pi"] += pis
                    self.counts["genuine_skipped"] += genuine
            wrong = self.on_path and fetched_next != next_pc
            self.queue.append(_Entry(pc, word, pred, self.on_path, wrong, next_pc, int(skip)))
            rec.fetched.append(pc)
            self.counts["fetched"] += 1
            self.counts["pi_fetched"] += decode(word).is_pi
            self.on_path = self.on_path and not wrong
            self.fetch_pc = fetched_next
            self.last_fetch_pc = pc
            if pred or skip:
                return

    @staticmethod
    def _predict(pred: int, lookup) -> int:
        """The branch prediction of a fetched lane after the profile-flag predictor.

        Prediction-bit rule (sec. III-B.2): a PI transfer whose bit is off is
        predicted not taken; a skip overrides branch prediction when the leader is
        a control transfer (sec. IV-A): fetch goes to the block follow.
        """
        if lookup and (lookup.not_taken or lookup.skip):
            return 0
        return pred

    # ----------------------------------------------------------------- cycle
    def step(self) -> CycleRecord:
        rec = CycleRecord()
        squash, restore, squash_pc, trap = 0, 0, 0, None
        if self.inflight and self.inflight[0][0] == self.cycle:
            _, restore, squash_pc, trap = self.inflight.popleft()
            squash = 1
            if trap is not None:  # the handler runs at commit; pfstate written back
                restore = self.spill.handle(restore, *trap)
        head = list(self.queue)[: self.lanes]
        lanes = [Lane(1, e.word, e.pc, e.pred_taken, e.skipped) for e in head]
        out = self.filter.step(lanes, squash=squash, restore=restore)
        self.trace.append(FilterStep(lanes, squash, restore, out))
        redirect = None
        update = []
        if trap is not None:  # decode resumes after the instruction, queue kept
            rec.cause = "pf_exception"
            self.counts["pf_exception"] += 1
        elif squash:
            self.counts["pf_fault_discarded"] += self.faults_in_flight()
            self.inflight.clear()
            redirect, rec.cause, self.on_path = squash_pc, "branch", True
            self.counts["branch_mispredict"] += 1
        else:
            last = out.take.bit_length() - 1  # the redirecting lane, if any
            for i, e in enumerate(head):
                if not out.take >> i & 1:
                    continue
                self.queue.popleft()
                update.append((e.word, e.pc, out.dispatch >> i & 1))
                is_pi = decode(e.word).is_pi
                if e.on_path:
                    self.path_log.append((e.pc, bool(out.dispatch >> i & 1)))
                self.counts["decoded"] += 1
                self.counts["pi_decoded"] += is_pi
                if out.dispatch >> i & 1:
                    rec.dispatched.append(e.pc)
                    self.counts["dispatched"] += 1
                    self.counts["pi_dispatched"] += is_pi
                    # A flag mis-prediction redirect makes pc + 4 the leader's
                    # predicted successor; the branch unit checks that one.
                    wrong = e.wrong_next
                    if out.redirect and i == last:
                        wrong = e.on_path and out.redirect_pc != e.next_pc
                    if wrong and e.pc in self.program.targets:
                        self.inflight.append(
                            (self.cycle + self.resolve_latency, out.ckpt[i], e.next_pc, None))
                    if (out.overflow | out.underflow) >> i & 1:
                        cause = "overflow" if out.overflow >> i & 1 else "underflow"
                        self.counts["pf_fault_on_path" if e.on_path else
                                    "pf_fault_wrong_path"] += 1  # fmt: skip
                        self.inflight.append((self.cycle + self.resolve_latency, out.ckpt[i],
                                              0, (cause, decode(e.word).k)))  # fmt: skip
                if out.drop >> i & 1:
                    rec.dropped.append(e.pc)
                    self.counts["dropped"] += 1
                if out.redirect and i == last:
                    redirect = out.redirect_pc
                    rec.cause = "misfetch" if out.misfetch else "flag_mispredict"
                    self.counts[rec.cause] += 1
                    self.on_path = e.on_path and redirect == e.next_pc
        if self.predictor is not None:
            self.predictor.begin()
            self._fetch_log, self._lookups = [], []
        if redirect is not None:
            rec.squashed = len(self.queue)
            self.counts["squashed"] += rec.squashed
            self.queue.clear()
            rec.redirect = self.fetch_pc = redirect
        else:
            self._fetch(rec)
        if self.predictor is not None:
            bits = self.predictor.bits
            self.predictor.end(update, squash)
            self.predictor_trace.append(PredictorStep(
                self._fetch_log, update, squash, self._predictor_outputs(bits)))
        self.records.append(rec)
        self.cycle += 1
        return rec

    def _predictor_outputs(self, bits):
        # The lookups of this cycle used the table as it was before end().
        out = PredictorOutputs(bits=bits)
        out.follow = [0] * self.lanes
        for i, lookup in enumerate(self._lookups):
            out.skip |= lookup.skip << i
            out.not_taken |= lookup.not_taken << i
            out.follow[i] = lookup.follow
        return out

    def run(self, instructions: int, max_cycles: int | None = None, patches=()) -> None:
        """Step until ``instructions`` correct-path instructions were fetched or skipped.

        ``patches``: ``(count, address, word)``: once ``count`` correct-path
        instructions were fetched, the program word at ``address`` changes (the
        runtime patching code, sec. III-C). The patching code runs elsewhere in the
        program and synchronizes the instruction stream afterwards, so a patch waits
        while a word it changes is in flight: in the fetch queue or the last
        word fetched (whose ``pflen`` the predictor still holds for the next lookup).
        Applying it then would let fetch pair a stale hint with the patched block.
        Patches due at the same time are applied together.
        """
        limit = max_cycles or 20 * instructions + 100
        pending = sorted(patches)
        while self.oracle.retired < instructions and self.cycle < limit:
            due = [p for p in pending if p[0] <= self.oracle.retired]
            in_flight = {e.pc for e in self.queue} | {self.last_fetch_pc}
            if due and not any(address in in_flight for _, address, _ in due):
                for patch in due:  # all words due change together
                    _, address, word = patch
                    self.program.words[address] = word
                    pending.remove(patch)
            self.step()


def _pi(op, k, **fields) -> int:
    return encode(Insn("pi", op, k, **fields))


def _pci(op, k) -> int:
    return encode(Insn("pci", op, k=k))


def basic_block_program(rng: random.Random, *, blocks=32, n_flags=1, pi_branch_rate=0.1,
                        push_rate=0.3, toggle_rate=0.3, base=0x1000, pflen=False) -> Program:
    """A random loop of basic blocks with basic-block instrumentation (paper Fig. 3).

    Each block: optionally ``pushpf k; setpf|resetpf k`` (scope) or a bare
    ``setpf|resetpf k`` (toggle); a profile block of 1..8 PIs of type ``k`` (lw/b,
    addi/b, sw/b, lui/b; sometimes a ``beq/b`` over the next PI); ``poppf k`` if
    pushed; 1..6 ordinary instructions; a conditional branch to a random block
    (the last block jumps back to the first). ``pflen``: each profile block is
    preceded by its sec. IV-A.2 length hint.
    """
    layouts = []
    for _ in range(blocks):
        k = rng.randrange(n_flags)
        body = []
        pushed = rng.random() < push_rate
        if pushed:
            body.append(_pci("pushpf", k))
        if pushed or rng.random() < toggle_rate:
            body.append(_pci(rng.choice(("setpf", "resetpf")), k))
        length = rng.randint(1, 8)
        pis = []
        for j in range(length):
            if j + 1 < length and rng.random() < pi_branch_rate:
                pis.append(("pibranch", k))
            else:
                op = rng.choice(("lw", "addi", "sw", "lui"))
                pis.append(_pi(op, k, rd=26 if op != "sw" else 0, rs1=26 if op != "lui" else 0,
                               rs2=26 if op == "sw" else 0, imm=4 * j))  # fmt: skip
        if pflen:
            body.append(encode_pflen(length))
        body += pis
        if pushed:
            body.append(_pci("poppf", k))
        body += [NOP] * rng.randint(1, 6)
        body.append("branch")
        layouts.append(body)
    return _lay_out(rng, layouts, base)


def _lay_out(rng: random.Random, layouts: list[list], base: int) -> Program:
    """Place basic blocks at ``base``: words, ``("over", k)`` = ``beq/b k`` to ``pc + 8``
    (taken with a random probability), ``"branch"`` = a branch to a random block
    (taken with probability < 0.6; the last block's goes back to the first)."""
    words, targets, taken = {}, {}, {}
    starts, pc = [], base
    for body in layouts:
        starts.append(pc)
        pc += 4 * len(body)
    for b, body in enumerate(layouts):
        pc = starts[b]
        for item in body:
            if item == "branch":
                words[pc] = BRANCH
                if b == len(layouts) - 1:
                    targets[pc], taken[pc] = starts[0], 1.0
                else:
                    targets[pc] = starts[rng.randrange(len(layouts))]
                    taken[pc] = rng.random() * 0.6
            elif isinstance(item, tuple):
                words[pc] = _pi("beq", item[1], rs1=26, rs2=0, imm=8)
                targets[pc], taken[pc] = pc + 8, rng.random()
            else:
                words[pc] = item
            pc += 4
    return Program(words, targets, taken, entry=base)


def mixed_type_program(rng: random.Random, *, blocks=24, n_flags=3, pi_branch_rate=0.15,
                       base=0x1000) -> Program:
    """A random loop whose profile blocks mix PI types (paper sec. V, several profiles).

    Each basic block: 0..3 PCIs on random flags (``setpf``/``resetpf``, or a
    ``pushpf k; setpf|resetpf k`` scope closed by ``poppf k`` after the PIs); a run
    of 1..12 PIs whose types change in runs of 1..4 (a type ``n_flags``, which
    names no flag, now and then, when ``n_flags`` < :data:`MAX_FLAGS`: the type field
    holds no other); some PIs are ``beq/b`` over the next PI, and some
    ``beq/b k`` jump over an ordinary instruction to a PI of the same type ``k``;
    1..4 ordinary instructions; a conditional branch to a random block.
    """
    layouts = []
    for _ in range(blocks):
        body: list = []
        scopes = []
        for _ in range(rng.randrange(4)):
            k = rng.randrange(n_flags)
            if rng.random() < 0.3:
                body.append(_pci("pushpf", k))
                scopes.append(k)
            body.append(_pci(rng.choice(("setpf", "resetpf")), k))
        length = rng.randint(1, 12)
        k, run, j = 0, 0, 0
        while j < length:
            if run == 0:
                k, run = rng.randrange(min(n_flags + 1, MAX_FLAGS)), rng.randint(1, 4)
            r = rng.random()
            if j + 2 < length and r < pi_branch_rate:
                body.append(("over", k))  # beq/b over the next PI
                j += 1
            elif j + 3 < length and r < 2 * pi_branch_rate:
                body += [("over", k), NOP, _pi("addi", k, rd=26, rs1=26, imm=2)]
                j += 3
            else:
                op = rng.choice(("lw", "addi", "sw", "lui"))
                body.append(_pi(op, k, rd=26 if op != "sw" else 0, rs1=26 if op != "lui" else 0,
                                rs2=26 if op == "sw" else 0, imm=4 * (j % 16)))  # fmt: skip
                j += 1
            run -= 1
        for k in reversed(scopes):
            body.append(_pci("poppf", k))
        body += [NOP] * rng.randint(1, 4)
        body.append("branch")
        layouts.append(body)
    return _lay_out(rng, layouts, base)


def recursion_program(depth: int, n_flags: int = 1) -> Program:
    """``depth`` nested instrumented frames (unrolled recursion), called in a loop.

    Frame ``i`` (profile type ``k = i % n_flags``): ``pushpf k``; ``setpf k`` for odd
    ``i``, ``resetpf k`` for even ``i`` (so every frame differs from its caller);
    a PI of type ``k``; the call of frame ``i + 1``; after it returns, PIs of every
    type (each executes iff the caller's flags were restored); ``poppf k``; return.
    With ``depth`` greater than the hardware stack, the pushes overflow and the
    pops underflow: only the trap handler's spill and fill keep the flags right.
    """
    a = _Asm()
    a.label("main")
    for k in range(n_flags):
        a.emit(_pci("setpf", k))
    a.emit(BRANCH, ("f", 0))
    a.label(("ret", -1))
    for k in range(n_flags):
        a.emit(_pi("lw", k, rd=5, rs1=5, imm=4 * k))
    a.emit(BRANCH, "main")
    for i in range(depth):
        k = i % n_flags
        a.label(("f", i))
        a.emit(NOP)  # prologue
        a.emit(_pci("pushpf", k))
        a.emit(_pci("setpf" if i % 2 else "resetpf", k))
        a.emit(_pi("addi", k, rd=6, rs1=6, imm=i))
        if i + 1 < depth:
            a.emit(BRANCH, ("f", i + 1))  # call
            a.label(("ret", i))
        for t in range(n_flags):
            a.emit(_pi("lw", t, rd=7, rs1=7, imm=4 * t))
        a.emit(_pci("poppf", k))
        a.emit(NOP)  # epilogue
        a.emit(BRANCH, ("ret", i - 1))  # return
    return a.program()


class _Asm:
    """A tiny assembler for the directed programs: labels, words, transfers."""

    def __init__(self, base=0x1000):
        self.base = base
        self.items: list[tuple] = []
        self.labels: dict[str, int] = {}

    def label(self, name):
        self.labels[name] = self.base + 4 * len(self.items)

    def emit(self, word, target=None, taken=1.0):
        self.items.append((word, target, taken))

    def program(self) -> Program:
        words, targets, taken = {}, {}, {}
        for i, (word, target, p) in enumerate(self.items):
            pc = self.base + 4 * i
            words[pc] = word
            if target is not None:
                targets[pc] = target if isinstance(target, int) else self.labels[target]
                taken[pc] = p
        return Program(words, targets, taken, entry=self.base)


def _block_counter(asm: _Asm, k: int, pflen: bool = False) -> None:
    """Paper Fig. 3 block instrumentation: lw/b, add/b, sw/b with the lui/b halves.

    ``pflen``: precede it with the sec. IV-A.2 length hint ``pflen 5``.
    """
    if pflen:
        asm.emit(encode_pflen(5))
    asm.emit(_pi("lui", k, rd=26, imm=0x10))
    asm.emit(_pi("lw", k, rd=26, rs1=26, imm=8))
    asm.emit(_pi("addi", k, rd=26, rs1=26, imm=1))
    asm.emit(_pi("lui", k, rd=27, imm=0x10))
    asm.emit(_pi("sw", k, rs1=27, rs2=26, imm=8))


def fig3_basic_block(profiling_on: bool, k: int = 0, pflen: bool = False) -> Program:
    """Paper Fig. 3: a method instrumented for basic-block profiling, called in a loop.

    ``pflen``: every counter block is preceded by its length hint (sec. IV-A.2).
    """
    a = _Asm()
    a.label("main")
    a.emit(NOP)
    a.emit(BRANCH, "function_entry")  # call
    a.label("return_site")
    a.emit(NOP)
    a.emit(BRANCH, "main")
    a.label("function_entry")
    a.emit(NOP)  # prologue
    a.emit(NOP)
    a.emit(_pci("pushpf", k))
    a.emit(_pci("setpf" if profiling_on else "resetpf", k))  # patched by the runtime
    a.label("LPBX1")
    _block_counter(a, k, pflen)
    a.emit(NOP)
    a.emit(NOP)
    a.emit(BRANCH, "LPBX1", taken=0.7)  # loop back-edge
    a.label("LPBX2")
    _block_counter(a, k, pflen)
    a.emit(NOP)
    a.emit(_pci("poppf", k))
    a.emit(NOP)  # epilogue
    a.emit(BRANCH, "return_site")  # return
    return a.program()


def fig4_call_graph(profiling_on: bool, k: int = 0) -> Program:
    """Paper Fig. 4: call-graph instrumentation, ``jal/b _mcount`` is a PI transfer."""
    a = _Asm()
    a.label("main")
    a.emit(NOP)
    a.emit(BRANCH, "function_entry")
    a.label("return_site")
    a.emit(BRANCH, "main")
    a.label("function_entry")
    a.emit(NOP)
    a.emit(_pci("pushpf", k))
    a.emit(_pci("setpf" if profiling_on else "resetpf", k))
    a.emit(_pi("addi", k, rd=1, rs1=31, imm=0))  # mov/b $1, $31
    a.emit(_pi("jalr", k, rd=31, rs1=0, imm=0), "_mcount")  # jal/b _mcount
    a.label("after_mcount")
    a.emit(_pi("addi", k, rd=31, rs1=1, imm=0))  # mov/b $31, $1
    a.emit(NOP)
    a.emit(_pci("poppf", k))
    a.emit(BRANCH, "return_site")
    a.label("_mcount")
    for _ in range(6):
        a.emit(NOP)
    a.emit(BRANCH, "after_mcount")
    return a.program()


def nested_push_pop(k: int = 0) -> Program:
    """pushpf/poppf nested three deep with set/reset at each level and PIs between."""
    a = _Asm()
    a.label("top")
    a.emit(_pci("setpf", k))
    for level, op in enumerate(("resetpf", "setpf", "resetpf")):
        a.emit(_pci("pushpf", k))
        a.emit(_pci(op, k))
        a.emit(_pi("addi", k, rd=5, rs1=5, imm=level))
    for level in range(3):
        a.emit(_pci("poppf", k))
        a.emit(_pi("addi", k, rd=6, rs1=6, imm=level))  # reads the popped flag: hazard
    a.emit(_pci("poppf", k))  # one pop too many: underflow
    a.emit(_pi("beq", k, rs1=0, rs2=0, imm=8), "top", taken=0.5)
    a.emit(BRANCH, "top")
    return a.program()


def overflow_program(depth: int, k: int = 0) -> Program:
    """``depth + 1`` pushes then as many pops, in a loop: an overflow, then an underflow
    when the pops reach what the trap handler spilled."""
    a = _Asm()
    a.label("top")
    a.emit(_pci("setpf", k))
    for _ in range(depth + 1):
        a.emit(_pci("pushpf", k))
    for _ in range(depth + 1):
        a.emit(_pci("poppf", k))
        a.emit(_pi("lw", k, rd=5, rs1=5, imm=0))
    a.emit(BRANCH, "top")
    return a.program()


def off_on_off_program() -> Program:
    """Fig. 3's loop with one profile block of types 0, 1, 0 (flag 0 off, flag 1 on).

    The case it checks: a block learnt as one run of PIs ends with the flag of
    its last PI (off), so fetch would skip it whole, the type-1 PIs included, and
    the leader (type 0, off) would not report a mis-prediction.
    """
    a = _Asm()
    a.label("top")
    a.emit(_pci("resetpf", 0))
    a.emit(_pci("setpf", 1))
    for k in (0, 0, 0, 0, 1, 1, 0, 0, 0, 0):
        a.emit(_pi("addi", k, rd=26, rs1=26, imm=1))
    a.emit(NOP)
    a.emit(NOP)
    a.emit(BRANCH, "top")
    return a.program()


def stale_block_patches(program: Program, at: int) -> list[tuple[int, int, int]]:
    """Fig. 3's second counter block (LPBX2) recompiled shorter at the same address.

    After ``at`` instructions the last two of its five PIs become ordinary
    instructions: a predictor entry learnt before still skips all five (IV-A.2).
    A ``pflen`` hint before the block is patched to the new length, 3.
    """
    counters = sorted(pc for pc, w in program.words.items() if decode(w).is_pi)
    block = counters[5:10]
    patches = [(at, block[3], NOP), (at, block[4], NOP)]
    if decode_pflen(program.word(block[0] - 4)) is not None:
        patches.append((at, block[0] - 4, encode_pflen(3)))
    return patches


def directed_programs(stack_depth: int = 8) -> dict[str, tuple[Program, float]]:
    """The directed programs and the branch mis-prediction rate to run each with."""
    return {
        "fig3_off": (fig3_basic_block(False), 0.05),
        "fig3_on": (fig3_basic_block(True), 0.05),
        "fig3_mispredict_in_block": (fig3_basic_block(True), 0.4),
        "fig4_off_misfetch": (fig4_call_graph(False), 0.3),
        "fig4_on": (fig4_call_graph(True), 0.1),
        "nested_push_pop": (nested_push_pop(), 0.2),
        "overflow": (overflow_program(stack_depth), 0.0),
        "recursion": (recursion_program(stack_depth + 4), 0.05),
        "off_on_off": (off_on_off_program(), 0.05),
    }
