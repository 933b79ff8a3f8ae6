"""Sequential equivalence of two Verilog designs of one block (yosys ``equiv_*``).

For a change that restructures a block on purpose (its Verilog changes, its
function must not), :func:`check_equivalence` proves the new design (``gate``)
equivalent to the old one (``gold``) from their reset values:

1. both are flattened (:func:`hwprof.verify.formal.flatten_design`); a signal of a
   submodule keeps its hierarchical name (``stage_d.hit``). A gate signal whose name
   without its first component (``hit``) is a gold signal's, and no gate signal's,
   is renamed to it, so that the registers of a design split into submodules are
   matched to the old design's by name; the gate's temporaries (``$12``, ``_12_``)
   and names numbered apart in a module (``cmp_lt$3``) are renamed apart, so that no
   two unrelated signals are paired;
2. ``equiv_make`` pairs every signal of the same name (the memories are mapped to
   flops first, ``memory_map``: their words are matched too), ``equiv_simple`` and
   ``equiv_induct -seq S`` prove the pairs: if every pair agrees for ``S`` cycles,
   it agrees the next; ``equiv_status -assert`` fails on a pair left unproven;
3. the base case, as yosys' ``equiv_induct`` asks for it ("the two circuits will not
   diverge after they produce equal outputs for at least S cycles"): from the reset
   (``init``) values the outputs agree for the first ``S + 1`` cycles (a ``miter``
   of the two, ``sat`` from the initial state).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..synth.area import run_yosys
from .formal import flatten_design, signal_names

__all__ = ["check_equivalence", "renames"]

#: an identifier of the Verilog yosys writes: escaped (``\\stage_d.hit ``) or plain
_IDENTIFIER = re.compile(r"\\(\S+) |(?<![\w$'])([A-Za-z_][\w$]*)")
#: a temporary's name: Amaranth's ``$12``, yosys' ``_12_``
_TEMPORARY = re.compile(r"\$.*|_\d+_")


def renames(gold: set[str], gate: set[str]) -> dict[str, str]:
    """Gate names to rename: ``a.rest`` -> ``rest`` where ``rest`` is a gold name and
    no gate name, ``rest`` no internal (``$``) name, and no other gate name maps there."""
    out: dict[str, str] = {}
    taken: dict[str, int] = {}
    for name in gate:
        if "." not in name:
            continue
        rest = name.split(".", 1)[1]
        if rest in gold and rest not in gate and not rest.rsplit(".", 1)[-1].startswith("$"):
            out[name] = rest
            taken[rest] = taken.get(rest, 0) + 1
    return {k: v for k, v in out.items() if taken[v] == 1}


def check_equivalence(gold_v: str, gate_v: str, top: str, workdir: Path,
                      seq: int = 2) -> tuple[bool, str]:  # fmt: skip
    """Prove ``gate_v`` equivalent to ``gold_v`` (module ``top`` in both): (proved,
    what yosys said: the number of pairs proved, or why not)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "gold").mkdir(exist_ok=True)
    (workdir / "gate").mkdir(exist_ok=True)
    gold = flatten_design(gold_v, top, workdir / "gold")
    gate = flatten_design(gate_v, top, workdir / "gate")
    mapping = renames(signal_names(gold), signal_names(gate))

    # names no pair may use: temporaries and a name Amaranth numbered apart in a module
    # (``cmp_lt``, ``cmp_lt$1``, ...: which one is which differs between the designs)
    numbered = {n.split("$", 1)[0] for n in signal_names(gold) | signal_names(gate)
                if "$" in n.rsplit(".", 1)[-1]}

    gate_names = signal_names(gate)

    def rename(match):
        name = match.group(1) or match.group(2)
        if name not in gate_names:
            return match.group(0)
        new = mapping.get(name, name)
        if _TEMPORARY.fullmatch(new.rsplit(".", 1)[-1]) or new.split("$", 1)[0] in numbered:
            return f"\\{name}__gate "  # never paired by its name
        return f"\\{new} " if new != name else match.group(0)

    (workdir / "gold.v").write_text(gold)
    (workdir / "gate.v").write_text(_IDENTIFIER.sub(rename, gate))
    prep = f"hierarchy -top {top}\nproc\nmemory -nomap\nmemory_map\nopt_clean\n"
    both = (f"read_verilog -sv gold.v\n{prep}rename -top gold\ndesign -stash gold\n"
            f"read_verilog -sv gate.v\n{prep}rename -top gate\ndesign -stash gate\n"
            "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n")
    load = both + "equiv_make gold gate equiv\nhierarchy -top equiv\nasync2sync\n"
    induct = load + (f"equiv_struct -icells\nequiv_induct -seq {seq}\n"
                     "equiv_status -assert\n")  # fmt: skip
    status, log, stderr = run_yosys(induct, workdir, "induct.ys", "induct.log")
    counts = re.findall(r"Found (\d+) \$equiv cells in equiv:", log)
    unproven = re.findall(r"Found a total of (\d+) unproven \$equiv cells", log)
    if status != 0:
        what = (f"{unproven[-1]} of {counts[-1] if counts else '?'} pairs unproven"
                if unproven else "yosys failed: " + " ".join((log + stderr).splitlines()[-3:]))
        return False, what
    base = (both + "miter -equiv -flatten -make_assert gold gate miter\nhierarchy -top miter\n"
            f"sat -tempinduct-baseonly -prove-asserts -verify -maxsteps {seq + 1}\n")
    status, log, stderr = run_yosys(base, workdir, "base.ys", "base.log")
    if status != 0:
        return False, "the base case fails: " + " ".join((log + stderr).splitlines()[-3:])
    return True, (f"equivalent: {counts[-1] if counts else '?'} pairs proved "
                  f"(equiv_induct -seq {seq}), {len(mapping)} gate names matched by their "
                  f"hierarchical name, base case {seq + 1} cycles from reset")
