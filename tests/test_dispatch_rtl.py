"""dispatch_filter RTL (Amaranth simulator) against the golden filter, every cycle."""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hwprof.cocotb_tests.dispatch_stimulus import random_steps
from hwprof.golden.dispatch import DispatchFilter as Golden
from hwprof.golden.dispatch import Lane, golden_filter_params
from hwprof.golden.frontend import FrontEnd, directed_programs
from hwprof.golden.isa_profile import PCI_OPS, PI_OPS, Insn, encode, predecode
from hwprof.rtl.dispatch_filter import DispatchFilter
from hwprof.rtl.dispatch_filter import predecode as rtl_predecode
from hwprof.synth import to_verilog
from tests.frontend_replay import replay
from tests.selective_dispatch_mutants import NoOverflowTrap, NoPopHazard

SCALARS = ("take", "dispatch", "drop", "stall", "redirect", "misfetch", "flag_mispredict",
           "redirect_pc", "overflow", "underflow", "halted", "flags")  # fmt: skip


def compare(dut, params, steps, predecoder=predecode):
    """Drive ``steps`` (lanes, squash, restore); return the first mismatch or None.

    A ``predecoded`` filter gets each word's bits from ``predecoder`` (the golden
    :func:`~hwprof.golden.isa_profile.predecode`, from the ISA's decode).
    """
    golden = Golden(**golden_filter_params(params))
    n = golden.config.lanes

    def drive(ctx, step):
        lanes, squash, restore = step
        padded = list(lanes) + [Lane()] * (n - len(lanes))
        for name in ("valid", "pred_taken", "skipped"):
            ctx.set(getattr(dut, name), sum(getattr(x, name) << i for i, x in enumerate(padded)))
        for i, lane in enumerate(padded):
            ctx.set(dut.insn[i], lane.insn)
            ctx.set(dut.pc[i], lane.pc)
            if dut.predecoded:
                bits = predecoder(lane.insn)
                for field, bit in zip(("is_pci", "is_pi", "is_cti"), bits, strict=True):
                    ctx.set(getattr(dut.insn_pre[i], field), bit)
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
    {"lanes": 4, "predecoded": True}, {"lanes": 2, "n_flags": 2, "stack_depth": 3,
                                       "predecoded": True},
])  # fmt: skip
def test_rtl_matches_golden_on_random_heads(params, seed):
    dut = DispatchFilter(**params)
    config = Golden(**golden_filter_params(params)).config
    steps = list(random_steps(random.Random(seed), config, 1500))
    assert compare(dut, params, steps) is None, f"seed {seed}"


def test_predecoded_filter_reads_its_predecode_bits(seed):
    """The checker fails when the predecode bits lie: each bit taken away in turn (a
    word's PCI, PI or control-transfer bit read as 0) is a mismatch."""
    params = {"lanes": 4, "predecoded": True}
    steps = list(random_steps(random.Random(seed), Golden(lanes=4).config, 1500))
    for bit in range(3):
        def wrong(word, bit=bit):
            bits = list(predecode(word))
            bits[bit] = 0
            return tuple(bits)
        assert compare(DispatchFilter(**params), params, steps, wrong) is not None, \
            f"bit {bit}, seed {seed}"


def test_predecode_matches_the_isa_decode(seed):
    """The RTL predecode (what a fetch queue stores) equals the golden one, itself
    from the ISA's decode: every PCI and PI encoding, reserved ``add`` forms, random
    words."""
    words = [encode(Insn("pci", op, k=k)) for op in PCI_OPS for k in range(8)]
    words += [encode(Insn("pi", op, k=k)) for op in PI_OPS for k in range(8)]
    add = encode(Insn("pi", "add"))
    words += [add | bits << 25 for bits in range(16)] + [0x13, 0]
    rng = random.Random(seed)
    words += [rng.getrandbits(32) for _ in range(2000)]
    # the golden predecode on the paper's kinds (docs/isa.md)
    assert predecode(encode(Insn("pci", "pushpf", k=3))) == (1, 0, 0)
    assert predecode(encode(Insn("pi", "beq", k=1))) == (0, 1, 1)
    assert predecode(encode(Insn("pi", "lw"))) == (0, 1, 0)
    assert predecode(add | 1 << 25) == (0, 0, 0) and predecode(0x13) == (0, 0, 0)
    m = Module()
    word = Signal(32)
    bits = rtl_predecode(m, word, "q")
    got = []

    async def bench(ctx):
        for w in words:
            ctx.set(word, w)
            got.append((ctx.get(bits.is_pci), ctx.get(bits.is_pi), ctx.get(bits.is_cti)))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    assert got == [predecode(w) for w in words]


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
    ({"predecoded": 1}, TypeError, "predecoded must be a bool, not 1"),
])  # fmt: skip
def test_rtl_parameter_errors(params, error, message):
    with pytest.raises(error, match=message):
        DispatchFilter(**params)


def test_generates_verilog():
    text = to_verilog(DispatchFilter(lanes=4, n_flags=8), "dispatch_filter")
    assert "module dispatch_filter" in text and "redirect_pc" in text
