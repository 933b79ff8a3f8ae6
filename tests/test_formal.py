"""``hwprof prove``: block properties proved with yosys sat (docs/verification.md).

The brr unit's proofs run in the default tier (a few seconds); every other
block's proofs, and the mutants each must reject, are soak tests (``make soak``
or ``make prove``).
"""

from __future__ import annotations

import json
import re

import pytest

from hwprof.catalog import get_top
from hwprof.cli import main
from hwprof.rtl.multihash import MultiHash
from hwprof.rtl.samplers import Stratified
from hwprof.rtl.tagged import TaggedCompressor
from hwprof.synth import to_verilog
from hwprof.tops.sva import lfsr_escape_property
from hwprof.verify.formal import FormalError, Property, inject, resolve_names, run_property
from hwprof.verify.prove import formal_param_sets, provable, prove_top, prove_tops


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
    prop = next(p for p in get_top("brr").properties(top.resolve({})) if p.name ==
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
                for p in get_top("brr").properties(top.resolve({})) if p.name.startswith("lfsr")}
    assert verdicts == {"lfsr_step": "failed", "lfsr_escape": "proved",
                        "lfsr_never_zero": "proved"}  # fmt: skip


def test_sampler_lfsr_step_catches_zero_detector_inverted_bit():
    """The mutation runs' sampler_random survivor 34: one zero-detector input of the
    sampler's 32-bit LFSR inverted (the escape fires on 0x00008000, about once in 2^28
    tuples, out of reach of the cocotb regression). The LFSR properties written from
    the golden model's generator reject it; the unmutated sampler proves them."""
    top = get_top("sampler_random")
    params = _props("sampler_random")
    verilog = to_verilog(top.construct(formal_param_sets(get_top("sampler_random"))[0]), top.name)
    broken = verilog.replace("= | register;",
                             "= | {register[31:16], ~register[15], register[14:0]};")
    assert broken != verilog
    props = [p for p in get_top("sampler_random").properties(params) if p.name.startswith("lfsr")]
    assert {p.name for p in props} == {"lfsr_step", "lfsr_escape", "lfsr_never_zero"}
    for text, expected in ((verilog, "proved"), (broken, "failed")):
        verdicts = {p.name: run_property(text, top.name, p).status for p in props
                    if p.name in ("lfsr_step", "lfsr_escape")}
        assert verdicts == {"lfsr_step": expected, "lfsr_escape": expected}


def test_predecoded_dispatch_property_needs_the_predecode_constraint():
    """The predecoded filter's dispatch property decodes the word itself and assumes
    the fetch queue's bits are its predecode: proved with the assumption; without it
    (bits free) a counterexample, so the property does read the word, not the bits."""
    top = get_top("dispatch_filter")
    params = top.resolve({"lanes": 2})
    assert params["predecoded"] is True
    verilog = to_verilog(top.construct({"lanes": 2}), top.name)
    prop = next(p for p in get_top("dispatch_filter").properties(params)
                if p.name == "pi_dispatch_by_flag")  # fmt: skip
    assert run_property(verilog, top.name, prop).status == "proved"
    text = prop.modules["dispatch_filter"]
    free = re.sub(r"always @\* assume \(insn_pre\[[^;]*;\n", "", text)
    assert free != text
    unconstrained = Property(prop.name, "", {"dispatch_filter": free})
    assert run_property(verilog, top.name, unconstrained).status == "failed"


def test_inject_unknown_module():
    with pytest.raises(FormalError, match="no module 'nope'"):
        inject("module a(x);\nendmodule\n", "nope", "")


def test_unknown_signal_is_an_error_not_a_pass():
    verilog = to_verilog(get_top("brr").construct({}), "brr")
    prop = Property("bad", "", {"brr": "always @* assert (no_such_signal);"})
    with pytest.raises(FormalError, match="names 'no_such_signal', which is no signal"):
        run_property(verilog, "brr", prop)


def test_hierarchical_names_resolve_and_unknown_ones_are_errors():
    """A property reads a submodule's signal by its flattened hierarchical name
    (``lfsr.register``); a hierarchical name that is no signal of the flattened top is
    an error naming it (before yosys runs), as is one under a missing submodule."""
    verilog = to_verilog(get_top("brr").construct({}), "brr")
    good = Property("never_zero", "", {"brr": "always @* assume (!load || load_data != 0);\n"
                                              "always @* assert (lfsr.register != 0);"})
    assert run_property(verilog, "brr", good).status == "proved"
    for name in ("lfsr.registr", "lfsr2.register"):
        bad = Property("bad", "", {"brr": f"always @* assert ({name} != 0);"})
        with pytest.raises(FormalError, match=f"names '{name}', which is no signal of the "
                                              "flattened brr"):
            run_property(verilog, "brr", bad)
    # the text of a submodule (key ``brr.lfsr``) reads its signals without the prefix
    assert resolve_names("assert (register != f_x);", {"lfsr.register"}, "lfsr") == \
        "assert (\\lfsr.register  != f_x);"
    with pytest.raises(FormalError, match="not 'brr' or one of its submodules"):
        run_property(verilog, "brr", Property("bad", "", {"other": "always @* assert (1);"}))


def test_prove_brr_prints_and_records():
    """One run of brr's properties (lockup_escape=0): the lines ``hwprof prove`` prints
    and the records ``hwprof prove --json`` prints."""
    lines, records = [], []
    assert prove_tops([get_top("brr")], {"lockup_escape": False}, out=lines.append,
                      records=records)  # fmt: skip
    assert "  lfsr_zero_only_by_load: proved (k-induction, length 1)" in [
        re.sub(r" \[[0-9.]+ s\]$", "", line) for line in lines]  # fmt: skip
    names = [r["property"] for r in records]
    assert "lfsr_zero_only_by_load" in names and len(names) == len(set(names))
    for r in records:
        assert r["top"] == "brr" and r["params"]["lockup_escape"] is False, r
        assert (r["status"], r["ok"], r["trace"]) == ("proved", True, ""), r
        assert r["seconds"] > 0 and f"  {r['property']}: proved" in " ".join(lines)


def test_cli_prove_prints_lines_or_json(monkeypatch, capsys):
    """``hwprof prove``: the lines by default; with --json the records alone, as JSON."""
    import hwprof.verify.prove as prove

    record = {"top": "brr", "params": {"width": 20}, "property": "p", "status": "proved",
              "steps": 1, "ok": True, "seconds": 0.5, "trace": ""}  # fmt: skip

    def fake(tops, overrides, out=print, records=None, **options):
        out("brr (defaults):")
        out("  p: proved (k-induction, length 1) [0.5 s]")
        if records is not None:
            records.append(record)
        return True

    monkeypatch.setattr(prove, "prove_tops", fake)
    assert main(["prove", "brr"]) == 0
    lines = ["brr (defaults):", "  p: proved (k-induction, length 1) [0.5 s]"]
    assert capsys.readouterr().out.splitlines() == lines
    assert main(["prove", "brr", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [record]


def test_cli_prove_bad_input(capsys):
    assert main(["prove", "stratified_pipeline"]) == 2
    assert "has no properties" in capsys.readouterr().err
    assert main(["prove", "nope"]) == 2
    assert main(["prove", "brr", "-p", "width=3"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "width" in err


# --- soak: every other block, and mutants each proof must reject ------------------------


@pytest.mark.soak
@pytest.mark.parametrize("name", sorted(set(provable()) - {"brr"}))
def test_block_properties_prove(name):
    for index in range(len(formal_param_sets(get_top(name)))):
        params, results = prove_top(get_top(name), index=index)
        assert results
        for r in results:
            assert r.status == "proved", (name, params, r.name, r.summary())


def _props(name, overrides=None, index=0):
    top = get_top(name)
    return top.resolve(formal_param_sets(get_top(name), overrides)[index])


@pytest.mark.soak
def test_tagged_mutant_breaks_count_preservation():
    params = _props("tagged_compressor")
    kwargs = {k: v for k, v in params.items()}
    verilog = to_verilog(TaggedCompressor(**kwargs, keep_counts=False), "tagged_compressor")
    prop = next(p for p in get_top("tagged_compressor").properties(params)
                if p.name == "transition_preserves_count")  # fmt: skip
    assert run_property(verilog, "tagged_compressor", prop).status == "failed"


@pytest.mark.soak
def test_stratified_mutant_breaks_conservation():
    params = _props("stratified")
    verilog = to_verilog(Stratified(**params, wrap_at=params["rate"] - 1), "stratified")
    prop = next(p for p in get_top("stratified").properties(params)
                if p.name == "count_conservation")
    assert run_property(verilog, "stratified", prop).status == "failed"


@pytest.mark.soak
def test_multihash_off_by_one_estimate_breaks_counts():
    """estimate = min + 2 (an off-by-one in the promoted count) exceeds the tuples seen.

    (Dropping the bypass, ``MultiHash(bypass=False)``, undercounts: an upper
    bound cannot see it; the cocotb regression's mutant test does.)
    """
    params = _props("multihash", {"ways": 0})
    verilog = to_verilog(get_top("multihash").construct(params), "multihash")
    broken = verilog.replace("= low + 1'h1;", "= low + 2'h2;")
    assert broken != verilog
    prop = next(p for p in get_top("multihash").properties(params)
                if p.name == "counts_within_interval")  # fmt: skip
    result = run_property(broken, "multihash", prop)
    assert result.status == "failed", result.summary()


# --- multi-hash: the block RAM design (ways > 0) and its mutants ---------------------------


def test_multihash_formal_sets_cover_both_designs():
    """Both accumulator designs are proved, each with its own properties; ``-p ways=W``
    leaves one set."""
    sets = formal_param_sets(get_top("multihash"))
    assert [s["ways"] for s in sets] == [2, 0]
    assert [s["ways"] for s in formal_param_sets(get_top("multihash"), {"ways": 0})] == [0]
    top = get_top("multihash")
    bram, cam = (get_top("multihash").properties(top.resolve(s)) for s in sets)
    assert [p.name for p in bram] == [p.name for p in cam] == [
        "counts_within_interval", "records_handshake", "tuples_committed_once"]
    # each names its own design's state (a wrong name would be a yosys error)
    assert "counts0_0[" in bram[0].modules["multihash"]
    assert "readout.fifo.level" in bram[0].modules["multihash"]
    # the readout's set address register has its invariant (the step needs it)
    assert "assert (readout.ro_set == (" in bram[0].modules["multihash"]
    assert "hash.s1_valid" in cam[0].modules["multihash"]


def _bram(prop_name, mutate=None, maxsteps=None, text=None, overrides=None, pick=None):
    """Run one block RAM property on the formal set's Verilog, optionally mutated
    (``pick``: the design's ``readout_pick``, by its sets when None)."""
    params = _props("multihash", overrides)
    assert params["ways"] > 0
    verilog = to_verilog(MultiHash(**params, readout_pick=pick), "multihash")
    if mutate is not None:
        pattern, replacement = mutate
        verilog, count = re.subn(pattern, replacement, verilog)
        assert count == 1, pattern
    prop = next(p for p in get_top("multihash").properties(params) if p.name == prop_name)
    modules = dict(prop.modules)
    if text is not None:
        modules["multihash"] = text(modules["multihash"])
    prop = Property(prop.name, prop.description, modules, maxsteps or prop.maxsteps)
    return params, run_property(verilog, "multihash", prop)


@pytest.mark.soak
def test_multihash_bram_forwarding_across_intervals_breaks_counts():
    """Forward stage e's write to d also when it is of the previous interval (the
    interval check of the forwarding dropped: ``c_eq_ep1``, registered in C since
    the forwarding selects of the tuple one ahead became registers, e8f2be7): the
    first tuple of an interval counts on top of the last one's counter, above the
    tuples seen."""
    params, result = _bram("counts_within_interval",
                           (r"c_eq_ep1 <= \\\$\d+ ;", "c_eq_ep1 <= 1'h1;"),
                           overrides={"interval_length": 4})  # short: a quick failure
    assert result.status == "failed", result.summary()
    # from reset: a whole interval first (plus the pipeline)
    assert result.steps > params["interval_length"]
    assert "c_eq_ep1" in result.trace


@pytest.mark.soak
def test_multihash_bram_without_forwarding_breaks_counts():
    """``MultiHash(bypass=False)``, the block RAM design without forwarding: a tuple two
    behind the first write of a flushed counter sees its valid bit set but reads the
    word of an earlier interval (the write was still in stage e), above the tuples seen."""
    params = _props("multihash", {"interval_length": 4})
    verilog = to_verilog(MultiHash(**params, bypass=False), "multihash")
    prop = next(p for p in get_top("multihash").properties(params)
                if p.name == "counts_within_interval")  # fmt: skip
    result = run_property(verilog, "multihash", prop)
    assert result.status == "failed", result.summary()


@pytest.mark.soak
def test_multihash_bram_promotion_off_by_one_breaks_threshold():
    """Promote when every counter is >= T - 2 (the stage's ``T - 1`` register off by
    one): an entry is promoted with a count of T - 1."""
    _, result = _bram("counts_within_interval",
                      (r"a_thr1 <= \\\$\d+ ;", "a_thr1 <= threshold - 8'd2;"))
    assert result.status == "failed", result.summary()


@pytest.mark.soak
def test_multihash_bram_threshold_bound_is_tight():
    """The same RTL against "promoted entries hold >= T + 1": false (a count of exactly
    T is reachable), so the proved ">= T" is not vacuous."""
    t = _props("multihash")["threshold"]
    _, result = _bram("counts_within_interval",
                      text=lambda s: s.replace(f" >= {t});", f" >= {t + 1});"))
    assert result.status == "failed", result.summary()


@pytest.mark.soak
def test_multihash_bram_stalls_and_full_fifo_are_reachable():
    """The proved set reaches stalls and a full record FIFO (the handshake and
    "across stalls" properties are not vacuous there)."""
    for claim in ("always @* assert (tuples__ready);",
                  "always @* assert (readout.fifo.level != 4);"):
        params = _props("multihash")
        verilog = to_verilog(get_top("multihash").construct(params), "multihash")
        prop = Property("reach", "", {"multihash": claim}, maxsteps=24)
        assert run_property(verilog, "multihash", prop).status == "failed", claim


def _without_ro_set_invariant(text):
    lines = [line for line in text.splitlines() if "assert (readout.ro_set ==" not in line]
    assert len(lines) == len(text.splitlines()) - 1
    return "\n".join(lines) + "\n"


# ro_set's next state, ``after_boundary ? first_new : (go & ~keep ? second : ro_set)``
_RO_SET_NEXT = r"assign ro_set_next = \\\$\d+  \? \{ \\\$\d+ , \\\$\d+  \} : (\\\$\d+) ;"


@pytest.mark.soak
@pytest.mark.parametrize("invariant", [True, False], ids=["invariant", "records"])
def test_multihash_bram_readout_address_without_boundary_case(invariant):
    """The readout's set address register (``ro_set``) without its boundary case (it
    holds at a boundary instead of taking the new pending bits' first set): the first
    readout reads the set ``ro_set`` held. ``counts_within_interval`` fails on the
    ``ro_set`` invariant; without that invariant it still fails, on the records' bound
    (the word read is not a pending entry's count): a real bug, not only an invariant
    the RTL does not keep."""
    _, result = _bram("counts_within_interval", (_RO_SET_NEXT, r"assign ro_set_next = \1 ;"),
                      text=None if invariant else _without_ro_set_invariant,
                      overrides={"interval_length": 4})  # short: a quick failure
    assert result.status == "failed", result.summary()
    assert "ro_set" in result.trace


@pytest.mark.soak
def test_multihash_bram_address_pick_properties_prove():
    """The readout's pick from its address register (``readout_pick="address"``, the
    design of more than PREFIX_PICK_SETS sets: the first pending set is ``ro_set``'s
    decode where its set has a pending way, no prefix OR), forced at the formal set's
    4 sets: every block RAM property proves, ``counts_within_interval`` with the
    ``ro_set`` invariant the pick now relies on, and that of the pick's "anything
    pending" flop (``ro_any == (pending != 0)``: its next state is computed from
    ``ro_set``'s cases, not from the pending bits' next state)."""
    params = _props("multihash")
    assert params["ways"] > 0
    verilog = to_verilog(MultiHash(**params, readout_pick="address"), "multihash")
    assert "ro_hot" in verilog and "set_prefix" not in verilog and "ro_any" in verilog
    for prop in get_top("multihash").properties(params):
        result = run_property(verilog, "multihash", _with_ro_any_invariant(prop))
        assert result.status == "proved", (prop.name, result.summary())


#: the address pick's "anything pending" flop (not in the prefix pick's design: the
#: properties, written from the parameters, do not name it)
_RO_ANY_INVARIANT = "always @* assert (readout.ro_any == (stage_e.pending != 0));\n"


def _with_ro_any_invariant(prop):
    modules = dict(prop.modules)
    modules["multihash"] = modules.get("multihash", "") + _RO_ANY_INVARIANT
    return Property(prop.name, prop.description, modules, prop.maxsteps)


# ro_any's next state when no boundary: ``ro_go ? keep | above_any : ro_any``
_RO_ANY_AFTER_PICK = r"assign (\\\$\d+)  = ro_go \? \\\$\d+  : ro_any;"


@pytest.mark.soak
def test_multihash_bram_address_pick_ro_any_not_cleared():
    """The address pick's "anything pending" flop not cleared by the last pick (it
    holds while ``ro_go``): the readout goes on issuing reads with nothing pending.
    ``counts_within_interval``, without ``ro_any``'s invariant in the property, has a
    counterexample from reset (the base case: 12 cycles at intervals of 4 tuples), so
    the mutant breaks the design's own bounds, not only an invariant added for it."""
    _, result = _bram("counts_within_interval", (_RO_ANY_AFTER_PICK, r"assign \1  = ro_any;"),
                      overrides={"interval_length": 4}, pick="address")
    assert result.status == "failed", result.summary()
    assert "\\ro_any" in result.trace


# the address pick's: ``after_boundary ? (ro_e_first ? e_set : first_old) : (...)``
_RO_SET_NEXT_ADDRESS = r"assign ro_set_next = \\\$\d+  \? \\\$\d+  : (\\\$\d+) ;"


@pytest.mark.soak
def test_multihash_bram_address_pick_without_boundary_case():
    """The address pick with ``ro_set`` holding at a boundary (as the prefix pick's
    mutant above): the pick then reads and clears nothing, or the wrong set; fails
    ``counts_within_interval`` without the ``ro_set`` invariant too."""
    _, result = _bram("counts_within_interval",
                      (_RO_SET_NEXT_ADDRESS, r"assign ro_set_next = \1 ;"),
                      text=_without_ro_set_invariant, overrides={"interval_length": 4},
                      pick="address")
    assert result.status == "failed", result.summary()
    assert "ro_set" in result.trace


@pytest.mark.soak
def test_multihash_bram_readout_address_without_same_set_case():
    """``ro_set`` moves on after every pick (the "another way of the set is pending"
    test, ``ro_keep``, stuck at 0): with two ways of a set pending, the second is read
    from the next set's words (or the end value). Fails ``counts_within_interval``."""
    _, result = _bram("counts_within_interval",
                      (r"assign ro_keep = \| \\\$\d+ ;", "assign ro_keep = 1'h0;"))
    assert result.status == "failed", result.summary()


@pytest.mark.soak
def test_multihash_bram_handshake_mutant():
    """The FIFO popped whether or not the consumer is ready: records change while
    valid and not ready."""
    _, result = _bram("records_handshake", (r"\.r_en\(records__ready\)", ".r_en(1'h1)"),
                      maxsteps=24)  # the first record comes after an interval
    assert result.status == "failed", result.summary()


@pytest.mark.soak
def test_multihash_bram_accept_during_stall_is_caught():
    """A stage a that takes the input's valid whether or not it is ready: a tuple
    offered during a stall enters the pipeline and is counted again when accepted."""
    _, result = _bram("tuples_committed_once",
                      (r"a_valid <= \\\$\d+ ;", "a_valid <= rst ? 1'h0 : tuples__valid;"),
                      maxsteps=24)  # fmt: skip
    assert result.status == "failed", result.summary()
