"""profile_flag_predictor RTL (Amaranth simulator) against the golden front end's predictor."""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.data import ArrayLayout
from amaranth.lib.wiring import In, Out

from hwprof.golden.frontend import (
    FrontEnd,
    PredictorStep,
    basic_block_program,
    directed_programs,
    fig3_basic_block,
    mixed_type_program,
    stale_block_patches,
)  # fmt: skip
from hwprof.golden.isa_profile import NOP, Insn, encode, encode_pflen
from hwprof.golden.predictor import ProfileFlagPredictor as GoldenPredictor
from hwprof.rtl.profile_flag_predictor import ProfileFlagPredictor
from hwprof.synth import to_verilog
from tests.frontend_replay import replay
from tests.selective_dispatch_mutants import LockIgnored, UntypedLeaderRTL, ValidGatedOutputs

TABLE = ("sets", "ways", "min_block", "length_check")


def _outputs(ctx, dut, lanes, n):
    """The outputs of the ``n`` fetched lanes (the others' mean nothing: zero)."""
    mask = (1 << n) - 1
    return (ctx.get(dut.skip) & mask, ctx.get(dut.not_taken) & mask,
            [ctx.get(dut.follow[i]) if i < n else 0 for i in range(lanes)],
            ctx.get(dut.bits))


def _set_inputs(ctx, dut, st, lanes):
    """Drive one step's fetch and update lanes (unused lanes zero) and squash."""
    fetch = st.fetch + [(0, 0)] * (lanes - len(st.fetch))
    update = st.update + [(0, 0, 0)] * (lanes - len(st.update))
    ctx.set(dut.fetch_valid, (1 << len(st.fetch)) - 1)
    ctx.set(dut.upd_valid, (1 << len(st.update)) - 1)
    ctx.set(dut.upd_flag, sum(u[2] << i for i, u in enumerate(update)))
    ctx.set(dut.squash, st.squash)
    for i in range(lanes):
        ctx.set(dut.fetch_insn[i], fetch[i][0])
        ctx.set(dut.fetch_pc[i], fetch[i][1])
        ctx.set(dut.upd_insn[i], update[i][0])
        ctx.set(dut.upd_pc[i], update[i][1])

#: Instructions of a random program: the fast tier runs 1,500 (400-800 cycles), the soak
#: tier 3,000 too (suite time). At 1,500, 40 seeds of each fast geometry skipped at least
#: 5 times and squashed at least 8 times, and the lock-ignoring mutant (LockIgnored)
#: mismatched by cycle 130 in each of 5 seeds (also at update latencies 1 and 2); at
#: update latency 2 the mutant without the forwarding into C (NoForwarding) by cycle 238.
FAST, LONG = 1500, 3000
LENGTHS = [FAST, pytest.param(LONG, marks=pytest.mark.soak)]


def trace(params, program, seed, instructions=LONG, rate=0.05):
    frontend = FrontEnd(program, lanes=params["lanes"], n_flags=params["n_flags"],
                        mispredict_rate=rate, seed=seed,
                        predictor={k: params[k] for k in (*TABLE, "update_latency")
                                   if k in params})  # fmt: skip
    frontend.run(instructions)
    return frontend


def compare(dut, lanes, steps):
    """Drive the recorded predictor steps; return the first mismatch or None.

    The outputs of lanes that are not fetched mean nothing (they do not depend on
    ``fetch_valid``): only fetched lanes are compared.
    """
    fetched = [0]

    def drive(ctx, st):
        fetched[0] = len(st.fetch)
        _set_inputs(ctx, dut, st, lanes)
        return (st.out.skip, st.out.not_taken, st.out.follow, st.out.bits)

    def observe(ctx):
        return _outputs(ctx, dut, lanes, fetched[0])

    return replay(dut, steps, drive, observe)


#: suite time: two geometries in the soak tier (1 and 3 lanes run in the fast tier's
#: forwarding and latency tests)
@pytest.mark.parametrize("params", [
    {"lanes": 2, "n_flags": 2, "sets": 8, "ways": 2, "min_block": 2},
    {"lanes": 4, "n_flags": 1, "sets": 64, "ways": 2, "min_block": 4},
    pytest.param({"lanes": 1, "n_flags": 3, "sets": 4, "ways": 1, "min_block": 1},
                 marks=pytest.mark.soak),
    pytest.param({"lanes": 3, "n_flags": 8, "sets": 16, "ways": 2, "min_block": 3},
                 marks=pytest.mark.soak),
    {"lanes": 4, "n_flags": 2, "sets": 16, "ways": 2, "min_block": 2, "length_check": True},
])  # fmt: skip
@pytest.mark.parametrize("instructions", LENGTHS)
def test_rtl_matches_golden_on_random_programs(params, instructions, seed):
    program = basic_block_program(random.Random(seed), n_flags=params["n_flags"],
                                  toggle_rate=0.5, pflen=params.get("length_check", False))
    frontend = trace(params, program, seed, instructions)
    assert frontend.counts["skips"] > 0, f"seed {seed}: nothing skipped"
    dut = ProfileFlagPredictor(**params)
    assert compare(dut, params["lanes"], frontend.predictor_trace) is None, f"seed {seed}"


#: suite time: soak tier only. The fast cocotb tier replays every directed program and
#: the stale block on the generated Verilog (hwprof/cocotb_tests/test_profile_flag_predictor.py,
#: the defaults and the length check); update_latency=0 keeps the random, mixed-type,
#: misaligned and stale-block (length check) programs here
DIRECTED = [pytest.param(n, marks=pytest.mark.soak)
            for n in ("fig3_off", "off_on_off", "fig4_off_misfetch", "nested_push_pop",
                      "recursion")]  # fmt: skip


@pytest.mark.parametrize("name", DIRECTED)
def test_rtl_matches_golden_on_directed_programs(name, seed):
    params = {"lanes": 4, "n_flags": 1}
    program, rate = directed_programs()[name]
    frontend = trace(params, program, seed, rate=rate)
    assert compare(ProfileFlagPredictor(**params), 4, frontend.predictor_trace) is None


#: without the length check a stale block is plain updates (the random programs; the
#: cocotb tier replays it, and tests/test_predictor_golden.py checks that it skips PIs):
#: soak tier (suite time)
@pytest.mark.parametrize("length_check", [pytest.param(False, marks=pytest.mark.soak), True])
def test_rtl_matches_golden_on_a_stale_block(length_check, seed):
    """Fig. 3 with pflen hints, its second counter recompiled shorter (sec. IV-A.2)."""
    params = {"lanes": 4, "n_flags": 1, "length_check": length_check}
    program = fig3_basic_block(False, pflen=True)
    frontend = FrontEnd(program, lanes=4, seed=seed, predictor={"length_check": length_check})
    frontend.run(4000, patches=stale_block_patches(program, 1500))
    assert (frontend.counts["genuine_skipped"] > 0) != length_check, f"seed {seed}"
    steps = frontend.predictor_trace
    assert compare(ProfileFlagPredictor(**params), 4, steps) is None, f"seed {seed}"


@pytest.mark.parametrize("params", [
    {"lanes": 4, "n_flags": 3, "sets": 16, "ways": 2, "min_block": 1},
    {"lanes": 2, "n_flags": 2, "sets": 8, "ways": 1, "min_block": 2},
])  # fmt: skip
def test_rtl_matches_golden_on_mixed_type_programs(params, seed):
    """Profile blocks that mix PI types (issue 12): the leader register's type field."""
    program = mixed_type_program(random.Random(seed), n_flags=params["n_flags"])
    frontend = trace(params, program, seed)
    assert frontend.counts["skips"] > 0 and frontend.counts["genuine_skipped"] == 0
    dut = ProfileFlagPredictor(**params)
    assert compare(dut, params["lanes"], frontend.predictor_trace) is None, f"seed {seed}"


def test_checker_catches_an_rtl_leader_register_without_the_type(seed):
    params = {"lanes": 4, "n_flags": 3, "sets": 16, "ways": 2, "min_block": 1}
    program = mixed_type_program(random.Random(seed), n_flags=3)
    frontend = trace(params, program, seed)
    assert compare(UntypedLeaderRTL(**params), 4, frontend.predictor_trace) is not None


def misaligned_steps(rng, lanes, cycles=400):
    """Decode visits of blocks at 4-byte and 2-byte aligned leaders, and fetches of them."""
    golden = GoldenPredictor(lanes=lanes, sets=8, min_block=1)
    word = encode(Insn("pi", "lw", 0, rd=5, rs1=5))
    leaders = [0x400, 0x402, 0x40A, 0x420, 0x422]
    steps = []
    queue = []
    for _ in range(cycles):
        if not queue:
            leader = rng.choice(leaders)
            flag = int(rng.random() < 0.2)
            queue = [(word, leader + 4 * j, flag) for j in range(rng.randint(1, 4))]
            queue.append((NOP, queue[-1][1] + 4, 0))
        update, queue = queue[:lanes], queue[lanes:]
        fetch = [(word, rng.choice(leaders)) for _ in range(rng.randint(0, lanes))]
        out = golden.step(fetch=fetch, update=update)
        steps.append(PredictorStep(fetch, update, 0, out))
    assert any(out.skip for out in (s.out for s in steps))
    return steps


@pytest.mark.parametrize("lanes", [1, 4])
def test_rtl_matches_golden_on_misaligned_leaders(lanes, seed):
    """Cores with 2-byte instructions: a PI at 4n + 2 is never learnt nor looked up."""
    steps = misaligned_steps(random.Random(seed), lanes)
    assert compare(ProfileFlagPredictor(lanes=lanes, sets=8, min_block=1), lanes, steps) \
        is None, f"seed {seed}"


class FetchUnit(wiring.Component):
    """A fetch stage around the predictor: fetch_valid from skip/not_taken.

    ``fetch_valid`` is a prefix up to the first lane that ends the fetch block (a
    skip, or a transfer predicted taken that the prediction bit leaves taken),
    found with a priority encoder whose index depends on every lane's outputs:
    the integration of issue 12's combinational-loop hazard.
    """

    def __init__(self, predictor):
        self.predictor = predictor
        w, a = predictor.config.lanes, predictor.config.addr_width
        super().__init__({"insn": In(ArrayLayout(32, w)), "pc": In(ArrayLayout(a, w)),
                          "bp_taken": In(w), "fetch_valid": Out(w), "skip": Out(w)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.predictor = p = self.predictor
        w = p.config.lanes
        first = Signal(range(w + 1))
        m.d.comb += first.eq(w)
        for i in reversed(range(w)):
            with m.If(p.skip[i] | (self.bp_taken[i] & ~p.not_taken[i])):
                m.d.comb += first.eq(i)
        for i in range(w):
            m.d.comb += [p.fetch_insn[i].eq(self.insn[i]), p.fetch_pc[i].eq(self.pc[i]),
                         self.fetch_valid[i].eq(i <= first)]  # fmt: skip
        m.d.comb += [p.fetch_valid.eq(self.fetch_valid), self.skip.eq(p.skip)]
        return m


def logic_loops(component) -> str | None:
    """Amaranth's netlist check (bit level) while generating Verilog: the cycle, or None."""
    try:
        to_verilog(component, "fetch_unit")
    except Exception as error:  # amaranth.hdl._nir.CombinationalCycle (private class)
        if type(error).__name__ != "CombinationalCycle":
            raise
        return str(error)
    return None


def test_fetch_valid_from_skip_forms_no_combinational_loop():
    """skip/not_taken do not depend on fetch_valid: the fetch unit above is loop-free."""
    assert logic_loops(FetchUnit(ProfileFlagPredictor(lanes=4, sets=4))) is None


def test_loop_check_catches_valid_gated_outputs():
    error = logic_loops(FetchUnit(ValidGatedOutputs(lanes=4, sets=4)))
    assert error is not None and "fetch_valid" in error


def test_checker_catches_a_predictor_that_ignores_the_lock(seed):
    params = {"lanes": 2, "n_flags": 1, "sets": 8}
    program = basic_block_program(random.Random(seed), toggle_rate=0.5)
    frontend = trace(params, program, seed)
    mismatch = compare(LockIgnored(**params), 2, frontend.predictor_trace)
    assert mismatch is not None and mismatch[1][0] != mismatch[2][0], f"seed {seed}"


@pytest.mark.parametrize("params, error, message", [
    ({"sets": 48}, ValueError, "sets must be a power of two, not 48"),
    ({"ways": 4}, ValueError, "ways must be between 1 and 2, not 4"),
    ({"min_block": "4"}, TypeError, "min_block must be an integer, not '4'"),
])  # fmt: skip
def test_rtl_parameter_errors(params, error, message):
    with pytest.raises(error, match=message):
        ProfileFlagPredictor(**params)


def test_generates_verilog():
    text = to_verilog(ProfileFlagPredictor(), "profile_flag_predictor")
    assert "module profile_flag_predictor" in text


# ------------------------------------------------- pipelined update, registered fetch
_LATENCY_GEOMETRIES = [
    {"lanes": 4, "n_flags": 1, "sets": 64, "ways": 2, "min_block": 4},
    {"lanes": 3, "n_flags": 2, "sets": 8, "ways": 1, "min_block": 2},
    {"lanes": 1, "n_flags": 1, "sets": 4, "ways": 1, "min_block": 1},
    {"lanes": 4, "n_flags": 2, "sets": 16, "ways": 2, "min_block": 2, "length_check": True},
]
#: fast tier: latency 3 on the length-check geometry, latencies 1 and 2 on the first;
#: the rest in the soak tier (suite time). Latency 3 on the first geometry is the catalog's
#: defaults, which the fast cocotb tier runs on the same random programs (100,000
#: instructions, tests/test_predictor_cocotb.py)
_LATENCY_FAST = {(3, 3), (0, 2), (0, 1)}


def _latency_cases():
    """(geometry, latency, instructions): latencies 1 and 2 of the fast tier at FAST (and
    LONG in the soak tier); latency 3 at LONG: at FAST the mutant without the forwarding
    into B (NoForwardingD) mismatched in 1 of 5 seeds only (test_rtl_forwards_the_row_...
    checks that forwarding on every seed)."""
    for latency in (1, 2, 3):
        for i, g in enumerate(_LATENCY_GEOMETRIES):
            if (i, latency) not in _LATENCY_FAST:
                yield pytest.param(g, latency, LONG, marks=pytest.mark.soak)
            elif latency == 3:
                yield pytest.param(g, latency, LONG)
            else:
                yield pytest.param(g, latency, FAST)
                yield pytest.param(g, latency, LONG, marks=pytest.mark.soak)


@pytest.mark.parametrize("params, update_latency, instructions", list(_latency_cases()))
def test_rtl_with_update_latency_matches_golden(params, update_latency, instructions, seed):
    """The table written 1, 2 or 3 cycles after decode (issue 15): RTL and golden model agree."""
    params = {**params, "update_latency": update_latency}
    program = basic_block_program(random.Random(seed), n_flags=params["n_flags"],
                                  toggle_rate=0.5, pflen=params.get("length_check", False))
    frontend = FrontEnd(program, lanes=params["lanes"], n_flags=params["n_flags"],
                        mispredict_rate=0.05, seed=seed,
                        predictor={k: params[k] for k in (*TABLE, "update_latency")
                                   if k in params})  # fmt: skip
    frontend.run(instructions)
    assert frontend.counts["skips"] > 0, f"seed {seed}: nothing skipped"
    dut = ProfileFlagPredictor(**params)
    assert compare(dut, params["lanes"], frontend.predictor_trace) is None, f"seed {seed}"


def test_update_latency_is_visible_to_the_check(seed):
    """A pipelined RTL checked against the paper's (latency 0) golden trace mismatches.

    The difference shows only where a fetch follows its block's decode group in the
    next cycle; about 3 in 10 front-end seeds of this program never do that, so the
    check tries up to 10 consecutive seeds and must mismatch on one of them.
    """
    params = {"lanes": 4, "n_flags": 1, "sets": 64, "ways": 2, "min_block": 1}
    program = fig3_basic_block(False)
    for s in range(seed, seed + 10):
        frontend = trace(params, program, s, rate=0.0)
        dut = ProfileFlagPredictor(**params, update_latency=1)
        if compare(dut, 4, frontend.predictor_trace) is not None:
            return
    pytest.fail(f"seeds {seed}..{seed + 9}: latency 1 never differed from latency 0")


#: a write a cycle late and a cycle early around the catalog's latency 3 in the fast
#: tier; around latency 1 in the soak tier (suite time)
@pytest.mark.parametrize("rtl, golden", [
    *(pytest.param(*p, marks=pytest.mark.soak) for p in ((2, 1), (1, 2))), (3, 2), (2, 3)])
def test_update_latency_2_is_visible_to_the_check(rtl, golden, seed):
    """An RTL of update latency ``rtl`` checked against golden outputs of ``golden``
    mismatches (blocks decoded and their leaders fetched every cycle, so that some
    fetch comes exactly one, two or three cycles after a group that changes its
    entry). (3, 2): an RTL that writes a cycle late; (2, 3): a cycle early."""
    steps = same_set_steps(random.Random(seed), 4, update_latency=golden)
    params = {"lanes": 4, "sets": 2, "min_block": 1}
    assert compare(ProfileFlagPredictor(**params, update_latency=golden), 4, steps) is None
    assert compare(ProfileFlagPredictor(**params, update_latency=rtl), 4, steps) is not None, \
        f"seed {seed}"


class NoForwarding(ProfileFlagPredictor):
    """update_latency >= 2 without the forwarding into C: stage C uses the row read in
    B even when the group ahead wrote that set in the meantime."""

    _forward = False


class NoForwardingD(ProfileFlagPredictor):
    """update_latency=3 without the forwarding into B: the row read in B misses the
    write of the group in stage D (two ahead) to the same set."""

    _forward_d = False


def same_set_steps(rng, lanes, length_check=False, cycles=600, update_latency=2):
    """Golden (``update_latency=2`` unless told) steps where consecutive decode groups update the
    same set: blocks longer than a decode group (one row over consecutive cycles),
    and leaders of 2 sets x several tags, so that blocks one after the other often
    share a set (a hit, a new entry, an eviction of the entry the group ahead wrote).
    """
    sets = 2
    golden = GoldenPredictor(lanes=lanes, sets=sets, min_block=1,
                             update_latency=update_latency, length_check=length_check)
    word = encode(Insn("pi", "lw", 0, rd=5, rs1=5))
    leaders = [0x400 + 4 * sets * 8 * t + 4 * s for t in range(3) for s in range(sets)]
    lengths = {leader: rng.randint(1, 3 * lanes) for leader in leaders}
    steps, queue, fetching = [], [], []
    for _ in range(cycles):
        if not queue:
            leader = rng.choice(leaders)
            flag = int(rng.random() < 0.15)
            # now and then another length (with length_check: a stale entry)
            n = lengths[leader] if rng.random() < 0.9 else rng.randint(1, 3 * lanes)
            queue = [(encode_pflen(n), leader - 4, 0)] if length_check else []
            queue += [(word, leader + 4 * j, flag) for j in range(n)]
            if rng.random() < 0.7:  # else the next block follows at once (same group)
                queue.append((NOP, queue[-1][1] + 4, 0))
        update, queue = queue[:lanes], queue[lanes:]
        while len(fetching) < lanes:  # leaders (with their pflen hint)
            leader = rng.choice(leaders)
            if length_check and rng.random() < 0.9:
                fetching.append((encode_pflen(lengths[leader]), leader - 4))
            fetching.append((word, leader))
        n = rng.randint(0, lanes)
        fetch, fetching = fetching[:n], fetching[n:]
        out = golden.step(fetch=fetch, update=update)
        steps.append(PredictorStep(fetch, update, 0, out))
    assert sum(st.out.skip.bit_count() for st in steps) > 10
    return steps


@pytest.mark.parametrize("lanes, length_check, latency", [
    (4, False, 3), (1, True, 3), (4, False, 2),
    *(pytest.param(*p, marks=pytest.mark.soak)
      for p in ((1, False, 3), (4, True, 3), (1, True, 2), (1, False, 2), (4, True, 2))),
])  # suite time: five of the eight in the soak tier
def test_rtl_forwards_the_row_of_the_group_ahead(lanes, length_check, latency, seed):
    """update_latency 2, 3: consecutive groups on one set; without either forwarding
    (into C from the group ahead; with 3, into B from the group in D) it mismatches.

    At latency 3, 2,400 cycles: since stage C updates per hit hypothesis (the h15
    merge), 600 cycles missed the missing forwarding into B at 2 of 31 seeds
    (1783855238 and 30); 2,400 caught it at both and at the 4 others tried."""
    cycles = 2400 if latency == 3 else 600
    steps = same_set_steps(random.Random(seed), lanes, length_check, cycles=cycles,
                           update_latency=latency)  # fmt: skip
    params = {"lanes": lanes, "sets": 2, "min_block": 1, "update_latency": latency,
              "length_check": length_check}  # fmt: skip
    assert compare(ProfileFlagPredictor(**params), lanes, steps) is None, f"seed {seed}"
    assert compare(NoForwarding(**params), lanes, steps) is not None, f"seed {seed}"
    if latency == 3:
        assert compare(NoForwardingD(**params), lanes, steps) is not None, f"seed {seed}"


def delayed_steps(steps, lanes, **params):
    """The golden model with ``fetch_latency=1`` re-run on recorded inputs."""
    golden = GoldenPredictor(lanes=lanes, fetch_latency=1, **params)
    return [PredictorStep(st.fetch, st.update, st.squash,
                          golden.step(st.fetch, st.update, st.squash)) for st in steps]


class FetchTransparent(ProfileFlagPredictor):
    """fetch_latency=1 whose lookup reads the row written at the end of the fetch cycle
    (a transparent read port) instead of the row as it was at its start."""

    _fetch_transparent = True


_REGISTERED = {"lanes": 4, "n_flags": 2, "sets": 16, "ways": 2, "min_block": 2}


@pytest.mark.parametrize("update_latency, length_check", [
    *(pytest.param(lat, False, marks=pytest.mark.soak) for lat in (0, 1, 2)), (3, False),
    (3, True), pytest.param(0, True, marks=pytest.mark.soak),
])  # the default update latency in the fast tier, the others in the soak tier (suite time)
def test_rtl_with_registered_fetch_matches_golden(update_latency, length_check, seed):
    """fetch_latency=1: the lookup of cycle c on skip/follow/not_taken in cycle c + 1
    (the row read in c, the compares in c + 1); the lookup sees the table as it was at
    the start of cycle c (a transparent read mismatches)."""
    params = {**_REGISTERED, "length_check": length_check}
    program = basic_block_program(random.Random(seed), n_flags=2, toggle_rate=0.5,
                                  pflen=length_check)
    frontend = trace(params, program, seed)
    table = {k: params[k] for k in TABLE if k in params}
    steps = delayed_steps(frontend.predictor_trace, 4, n_flags=2,
                          update_latency=update_latency, **table)
    # outputs compared for the lanes fetched in the cycle before
    shifted = [PredictorStep(steps[i - 1].fetch if i else [], st.update, st.squash, st.out)
               for i, st in enumerate(steps)]  # fmt: skip
    assert any(st.out.skip for st in shifted)
    dut = ProfileFlagPredictor(**params, update_latency=update_latency, fetch_latency=1)
    assert compare_registered(dut, 4, steps, shifted) is None, f"seed {seed}"
    # the combinational RTL does not match the delayed outputs
    dut0 = ProfileFlagPredictor(**params, update_latency=update_latency)
    assert compare_registered(dut0, 4, steps, shifted) is not None, f"seed {seed}"


@pytest.mark.parametrize("update_latency", [0, 3])
def test_registered_fetch_reads_the_row_of_the_start_of_the_cycle(update_latency, seed):
    """A fetch in the cycle in which its set is written (blocks decoded and their
    leaders fetched every cycle): a transparent read port mismatches."""
    steps = delayed_steps(same_set_steps(random.Random(seed), 4, update_latency=update_latency),
                          4, sets=2, min_block=1, update_latency=update_latency)
    shifted = [PredictorStep(steps[i - 1].fetch if i else [], st.update, st.squash, st.out)
               for i, st in enumerate(steps)]  # fmt: skip
    params = {"lanes": 4, "sets": 2, "min_block": 1, "update_latency": update_latency,
              "fetch_latency": 1}  # fmt: skip
    assert compare_registered(ProfileFlagPredictor(**params), 4, steps, shifted) is None
    assert compare_registered(FetchTransparent(**params), 4, steps, shifted) is not None, \
        f"seed {seed}"


def compare_registered(dut, lanes, steps, shifted):
    """Drive ``steps``' inputs; compare the outputs with ``shifted`` (last cycle's lanes)."""
    fetched = [0]
    expected = iter(shifted)

    def drive(ctx, st):
        out = next(expected)
        fetched[0] = len(out.fetch)
        _set_inputs(ctx, dut, st, lanes)
        n = fetched[0]
        return (out.out.skip, out.out.not_taken,
                [out.out.follow[i] if i < n else 0 for i in range(lanes)], out.out.bits)

    def observe(ctx):
        return _outputs(ctx, dut, lanes, fetched[0])

    return replay(dut, steps, drive, observe)
