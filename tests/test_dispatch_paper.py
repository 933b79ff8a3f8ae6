"""Selective dispatch against the paper's own statements (issue 12), golden level.

* "the only instructions skipped are the ones that would have been ignored"
  (sec. VII-C), for any mix of profile types (sec. V): a property test over
  random programs whose profile blocks mix PI types;
* the front end's committed stream equals an ISA-level reference written from
  the paper alone (:mod:`hwprof.golden.isa_reference`: one flag per type, an
  unbounded runtime stack, a PI executes iff its flag is set);
* deep recursion: the flag stack's precise exceptions and the trap handler's
  spill/fill give the unbounded stack of the paper;
* each rule of the paper that a test must pin, each shown to catch a mutant of
  the golden model that departs from it.
"""

import random

import pytest

import hwprof.golden.frontend as frontend_module
from hwprof.golden.dispatch import DispatchFilter, FlagStackSpill, Lane
from hwprof.golden.frontend import (
    BRANCH,
    FrontEnd,
    _Asm,
    basic_block_program,
    directed_programs,
    mixed_type_program,
    off_on_off_program,
    recursion_program,
)  # fmt: skip
from hwprof.golden.isa_profile import NOP, Insn, decode, encode
from hwprof.golden.isa_reference import reference_stream
from hwprof.golden.predictor import ProfileFlagPredictor


def pi(op="lw", k=0, **fields):
    return encode(Insn("pi", op, k, **fields))


def pci(op, k=0):
    return encode(Insn("pci", op, k=k))


def committed(frontend: FrontEnd) -> list[int]:
    """Correct-path instructions sent to the back end, PCIs (decode-only) left out."""
    word = frontend.program.word
    return [pc for pc, dispatched in frontend.path_log
            if dispatched and decode(word(pc)).kind != "pci"]  # fmt: skip


def check_against_reference(frontend: FrontEnd, n_flags: int, context: str) -> None:
    stream = committed(frontend)
    reference = reference_stream(frontend.program, n_flags, frontend.oracle.outcomes,
                                 len(stream))  # fmt: skip
    assert len(stream) > 200, context
    pairs = enumerate(zip(stream, reference, strict=False))
    first = next((i for i, (a, b) in pairs if a != b), None)
    assert first is None and len(reference) == len(stream), (
        f"{context}: committed stream departs from the reference at #{first}")


# -------------------------------------------------- mutants of the golden model


class UntypedLeader(ProfileFlagPredictor):
    """The bug of issue 12: the leader register ignores the profile type."""

    def _new_leader(self, d):
        return not self.leader_valid


class PciKeepsLeader(ProfileFlagPredictor):
    """Only ordinary instructions clear the leader register (PCIs do not)."""

    @staticmethod
    def _clears_leader(d):
        return d.kind == "other"


class FollowGrowsUnlocked(ProfileFlagPredictor):
    """``follow`` grows whether the entry is locked or not."""

    @staticmethod
    def _grows(entry, word, flag):
        return not flag and word > entry.follow


class FollowGrowsDispatched(ProfileFlagPredictor):
    """``follow`` grows from dispatched PIs too (which may jump over instructions)."""

    @staticmethod
    def _grows(entry, word, flag):
        return bool(entry.lock) and word > entry.follow


class Misaligned(ProfileFlagPredictor):
    """Leaders at 4n + 2 (cores with 2-byte instructions) are learnt and looked up."""

    @staticmethod
    def _aligned(pc):
        return True


class OverwriteTop(DispatchFilter):
    """A push onto a full stack overwrites the top entry (and still reports it)."""

    def _push(self, i, k, out):
        if self.sp == self.config.stack_depth:
            top = self.sp - 1
            self.stack = self.stack & ~(1 << top) | self.flag(k) << top
            out.overflow |= 1 << i
            return True
        return super()._push(i, k, out)


class LosingHandler(FlagStackSpill):
    """The old stack: a push on a full stack is dropped, an empty pop resets the flag."""

    def handle(self, state, cause, k):
        f = DispatchFilter(n_flags=self.config.n_flags, stack_depth=self.config.stack_depth)
        f.unpack(state)
        if cause == "underflow":
            f._write_flag(k, 0)
        return f.pack()


class NoSkipOverride(FrontEnd):
    """A skip does not override the branch prediction of a control-transfer leader."""

    @staticmethod
    def _predict(pred, lookup):
        return 0 if lookup and lookup.not_taken else pred


# ----------------------------------------- 1. skipped = would have been ignored


def run_mixed(seed, lanes, n_flags, predictor_cls=None, monkeypatch=None, programs=4,
              instructions=4000):  # fmt: skip
    """Random mixed-type programs; returns (genuine skipped, skips, first reference miss)."""
    if predictor_cls is not None:
        monkeypatch.setattr(frontend_module, "ProfileFlagPredictor", predictor_cls)
    genuine = skips = 0
    miss = None
    for index in range(programs):
        run_seed = seed * 100 + index
        program = mixed_type_program(random.Random(run_seed), n_flags=n_flags)
        fe = FrontEnd(program, lanes=lanes, n_flags=n_flags, seed=run_seed,
                      predictor={"min_block": 1 + index % 3, "sets": 16})  # fmt: skip
        fe.run(instructions)
        genuine += fe.counts["genuine_skipped"]
        skips += fe.counts["skips"]
        if miss is None:
            try:
                check_against_reference(fe, n_flags, f"seed {seed}, program {run_seed}")
            except AssertionError as error:
                miss = str(error)
    return genuine, skips, miss


@pytest.mark.parametrize("lanes, n_flags", [(1, 2), (2, 3), (4, 2), (4, 3)])
def test_skipped_instructions_would_all_have_been_ignored(lanes, n_flags, seed):
    """Property: blocks mixing PI types are never skipped over a PI whose flag is on."""
    genuine, skips, miss = run_mixed(seed, lanes, n_flags)
    assert skips > 100, f"seed {seed}: only {skips} skips, the property is not exercised"
    assert genuine == 0, f"seed {seed}: {genuine} instructions wrongly skipped"
    assert miss is None, miss


def test_property_catches_an_untyped_leader_register(seed, monkeypatch):
    genuine, _, miss = run_mixed(seed, 4, 3, UntypedLeader, monkeypatch)
    assert genuine > 0 and miss is not None, f"seed {seed}: mutant not caught"


def test_off_on_off_block_of_issue_12(seed, monkeypatch):
    """Types 0, 1, 0 with flag 0 off and flag 1 on: the type-1 PIs always dispatch."""
    without = FrontEnd(off_on_off_program(), lanes=4, n_flags=2, seed=seed)
    without.run(3000)
    with_predictor = FrontEnd(off_on_off_program(), lanes=4, n_flags=2, seed=seed, predictor={})
    with_predictor.run(3000)
    c = with_predictor.counts
    assert c["skips"] > 100 and c["genuine_skipped"] == 0, f"seed {seed}"
    # with the predictor as without, every type-1 PI dispatched: the loop is 15
    # instructions (resetpf, setpf, the ten PIs, two NOPs, the branch, always taken)
    # and its PIs 5 and 6 (instructions 6 and 7) are of type 1
    for run in (without, with_predictor):
        full, part = divmod(run.oracle.retired, 15)
        want = 2 * full + (part > 6) + (part > 7)
        assert run.counts["pi_dispatched"] == want, f"seed {seed}"
    monkeypatch.setattr(frontend_module, "ProfileFlagPredictor", UntypedLeader)
    mutant = FrontEnd(off_on_off_program(), lanes=4, n_flags=2, seed=seed, predictor={})
    mutant.run(3000)
    assert mutant.counts["genuine_skipped"] > 100, f"seed {seed}"


# ------------------------------------------------------- 2. ISA-level reference


@pytest.mark.parametrize("predictor", [None, {}], ids=["no-predictor", "predictor"])
@pytest.mark.parametrize("lanes", [1, 4])
def test_committed_stream_equals_the_reference(predictor, lanes, seed):
    rng = random.Random(seed)
    for name, (program, rate) in directed_programs().items():
        fe = FrontEnd(program, lanes=lanes, mispredict_rate=rate, seed=seed, predictor=predictor)
        fe.run(2000)
        check_against_reference(fe, 1, f"seed {seed}, {name}")
    for n_flags in (1, 3):
        program = basic_block_program(random.Random(rng.randrange(1 << 30)), n_flags=n_flags,
                                      toggle_rate=0.5)  # fmt: skip
        fe = FrontEnd(program, lanes=lanes, n_flags=n_flags, seed=seed, predictor=predictor)
        fe.run(4000)
        check_against_reference(fe, n_flags, f"seed {seed}, basic blocks n={n_flags}")


def test_reference_is_not_the_filter():
    """The reference does not import the decode filter or the front end."""
    import hwprof.golden.isa_reference as ref

    names = set(vars(ref))
    assert not names & {"DispatchFilter", "FrontEnd", "Lane", "FlagStackSpill"}


def test_reference_catches_a_front_end_that_skips_genuine_instructions(seed, monkeypatch):
    monkeypatch.setattr(frontend_module, "ProfileFlagPredictor", UntypedLeader)
    fe = FrontEnd(off_on_off_program(), lanes=4, n_flags=2, seed=seed, predictor={})
    fe.run(3000)
    with pytest.raises(AssertionError, match="departs from the reference"):
        check_against_reference(fe, 2, f"seed {seed}")


# ----------------------------------------------------- 3. flag stack, recursion


@pytest.mark.parametrize("depth, stack_depth, n_flags, lanes", [
    (12, 8, 1, 4), (16, 8, 2, 4), (12, 3, 1, 1), (13, 1, 2, 2),
])  # fmt: skip
def test_deep_recursion_returns_with_the_right_flags(depth, stack_depth, n_flags, lanes, seed):
    program = recursion_program(depth, n_flags)
    fe = FrontEnd(program, lanes=lanes, n_flags=n_flags, stack_depth=stack_depth, seed=seed,
                  predictor={})  # fmt: skip
    fe.run(3000)
    assert fe.counts["pf_exception"] > 0, f"seed {seed}: no stack exception"
    check_against_reference(fe, n_flags, f"seed {seed}")
    n = len(fe.path_log)
    assert fe.path_log == fe.oracle.log[:n], f"seed {seed}"


def test_recursion_check_catches_a_stack_that_loses_flags(seed, monkeypatch):
    monkeypatch.setattr(frontend_module, "FlagStackSpill", LosingHandler)
    fe = FrontEnd(recursion_program(12), lanes=4, stack_depth=8, seed=seed)
    fe.run(3000)
    with pytest.raises(AssertionError, match="departs from the reference"):
        check_against_reference(fe, 1, f"seed {seed}")


def check_fault_counts(fe, msg):
    """Every flag-stack fault dispatched on the correct path traps (unless still in
    flight when the run ends), none dispatched on a wrong path does, and every fault
    either traps, is discarded by a branch squash or is still in flight."""
    c = fe.counts
    pending = fe.faults_in_flight()
    msg = f"{msg}: {c} with {pending} faults in flight"
    assert c["pf_fault_on_path"] - pending <= c["pf_exception"] <= c["pf_fault_on_path"], msg
    assert (c["pf_exception"] + c["pf_fault_discarded"] + pending
            == c["pf_fault_on_path"] + c["pf_fault_wrong_path"]), msg  # fmt: skip


def test_wrong_path_stack_exception_never_traps(seed, frontend=FrontEnd, reference=True):
    """A faulting pushpf behind a mispredicted branch is squashed with it.

    About 1 seed in 70 puts no faulting pushpf on a wrong path in 3000 instructions, which
    proves nothing about the squash: the run is repeated with the seeds after it
    until one does, at most 5 runs, each checked against the reference."""
    for run_seed in range(seed, seed + 5):
        fe = frontend(recursion_program(12), lanes=4, stack_depth=2, mispredict_rate=0.5,
                      seed=run_seed)  # fmt: skip
        fe.run(3000)
        if reference:
            check_against_reference(fe, 1, f"seed {run_seed}")
        assert fe.counts["pf_exception"] > 0, f"seed {run_seed}"
        check_fault_counts(fe, f"seed {run_seed}")
        if fe.counts["pf_fault_wrong_path"] > 0:
            return
    pytest.fail(f"seeds {seed}..{seed + 4}: no faulting pushpf on a wrong path")


class KeepsWrongPathFaults(FrontEnd):
    """Mutant: a branch squash keeps the faults queued behind the branch, which then
    trap although they were dispatched on a wrong path."""

    def step(self):
        faults = [entry for entry in self.inflight if entry[3] is not None]
        record = super().step()
        if record.cause == "branch":  # self.cycle - 1: the squash's cycle
            # (an entry due in that cycle would never be taken from the queue)
            kept = [entry for entry in faults if entry[0] > self.cycle - 1]
            self.inflight.extend(kept)
            self.counts["pf_fault_discarded"] -= len(kept)
        return record


def test_fault_counts_catch_wrong_path_faults_that_trap(seed):
    """The fault counts alone (no reference check) catch the mutant."""
    with pytest.raises(AssertionError, match="faults in flight"):
        test_wrong_path_stack_exception_never_traps(seed, KeepsWrongPathFaults,
                                                    reference=False)  # fmt: skip


# ------------------------------------------------------------ 4. pinned rules


def pcis_clear_the_leader_register(cls):
    p = cls(lanes=1)
    for insn, pc in ((pi(), 0x400), (pci("setpf"), 0x404), (pi(), 0x408)):
        p.step(update=[(insn, pc, 0)])
    assert p.leader == 0x408, "a PCI must clear the leader address register"


def skip_overrides_branch_prediction(cls, seed):
    """A jalr/b leader predicted taken (its prediction bit is on) but skipped."""
    a = _Asm()
    a.label("top")
    a.emit(pci("resetpf"))
    a.emit(pci("pushpf"))  # pushes 0
    a.emit(pci("setpf"))  # prediction bit on
    a.emit(pci("poppf"))  # flag off again; the prediction bit stays on
    a.emit(NOP)
    a.emit(pi("jalr", rd=31), "mcount")  # leader, a control transfer
    a.label("back")
    for _ in range(4):
        a.emit(pi("addi", rd=1, rs1=1, imm=1))
    a.emit(NOP)
    a.emit(BRANCH, "top")
    a.label("mcount")
    a.emit(NOP)
    a.emit(BRANCH, "back")
    fe = cls(a.program(), lanes=2, mispredict_rate=0.0, seed=seed, predictor={})
    fe.run(1000, max_cycles=3000)
    skipped = [lane for step in fe.trace for lane in step.lanes if lane.skipped]
    assert skipped, "the jalr/b block is never skipped"
    assert all(not lane.pred_taken for lane in skipped), "a skip must override the prediction"


def follow_grows_only_while_locked(cls):
    p = cls(lanes=1, min_block=1)
    leader = 0x400
    for _ in range(2):  # learn 4 PIs; the second visit clears the lock
        for j in range(5):
            p.step(update=[(pi() if j < 4 else NOP, leader + 4 * j, 0)])
    for j in range(8):  # unlocked: 8 PIs after the same leader change nothing
        p.step(update=[(pi(), leader + 4 * j, 0)])
    assert p.step(fetch=[(pi(), leader)]).follow == [leader + 16], "follow grew unlocked"


def follow_grows_only_from_ignored_pis(cls):
    p = cls(lanes=2, min_block=1)
    leader = 0x400
    for j in range(3):  # first visit, flag off: entry locked, follow leader + 12
        p.step(update=[(pi(k=1), leader + 4 * j, 0)])
    p.step(update=[(NOP, 0x3FC, 0)])
    # the leader decoded behind another block (no row update for it), flag on now,
    # then a dispatched PI branch jumped over ordinary instructions to leader + 40
    p.step(update=[(pi(k=0), 0x200, 1), (pi(k=1), leader, 1)])
    p.step(update=[(pi(k=1), leader + 40, 1), (NOP, leader + 44, 1)])
    way = p.find(*p.split(leader)[1:])
    assert way is not None
    assert p.table[p.split(leader)[1]][way].follow << 2 == leader + 12, "follow grew"


def push_onto_full_stack_keeps_the_top(cls):
    f = cls(lanes=4, stack_depth=2)
    lanes = [Lane(1, w, 0x100 + 4 * i) for i, w in enumerate(
        (pci("setpf"), pci("pushpf"), pci("resetpf"), pci("pushpf")))]
    f.step(lanes)
    assert (f.stack, f.sp) == (0b01, 2)
    out = f.step([Lane(1, pci("setpf"), 0x110), Lane(1, pci("pushpf"), 0x114)])
    assert out.overflow == 0b10
    assert (f.stack, f.sp) == (0b01, 2), "a push onto a full stack overwrote an entry"


RULES = {
    "pci_clears_leader": (lambda cls, seed: pcis_clear_the_leader_register(cls),
                          ProfileFlagPredictor, PciKeepsLeader),
    "skip_overrides_prediction": (skip_overrides_branch_prediction, FrontEnd, NoSkipOverride),
    "follow_only_locked": (lambda cls, seed: follow_grows_only_while_locked(cls),
                           ProfileFlagPredictor, FollowGrowsUnlocked),
    "follow_only_ignored": (lambda cls, seed: follow_grows_only_from_ignored_pis(cls),
                            ProfileFlagPredictor, FollowGrowsDispatched),
    "full_push_keeps_top": (lambda cls, seed: push_onto_full_stack_keeps_the_top(cls),
                            DispatchFilter, OverwriteTop),
}  # fmt: skip


@pytest.mark.parametrize("rule", sorted(RULES))
def test_rule_holds(rule, seed):
    check, model, _ = RULES[rule]
    check(model, seed)


@pytest.mark.parametrize("rule", sorted(RULES))
def test_rule_catches_its_mutant(rule, seed):
    check, _, mutant = RULES[rule]
    with pytest.raises(AssertionError):
        check(mutant, seed)


# ------------------------------------------------- 5. 2-byte instruction cores


def misaligned_leaders_are_never_skipped(cls):
    """A PI at 4n + 2 (after a 2-byte instruction) is never learnt nor looked up."""
    for leader in (0x402, 0x40A):
        p = cls(lanes=1, min_block=1)
        for _ in range(2):
            for j in range(5):
                p.step(update=[(pi() if j < 4 else NOP, leader + 4 * j, 0)])
        assert p.step(fetch=[(pi(), leader)]).skip == 0, f"{leader:#x} skipped"
    # an aligned block at 0x400 is never found from 0x402 (same word address)
    p = cls(lanes=1, min_block=1)
    for _ in range(2):
        for j in range(5):
            p.step(update=[(pi() if j < 4 else NOP, 0x400 + 4 * j, 0)])
    assert p.step(fetch=[(pi(), 0x400)]).skip == 1
    assert p.step(fetch=[(pi(), 0x402)]).skip == 0, "0x402 hit the entry of 0x400"


def test_misaligned_leaders_are_never_skipped():
    misaligned_leaders_are_never_skipped(ProfileFlagPredictor)


def test_misaligned_check_catches_its_mutant():
    with pytest.raises(AssertionError):
        misaligned_leaders_are_never_skipped(Misaligned)
