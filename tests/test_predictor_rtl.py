"""profile_flag_predictor RTL (Amaranth simulator) against the golden front end's predictor."""

import random

import pytest

from hwprof.golden.frontend import (
    FrontEnd,
    basic_block_program,
    directed_programs,
    fig3_basic_block,
    stale_block_patches,
)  # fmt: skip
from hwprof.rtl.profile_flag_predictor import ProfileFlagPredictor
from hwprof.synth import to_verilog
from tests.frontend_replay import replay
from tests.selective_dispatch_mutants import LockIgnored

TABLE = ("sets", "ways", "min_block", "length_check")


def trace(params, program, seed, instructions=3000, rate=0.05):
    frontend = FrontEnd(program, lanes=params["lanes"], n_flags=params["n_flags"],
                        mispredict_rate=rate, seed=seed,
                        predictor={k: params[k] for k in TABLE if k in params})  # fmt: skip
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
        return (st.out.skip, st.out.not_taken, st.out.follow, st.out.bits)

    def observe(ctx):
        n = fetched[0]
        mask = (1 << n) - 1
        return (ctx.get(dut.skip) & mask, ctx.get(dut.not_taken) & mask,
                [ctx.get(dut.follow[i]) if i < n else 0 for i in range(lanes)],
                ctx.get(dut.bits))

    return replay(dut, steps, drive, observe)


@pytest.mark.parametrize("params", [
    {"lanes": 2, "n_flags": 2, "sets": 8, "ways": 2, "min_block": 2},
    {"lanes": 4, "n_flags": 1, "sets": 64, "ways": 2, "min_block": 4},
    {"lanes": 1, "n_flags": 3, "sets": 4, "ways": 1, "min_block": 1},
    {"lanes": 3, "n_flags": 8, "sets": 16, "ways": 2, "min_block": 3},
    {"lanes": 4, "n_flags": 2, "sets": 16, "ways": 2, "min_block": 2, "length_check": True},
])  # fmt: skip
def test_rtl_matches_golden_on_random_programs(params, seed):
    program = basic_block_program(random.Random(seed), n_flags=params["n_flags"],
                                  toggle_rate=0.5, pflen=params.get("length_check", False))
    frontend = trace(params, program, seed)
    assert frontend.counts["skips"] > 0, f"seed {seed}: nothing skipped"
    dut = ProfileFlagPredictor(**params)
    assert compare(dut, params["lanes"], frontend.predictor_trace) is None, f"seed {seed}"


@pytest.mark.parametrize("name", ["fig3_off", "fig4_off_misfetch", "nested_push_pop"])
def test_rtl_matches_golden_on_directed_programs(name, seed):
    params = {"lanes": 4, "n_flags": 1}
    program, rate = directed_programs()[name]
    frontend = trace(params, program, seed, rate=rate)
    assert compare(ProfileFlagPredictor(**params), 4, frontend.predictor_trace) is None


@pytest.mark.parametrize("length_check", [False, True])
def test_rtl_matches_golden_on_a_stale_block(length_check, seed):
    """Fig. 3 with pflen hints, its second counter recompiled shorter (appendix A.2)."""
    params = {"lanes": 4, "n_flags": 1, "length_check": length_check}
    program = fig3_basic_block(False, pflen=True)
    frontend = FrontEnd(program, lanes=4, seed=seed, predictor={"length_check": length_check})
    frontend.run(4000, patches=stale_block_patches(program, 1500))
    assert (frontend.counts["genuine_skipped"] > 0) != length_check, f"seed {seed}"
    steps = frontend.predictor_trace
    assert compare(ProfileFlagPredictor(**params), 4, steps) is None, f"seed {seed}"


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
