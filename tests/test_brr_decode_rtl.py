"""brr_decode: golden behaviour from the paper's decode summary, RTL in the Amaranth simulator."""

import random

import pytest

from hwprof.cocotb_tests.brr_stimulus import random_word
from hwprof.golden.brr import Brr as PlainBrr
from hwprof.golden.brr_isa import encode_brr
from hwprof.golden.brr_variants import BrrDecode as Golden
from hwprof.rtl.brr_decode import BrrDecode
from tests.pysim import compare

OUTPUTS = ["is_brr", "request", "redirect_valid", "redirect_target", "btb_inhibit", "state"]


def stimulus(rng, cycles, p_brr=0.4):
    for _ in range(cycles):
        yield {"insn": random_word(rng, p_brr), "pc": rng.getrandbits(32),
               "valid": int(rng.random() < 0.85)}  # fmt: skip


def run(rtl_params, golden_params, stim, outputs=OUTPUTS):
    dut = BrrDecode(**rtl_params)
    model = Golden(**golden_params)
    return compare(dut, lambda **kw: model.step(**kw), list(stim), outputs)


def test_non_brr_instructions_have_no_effect(seed):
    """Random non-brr words: no request, no redirect, no BTB inhibit, the LFSR holds."""
    rng = random.Random(seed)
    model = Golden()
    for _ in range(5000):
        word = random_word(rng, p_brr=0.0)
        out = model.step(insn=word, pc=rng.getrandbits(32), valid=1)
        assert (out["is_brr"], out["request"], out["redirect_valid"], out["btb_inhibit"]) == (
            0, 0, 0, 0), f"{word:#010x}, seed {seed}"  # fmt: skip
        assert out["state"] == 1
    # An invalid slot holding a brr word has no effect either.
    assert model.step(insn=encode_brr(0, 8), pc=0, valid=0)["request"] == 0


def test_brr_outcomes_follow_the_single_issue_unit(seed):
    """The brr sequence of a decode lane is the foundation unit's, one LFSR step per brr."""
    rng = random.Random(seed)
    model, plain = Golden(), PlainBrr()
    for _ in range(3000):
        freq, offset = rng.randrange(4), 2 * rng.randrange(-2048, 2048)
        pc = rng.getrandbits(32)
        out = model.step(insn=encode_brr(freq, offset), pc=pc, valid=1)
        expected = plain.step(decode_valid=1, freq=freq)
        assert out["redirect_valid"] == expected.redirect and out["state"] == expected.state
        assert out["btb_inhibit"] == out["request"] == 1
        if out["redirect_valid"]:
            assert out["redirect_target"] == (pc + offset) % 2**32


def test_redirect_target_wraps_around_the_address_space():
    model = Golden()
    out = model.step(insn=encode_brr(0, -8), pc=4, valid=1)
    assert out["redirect_target"] == 2**32 - 4


CONFIGS = [{}, {"target_adder": False}, {"width": 32, "seed": 0xCAFE}, {"lockup_escape": True}]


@pytest.mark.parametrize(
    "params", CONFIGS, ids=lambda p: ",".join(map(str, p.items())) or "default"
)
def test_rtl_matches_golden(params, seed):
    rng = random.Random(seed)
    outputs = OUTPUTS if params.get("target_adder", True) else [
        o for o in OUTPUTS if o != "redirect_target"]  # fmt: skip
    stim = [{k: v for k, v in s.items() if k != "pc" or params.get("target_adder", True)}
            for s in stimulus(rng, 1500)]  # fmt: skip
    assert run(params, params, stim, outputs) == [], f"seed {seed}"


def test_mutant_that_ignores_the_reserved_bits_is_caught(seed, monkeypatch):
    """A decoder that checks only the opcode mis-decodes near misses: the check must see it."""
    import hwprof.rtl.brr_decode as module

    monkeypatch.setattr(module, "MATCH_MASK", 0x7F)
    rng = random.Random(seed)
    assert run({}, {}, stimulus(rng, 3000)) != [], f"seed {seed}"


def test_mutant_with_a_wrong_immediate_bit_is_caught(seed, monkeypatch):
    from amaranth.hdl import Cat, Const

    import hwprof.rtl.brr_decode as module

    def wrong(insn):  # imm[11] and imm[12] swapped
        match = (insn & module.MATCH_MASK) == module.MATCH_VALUE
        offset = Cat(Const(0, 1), insn[8:12], insn[25:31], insn[31], insn[7]).as_signed()
        return match, insn[20:24], offset

    monkeypatch.setattr(module, "brr_word", wrong)
    rng = random.Random(seed)
    assert run({}, {}, stimulus(rng, 3000)) != [], f"seed {seed}"


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"target_adder": 1}, TypeError, "target_adder must be a bool, not 1"),
        ({"width": 40}, ValueError, "width must be between 16 and 32, not 40"),
        ({"seed": 0}, ValueError, "seed must be non-zero"),
    ],
)
def test_parameter_errors(params, error, message):
    with pytest.raises(error, match=message):
        BrrDecode(**params)
