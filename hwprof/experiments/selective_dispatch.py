"""Selective dispatch and profile-flag prediction on basic-block profiling (Vaswani et al.).

The golden front end (:mod:`hwprof.golden.frontend`) runs a program whose
methods are instrumented for basic-block profiling as in the paper's Fig. 3
(``pushpf; resetpf`` at entry, a five-PI counter at every basic block, ``poppf``
at exit). A simulated runtime patches every method's ``resetpf`` into ``setpf``
for a fraction q of each sampling period (paper sec. VI-B: on for 2, 5 and 10
million out of every 20 million instructions; here periods of ``period``
correct-path instructions), for q = 0, 10, 25, 50 and 100%, with and without the
profile-flag predictor (2-way x 64 sets, blocks of >= 4 instructions).

Reported per run, as fractions of the profile instructions on the correct path:
PIs fetched (including wrong-path fetches), decoded and dispatched; cycles per
correct-path program instruction (executed or skipped); the predictor's skips
and flag mis-predictions; the basic-block profile accuracy ``(1 - MD/2) * 100``
of sec. VI-C (Manhattan distance between the sampled block counts and the full
block execution counts).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from ..golden.frontend import BRANCH, FrontEnd, Program
from ..golden.isa_profile import NOP, Insn, decode, encode
from . import Experiment, cell, label_axes

__all__ = ["instrumented_program", "toggle_patches", "profile_accuracy", "run", "EXPERIMENTS"]

FRACTIONS = (0.0, 0.10, 0.25, 0.50, 1.0)
SETPF, RESETPF = encode(Insn("pci", "setpf")), encode(Insn("pci", "resetpf"))


def _counter() -> list[int]:
    """The Fig. 3 block counter: lui/b, lw/b, addi/b, lui/b, sw/b."""
    return [encode(Insn("pi", "lui", 0, rd=26, imm=0x10)),
            encode(Insn("pi", "lw", 0, rd=26, rs1=26, imm=8)),
            encode(Insn("pi", "addi", 0, rd=26, rs1=26, imm=1)),
            encode(Insn("pi", "lui", 0, rd=27, imm=0x10)),
            encode(Insn("pi", "sw", 0, rs1=27, rs2=26, imm=8))]  # fmt: skip


def instrumented_program(rng: random.Random, methods=8, blocks=5, base=0x1000):
    """``(program, slots)``: a main loop calling ``methods`` instrumented methods.

    Each method: prologue, ``pushpf``, ``resetpf`` (a *slot*, patched by the
    runtime), ``blocks`` basic blocks (counter + 2..8 ordinary instructions + a
    branch: back to the block with probability 0.2..0.8, else on), ``poppf``,
    epilogue, return.
    """
    items: list[tuple[int, object, float]] = []  # (word, target label, taken)
    labels: dict[object, int] = {}

    def label(name):
        labels[name] = base + 4 * len(items)

    label("main")
    for f in range(methods):
        items.append((NOP, None, 0.0))
        items.append((BRANCH, ("f", f), 1.0))
        label(("ret", f))
    items.append((BRANCH, "main", 1.0))
    slots = []
    for f in range(methods):
        label(("f", f))
        items.append((NOP, None, 0.0))
        items.append((encode(Insn("pci", "pushpf")), None, 0.0))
        slots.append(base + 4 * len(items))
        items.append((RESETPF, None, 0.0))
        for b in range(blocks):
            label(("b", f, b))
            items += [(w, None, 0.0) for w in _counter()]
            items += [(NOP, None, 0.0)] * rng.randint(2, 8)
            items.append((BRANCH, ("b", f, b), rng.uniform(0.2, 0.8)))
        items.append((encode(Insn("pci", "poppf")), None, 0.0))
        items.append((NOP, None, 0.0))
        items.append((BRANCH, ("ret", f), 1.0))
    words, targets, taken = {}, {}, {}
    for i, (word, target, p) in enumerate(items):
        pc = base + 4 * i
        words[pc] = word
        if target is not None:
            targets[pc], taken[pc] = labels[target], p
    return Program(words, targets, taken, entry=base), slots


def toggle_patches(slots, fraction, period, instructions):
    """Runtime patching: ``setpf`` in every slot for the first ``fraction`` of each period."""
    patches = []
    on = round(fraction * period)
    for start in range(0, instructions + period, period):
        for slot in slots:
            if on > 0:
                patches.append((start, slot, SETPF))
            if on < period:
                patches.append((start + on, slot, RESETPF))
    return patches


def profile_accuracy(program: Program, path_log) -> float | None:
    """``(1 - MD/2) * 100`` between sampled and full basic-block counts (sec. VI-C).

    A block is counted by its counter's first PI (a leader): every decode of it
    on the correct path is an execution of the block, each dispatched one a count.
    """
    leaders = {pc for pc, w in program.words.items() if decode(w).is_pi
               and not decode(program.word(pc - 4)).is_pi}  # fmt: skip
    full, sampled = {}, {}
    for pc, dispatched in path_log:
        if pc in leaders:
            full[pc] = full.get(pc, 0) + 1
            sampled[pc] = sampled.get(pc, 0) + dispatched
    total_full, total_sampled = sum(full.values()), sum(sampled.values())
    if not total_full or not total_sampled:
        return None
    md = sum(abs(full[pc] / total_full - sampled.get(pc, 0) / total_sampled) for pc in full)
    return (1 - md / 2) * 100


def run_point(seed, fraction, predictor, size, **frontend_options):
    program, slots = instrumented_program(random.Random(seed))
    frontend = FrontEnd(program, lanes=4, queue_size=32, resolve_latency=3,
                        mispredict_rate=0.05, seed=seed, predictor=predictor,
                        **frontend_options)  # fmt: skip
    patches = toggle_patches(slots, fraction, size["period"], size["instructions"])
    frontend.run(size["instructions"], patches=patches)
    c = frontend.counts
    path = max(c["path_pi"], 1)
    return {
        "profiling": fraction,
        "predictor": predictor is not None,
        # program instructions on the correct path: executed or skipped by fetch
        "instructions": frontend.oracle.retired,
        "cycles": frontend.cycle,
        "pi_on_path": c["path_pi"],
        "pi_fetched": c["pi_fetched"] / path,
        "pi_decoded": c["pi_decoded"] / path,
        "pi_dispatched": c["pi_dispatched"] / path,
        "pi_skipped": c["pi_skipped"] / path,
        "skips": c["skips"],
        "flag_mispredicts": c["flag_mispredict"],
        "skip_accuracy": (1 - c["flag_mispredict"] / c["skips"]) if c["skips"] else None,
        "genuine_skipped": c["genuine_skipped"],
        "profile_accuracy": profile_accuracy(program, frontend.path_log),
    }


def _plot(path: Path, rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    xs = [100 * q for q in FRACTIONS]
    for predictor, style in ((False, "--"), (True, "-")):
        sel = [r for r in rows if r["predictor"] == predictor]
        tag = "with predictor" if predictor else "dispatch only"
        for key, color in (("pi_fetched", "C0"), ("pi_decoded", "C1"), ("pi_dispatched", "C2")):
            ax.plot(xs, [r[key] for r in sel], style, color=color, marker="o",
                    label=f"{key.split('_')[1]} ({tag})")  # fmt: skip
    label_axes(ax, "profiling on (% of the time)",
               "profile instructions / PIs on the correct path",
               "Basic-block profiling: selective dispatch and profile-flag prediction", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _summary(result, stem) -> str:
    lines = [
        "# Selective dispatch and profile-flag prediction: basic-block profiling",
        "",
        f"Vaswani, Srikant & Thazhuthaveetil, sec. VII-B/C, on the golden front end "
        f"(`hwprof experiment selective-dispatch{' --quick' if result['quick'] else ''}`, "
        f"seed {result['seed']}): {result['size']['instructions']:,} correct-path "
        f"instructions per run, 4-wide fetch/decode, fetch queue 32, 5% branch "
        f"mis-predictions, sampling period {result['size']['period']:,} instructions, "
        f"{result['methods']} methods of {result['blocks']} instrumented blocks (Fig. 3).",
        "",
        f"![fractions]({stem}.png)",
        "",
        "Fractions of the profile instructions on the correct path (fetched counts "
        "wrong-path fetches too):",
        "",
        "| profiling | predictor | fetched | decoded | dispatched | skipped | cycles/insn "
        "| skips | flag mispredicts | skip accuracy | profile accuracy (%) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["rows"]:
        acc = "" if r["skip_accuracy"] is None else f"{100 * r['skip_accuracy']:.1f}%"
        prof = "" if r["profile_accuracy"] is None else f"{r['profile_accuracy']:.2f}"
        lines.append(
            f"| {100 * r['profiling']:.0f}% | {'yes' if r['predictor'] else 'no'} "
            f"| {r['pi_fetched']:.3f} | {r['pi_decoded']:.3f} | {r['pi_dispatched']:.3f} "
            f"| {r['pi_skipped']:.3f} | {r['cycles'] / r['instructions']:.3f} | {r['skips']} "
            f"| {r['flag_mispredicts']} | {acc} | {prof} |")
    lines += [
        "",
        "Reading: without the predictor every profile instruction is fetched and "
        "decoded whatever the sampling fraction, and only the dispatched fraction "
        "follows it (the paper's Fig. 6 observation: i-cache accesses stay near their "
        "maximum). With the predictor, fetched and decoded PIs fall roughly with the "
        "time profiling is off; the leader of a skipped block is still fetched and "
        "decoded (the paper's first explanation of the residual overhead). Profile "
        "accuracy is the same with and without the predictor up to sampling noise "
        "(the predictor only skips instructions that would have been dropped; "
        "`genuine_skipped` is 0 in every run). The paper measures execution-time "
        "overheads on SimpleScalar, which this front-end model does not reproduce: the "
        "comparison here is in instruction counts.",
    ]
    return "\n".join(lines) + "\n"


def run(output_dir: Path, seed: int, quick: bool) -> dict:
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    size = ({"instructions": 6_000, "period": 2_000} if quick
            else {"instructions": 200_000, "period": 40_000})  # fmt: skip
    rows = [run_point(seed, q, predictor, size) for predictor in (None, {}) for q in FRACTIONS]
    stem = "selective-dispatch-quick" if quick else "selective-dispatch"
    _plot(output_dir / f"{stem}.png", rows)
    result = {"seed": seed, "quick": quick, "size": size, "methods": 8, "blocks": 5,
              "rows": rows}  # fmt: skip
    (output_dir / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    (output_dir / f"{stem}.md").write_text(_summary(result, stem))
    by = {(r["profiling"], r["predictor"]): r for r in rows}
    return {
        "pi_fetched_25pct": {"dispatch_only": by[(0.25, False)]["pi_fetched"],
                             "with_predictor": by[(0.25, True)]["pi_fetched"]},
        "pi_dispatched_25pct": by[(0.25, True)]["pi_dispatched"],
        "profile_accuracy_25pct": {"dispatch_only": by[(0.25, False)]["profile_accuracy"],
                                   "with_predictor": by[(0.25, True)]["profile_accuracy"]},
    }  # fmt: skip


def headline(r: dict) -> list[tuple[str, str, str]]:
    """Profile instructions at 25 % profiling, with and without the predictor."""
    by = {(row["profiling"], row["predictor"]): row for row in r["rows"]}
    rows = []
    for predictor, paper_fetch in ((False, "near their maximum (Fig. 6)"), (True, "-")):
        row, name = by[(0.25, predictor)], "with" if predictor else "without"
        rows += [(f"PIs fetched / on path, 25% profiling, {name} predictor", paper_fetch,
                  cell(row["pi_fetched"], ".3f")),
                 (f"PIs dispatched / on path, 25% profiling, {name} predictor", "-",
                  cell(row["pi_dispatched"], ".3f")),
                 (f"profile accuracy %, 25% profiling, {name} predictor", "-",
                  cell(row["profile_accuracy"], ".2f"))]  # fmt: skip
    return rows


def docs_table(record: dict) -> list[str]:
    """Per sampling fraction: profile instructions fetched and dispatched, with and without
    the profile-flag predictor, cycles per instruction, profile and skip accuracy."""
    rows = {(r["profiling"], r["predictor"]): r for r in record["rows"]}
    lines = ["| profiling | PIs fetched, no predictor | with predictor | fetched PIs the "
             "predictor saves | PIs dispatched | cycles/insn, no predictor | with predictor "
             "| profile accuracy | predictor skips correct |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for fraction in sorted({r["profiling"] for r in record["rows"]}):
        off, on = rows[(fraction, False)], rows[(fraction, True)]
        accuracy = on["profile_accuracy"]
        skips = on["skip_accuracy"]
        lines.append(f"| {100 * fraction:g}% | {off['pi_fetched']:.3f} | {on['pi_fetched']:.3f} "
                     f"| {100 * (1 - on['pi_fetched'] / off['pi_fetched']):.0f}% "
                     f"| {on['pi_dispatched']:.3f} "
                     f"| {off['cycles'] / off['instructions']:.3f} "
                     f"| {on['cycles'] / on['instructions']:.3f} "
                     f"| {'-' if accuracy is None else f'{accuracy:.2f}%'} "
                     f"| {'-' if skips is None else f'{100 * skips:.1f}%'} |")  # fmt: skip
    return lines


EXPERIMENTS = [
    Experiment(
        name="selective-dispatch",
        description="basic-block profiling on the golden front end: PIs fetched/decoded/"
                    "dispatched at 0/10/25/50/100% profiling, with and without the "
                    "profile-flag predictor (Vaswani et al. sec. VII)",
        run=run,
        headline=headline, docs_table=docs_table,
    ),
]
