"""``hwprof prove``: block properties proved with yosys sat (docs/verification.md).

The brr unit's proofs run in the default tier (a few seconds); every other
block's proofs, and the mutants each must reject, are soak tests (``make soak``
or ``make prove``).
"""

from __future__ import annotations

import pytest

from hwprof.catalog import get_top
from hwprof.cli import main
from hwprof.formal import (
    PROPERTIES,
    FormalError,
    Property,
    inject,
    properties_for,
    prove_top,
    run_property,
)
from hwprof.formal.properties import FORMAL_PARAMS, lfsr_escape_property
from hwprof.rtl.samplers import Stratified
from hwprof.rtl.tagged import TaggedCompressor
from hwprof.synth import to_verilog


def test_brr_properties_prove():
    params, results = prove_top(get_top("brr"))
    assert [r.name for r in results] == ["redirect_needs_decode_valid", "taken_is_and_chain",
                                         "lfsr_step", "lfsr_escape", "lfsr_never_zero"]  # fmt: skip
    for r in results:
        assert r.status == "proved", (r.name, r.summary())


def test_escape_property_fails_without_escape(tmp_path):
    """Drop the lock-up escape: the escape property has a counterexample from reset."""
    verilog = to_verilog(get_top("brr").construct({"lockup_escape": False}), "brr")
    result = run_property(verilog, "brr", lfsr_escape_property("brr.lfsr", "register", 20),
                          workdir=tmp_path)  # fmt: skip
    assert result.status == "failed" and not result.ok
    # the trace: a zero load, then an enabled cycle that stays at zero
    assert "\\lfsr.register" in result.trace and "\\load_data" in result.trace
    zero = "0" * 20
    assert result.trace.count(zero) >= 2
    assert result.vcd is not None and "lfsr.register" in result.vcd.read_text()


def test_never_zero_fails_with_zero_loads(tmp_path):
    """Without the no-zero-load assumption, "never zero" fails through a load."""
    verilog = to_verilog(get_top("brr").construct({}), "brr")
    prop = Property("never_zero_any_load", "", {"brr.lfsr": "always @* assert (register != 0);"})
    result = run_property(verilog, "brr", prop)
    assert result.status == "failed"


def test_taken_chain_catches_wrong_positions():
    """The chain property is written from the config: a brr with other stages fails it."""
    top = get_top("brr")
    wrong = to_verilog(top.construct({"positions": tuple(range(1, 17))}), "brr")
    prop = next(p for p in properties_for("brr", top.resolve({})) if p.name ==
                "taken_is_and_chain")  # fmt: skip
    assert run_property(wrong, "brr", prop).status == "failed"


def test_lfsr_step_catches_zero_detector_stuck_bit():
    """The mutation run's brr survivor 15: zero-detector input 3 stuck at 0. Escape and
    never-zero still hold (a one-hot state is merely pushed to another non-zero state);
    the step property does not."""
    top = get_top("brr")
    verilog = to_verilog(top.construct({}), "brr")
    broken = verilog.replace("= | register;", "= | {register[19:4], 1'h0, register[2:0]};")
    assert broken != verilog
    verdicts = {p.name: run_property(broken, "brr", p).status
                for p in properties_for("brr", top.resolve({})) if p.name.startswith("lfsr")}
    assert verdicts == {"lfsr_step": "failed", "lfsr_escape": "proved",
                        "lfsr_never_zero": "proved"}  # fmt: skip


def test_inject_unknown_module():
    with pytest.raises(FormalError, match="no module 'nope'"):
        inject("module a(x);\nendmodule\n", "nope", "")


def test_unknown_signal_is_an_error_not_a_pass():
    verilog = to_verilog(get_top("brr").construct({}), "brr")
    prop = Property("bad", "", {"brr": "always @* assert (no_such_signal);"})
    with pytest.raises(FormalError):
        run_property(verilog, "brr", prop)


def test_cli_prove_brr(capsys):
    assert main(["prove", "brr", "-p", "lockup_escape=0"]) == 0
    out = capsys.readouterr().out
    assert "lfsr_zero_only_by_load: proved" in out


def test_cli_prove_bad_input(capsys):
    assert main(["prove", "stratified_pipeline"]) == 2
    assert "has no properties" in capsys.readouterr().err
    assert main(["prove", "nope"]) == 2
    assert main(["prove", "brr", "-p", "width=3"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "width" in err


# --- soak: every other block, and mutants each proof must reject ------------------------


@pytest.mark.soak
@pytest.mark.parametrize("name", sorted(set(PROPERTIES) - {"brr"}))
def test_block_properties_prove(name):
    _, results = prove_top(get_top(name))
    for r in results:
        assert r.status == "proved", (name, r.name, r.summary())


def _props(name, overrides=None):
    top = get_top(name)
    return top.resolve({**FORMAL_PARAMS.get(name, {}), **(overrides or {})})


@pytest.mark.soak
def test_tagged_mutant_breaks_count_preservation():
    params = _props("tagged_compressor")
    kwargs = {k: v for k, v in params.items()}
    verilog = to_verilog(TaggedCompressor(**kwargs, keep_counts=False), "tagged_compressor")
    prop = next(p for p in properties_for("tagged_compressor", params)
                if p.name == "transition_preserves_count")  # fmt: skip
    assert run_property(verilog, "tagged_compressor", prop).status == "failed"


@pytest.mark.soak
def test_stratified_mutant_breaks_conservation():
    params = _props("stratified")
    verilog = to_verilog(Stratified(**params, wrap_at=params["rate"] - 1), "stratified")
    prop = next(p for p in properties_for("stratified", params) if p.name == "count_conservation")
    assert run_property(verilog, "stratified", prop).status == "failed"


@pytest.mark.soak
def test_multihash_off_by_one_estimate_breaks_counts():
    """estimate = min + 2 (an off-by-one in the promoted count) exceeds the tuples seen.

    (Dropping the bypass, ``MultiHash(bypass=False)``, undercounts: an upper
    bound cannot see it; the cocotb regression's mutant test does.)
    """
    params = _props("multihash")
    verilog = to_verilog(get_top("multihash").construct(params), "multihash")
    broken = verilog.replace("= low + 1'h1;", "= low + 2'h2;")
    assert broken != verilog
    prop = next(p for p in properties_for("multihash", params)
                if p.name == "counts_within_interval")  # fmt: skip
    result = run_property(broken, "multihash", prop)
    assert result.status == "failed", result.summary()
