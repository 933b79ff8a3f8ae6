"""dispatch_filter RTL (Amaranth simulator) against the golden filter, every cycle."""

import random

import pytest

from hwprof.golden.dispatch import DispatchFilter as Golden
from hwprof.golden.dispatch import Lane
from hwprof.golden.frontend import FrontEnd, directed_programs
from hwprof.golden.isa_profile import PCI_OPS, PI_OPS, Insn, encode
from hwprof.rtl.dispatch_filter import DispatchFilter
from hwprof.synth import to_verilog
from tests.frontend_replay import replay
from tests.selective_dispatch_mutants import NoOverflowTrap, NoPopHazard

SCALARS = ("take", "dispatch", "drop", "stall", "redirect", "misfetch", "flag_mispredict",
           "redirect_pc", "overflow", "underflow", "halted", "flags")  # fmt: skip


def random_steps(rng, config, cycles):
    """Random fetch-queue heads (any mix of PCIs, PIs of any k, ordinary), squashes."""
    ks = min(config.n_flags + 1, 8)  # also a flag beyond n_flags

    def word():
        r = rng.random()
        if r < 0.35:
            return encode(Insn("pci", rng.choice(PCI_OPS), k=rng.randrange(ks)))
        if r < 0.75:
            return encode(Insn("pi", rng.choice(PI_OPS), k=rng.randrange(ks)))
        return 0x13

    for _ in range(cycles):
        valid = rng.randrange(config.lanes + 1)
        lanes = [Lane(1, word(), rng.getrandbits(config.addr_width), rng.getrandbits(1),
                      int(rng.random() < 0.2)) for _ in range(valid)]  # fmt: skip
        squash = int(rng.random() < 0.05)
        yield lanes, squash, rng.getrandbits(config.ckpt_width) if squash else 0


def compare(dut, params, steps):
    """Drive ``steps`` (lanes, squash, restore); return the first mismatch or None."""
    golden = Golden(**params)
    n = golden.config.lanes

    def drive(ctx, step):
        lanes, squash, restore = step
        padded = list(lanes) + [Lane()] * (n - len(lanes))
        for name in ("valid", "pred_taken", "skipped"):
            ctx.set(getattr(dut, name), sum(getattr(x, name) << i for i, x in enumerate(padded)))
        for i, lane in enumerate(padded):
            ctx.set(dut.insn[i], lane.insn)
            ctx.set(dut.pc[i], lane.pc)
        ctx.set(dut.squash, squash)
        ctx.set(dut.restore, restore)
        out = golden.step(lanes, squash=squash, restore=restore)
        return {name: getattr(out, name) for name in (*SCALARS, "ckpt")}

    def observe(ctx):
        got = {name: ctx.get(getattr(dut, name)) for name in SCALARS}
        got["ckpt"] = [ctx.get(dut.ckpt[i]) for i in range(n)]
        return got

    return replay(dut, steps, drive, observe)


@pytest.mark.parametrize("params", [
    {"lanes": 1}, {"lanes": 2, "n_flags": 2, "stack_depth": 3}, {"lanes": 4, "stack_depth": 1},
    {"lanes": 3, "n_flags": 8, "addr_width": 16},
])  # fmt: skip
def test_rtl_matches_golden_on_random_heads(params, seed):
    dut = DispatchFilter(**params)
    steps = list(random_steps(random.Random(seed), Golden(**params).config, 1500))
    assert compare(dut, params, steps) is None, f"seed {seed}"


@pytest.mark.parametrize("name", sorted(directed_programs()))
def test_rtl_matches_golden_on_directed_programs(name, seed):
    params = {"lanes": 2, "n_flags": 1, "stack_depth": 8, "addr_width": 32}
    program, rate = directed_programs()[name]
    frontend = FrontEnd(program, mispredict_rate=rate, seed=seed, **params)
    frontend.run(600)
    steps = [(s.lanes, s.squash, s.restore) for s in frontend.trace]
    assert compare(DispatchFilter(**params), params, steps) is None, f"seed {seed}"


def test_checker_catches_a_filter_without_the_pop_hazard(seed):
    params = {"lanes": 2}
    program, rate = directed_programs()["nested_push_pop"]
    frontend = FrontEnd(program, mispredict_rate=rate, seed=seed, **params)
    frontend.run(300)
    steps = [(s.lanes, s.squash, s.restore) for s in frontend.trace]
    mismatch = compare(NoPopHazard(**params), params, steps)
    assert mismatch is not None and mismatch[1]["take"] != mismatch[2]["take"]


def test_checker_catches_a_filter_without_the_overflow_exception(seed):
    params = {"lanes": 4, "stack_depth": 8}
    program, rate = directed_programs()["recursion"]
    frontend = FrontEnd(program, mispredict_rate=rate, seed=seed, **params)
    frontend.run(600)
    assert frontend.counts["pf_exception"] > 0
    steps = [(s.lanes, s.squash, s.restore) for s in frontend.trace]
    assert compare(NoOverflowTrap(**params), params, steps) is not None, f"seed {seed}"


@pytest.mark.parametrize("params, error, message", [
    ({"lanes": 5}, ValueError, "lanes must be between 1 and 4, not 5"),
    ({"n_flags": 0}, ValueError, "n_flags must be between 1 and 8, not 0"),
    ({"stack_depth": 1.5}, TypeError, "stack_depth must be an integer, not 1.5"),
])  # fmt: skip
def test_rtl_parameter_errors(params, error, message):
    with pytest.raises(error, match=message):
        DispatchFilter(**params)


def test_generates_verilog():
    text = to_verilog(DispatchFilter(lanes=4, n_flags=8), "dispatch_filter")
    assert "module dispatch_filter" in text and "redirect_pc" in text
