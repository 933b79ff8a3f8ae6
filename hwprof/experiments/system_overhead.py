"""Instrumentation overhead measured in cycles on the RISC-V system (Lee & Zilles,
secs. 4-5, Figs. 12-14).

The microbenchmark ``hwprof/system/workloads/overhead.c`` (the paper's sec. 5.3:
checksums and the character distribution of a text; one instrumentation site per
path of the character loop, an edge profile) is compiled once per framework and
rate and run on the system in Verilator. The kernel's cycles come from PicoRV32's
cycle counter (``rdcycle`` around the kernel), the sites and samples from the brr
unit's RETIRED and TAKEN registers; every count is exact (no sampling of time).

Cycles per site = (kernel cycles - baseline kernel cycles) / sites. For the brr
framework at one code layout the extra cycles are ``sites * a + samples * b``
exactly (an in-order multi-cycle core: every instruction's cycles are fixed), so
the cost of a not-taken site (``a``) and of a taken one (``a + b``) are solved
from the runs (least squares; the largest residual is reported, 0 when exact).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import Experiment, write_results
from .brr_accuracy import PAPER_OVERHEAD, overhead_per_site

__all__ = ["EXPERIMENTS", "run", "measure"]

WORKLOAD = Path(__file__).resolve().parents[1] / "system" / "workloads" / "overhead.c"
#: brr freq values measured (sampling probability 2^-(freq+1), interval 2^(freq+1))
FREQS = (0, 1, 2, 3, 5, 7, 9, 11, 13, 15)
QUICK_FREQS = (0, 3, 9)
#: KERNEL values of overhead.c: the paper's character loop, and an empty loop
KERNELS = {0: "loop", 1: "empty"}
LENGTH, QUICK_LENGTH = 8192, 1024
#: the paper's figures (sec. 5.3, Fig. 14) for the table
PAPER_BRR_50 = 3.19
PAPER_FULL_INSTRUMENTATION = 4.3


def _parse(output: str) -> dict:
    words = output.split()
    fields = {words[i]: int(words[i + 1], 16) for i in range(0, 10, 2)}
    fields["edges"] = [int(w, 16) for w in words[11:14]]
    return fields


def measure(defines: dict, exe, work: Path) -> dict:
    """Compile and run one variant; the kernel's counts (``_parse`` of its line)."""
    from ..system.sim import run_program

    run = run_program([WORKLOAD], exe=exe, defines=defines, work=work, events=False)
    if run.status != "exit" or run.exit_code != 0:
        raise RuntimeError(f"overhead.c {defines}: {run.summary()}")
    return _parse(run.output)


def run(output_dir: Path, seed: int, quick: bool) -> dict:
    """Every variant; writes ``system-overhead[-quick].{json,md}`` into ``output_dir``."""
    from ..system.sim import build_system

    exe = build_system()
    freqs = QUICK_FREQS if quick else FREQS
    length = QUICK_LENGTH if quick else LENGTH
    work = Path(output_dir) / ".system-overhead-work"
    kernels = {}
    for kernel in KERNELS:
        results = {"baseline": None, "full": {}, "brr": {}, "countdown": {}}

        def variant(**defines):
            return measure({"LENGTH": length, "KERNEL": kernel, **defines}, exe, work)  # noqa: B023

        results["baseline"] = variant(FRAMEWORK=0)
        for instrument in (0, 1):
            results["full"][instrument] = variant(FRAMEWORK=3, INSTRUMENT=instrument)
            for f in freqs:
                results["brr"].setdefault(instrument, {})[f] = variant(
                    FRAMEWORK=1, FREQ=f, INSTRUMENT=instrument)  # fmt: skip
                results["countdown"].setdefault(instrument, {})[f] = variant(
                    FRAMEWORK=2, INTERVAL=2 ** (f + 1), INSTRUMENT=instrument)  # fmt: skip
        kernels[KERNELS[kernel]] = _record(results, freqs, length, quick)
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    record = {**kernels["loop"], "empty_loop": kernels["empty"]}
    write_results(output_dir, "system-overhead", quick, record, markdown(record))
    return record


def _record(results, freqs, length, quick) -> dict:
    base = results["baseline"]
    sites = length  # one site per character
    checksums = {base["checksum"]}

    def per_site(r):
        checksums.add(r["checksum"])
        return (r["cycles"] - base["cycles"]) / sites

    rows = []
    for f in freqs:
        row = {"freq": f, "interval": 2 ** (f + 1)}
        for instrument in (0, 1):
            b, c = results["brr"][instrument][f], results["countdown"][instrument][f]
            if b["brr"] != sites:
                raise RuntimeError(f"brr retired {b['brr']}, expected {sites}")
            suffix = "" if instrument else "_framework"
            row[f"brr{suffix}"] = per_site(b)
            row[f"countdown{suffix}"] = per_site(c)
            row[f"samples{suffix}"] = b["taken"]
            row[f"countdown_samples{suffix}"] = sum(c["edges"]) if instrument else None
        row["model_brr"] = overhead_per_site("brr", f + 1)["cycles"]
        row["model_counter"] = overhead_per_site("counter", f + 1)["cycles"]
        rows.append(row)
    fits = {}
    for instrument in (0, 1):
        runs = [results["brr"][instrument][f] for f in freqs]
        a = np.array([[r["brr"], r["taken"]] for r in runs], dtype=float)
        y = np.array([r["cycles"] - base["cycles"] for r in runs], dtype=float)
        coef, *_ = np.linalg.lstsq(a, y, rcond=None)
        residual = float(np.max(np.abs(a @ coef - y)))
        fits["instrumented" if instrument else "framework"] = {
            "not_taken": float(coef[0]), "taken": float(coef[0] + coef[1]),
            "max_residual_cycles": residual}  # fmt: skip
    full = {("instrumented" if i else "framework"): per_site(results["full"][i]) for i in (0, 1)}
    return {"quick": quick, "length": length, "sites": sites,
            "baseline_cycles": base["cycles"], "baseline_instret": base["instret"],
            "rows": rows, "brr_fit": fits, "full_instrumentation": full,
            "same_checksum": len(checksums) == 1,
            "paper": {"brr_50": PAPER_BRR_50, "full_instrumentation": PAPER_FULL_INSTRUMENTATION,
                      "text": PAPER_OVERHEAD}}  # fmt: skip


def markdown(r: dict) -> str:
    cmd = "hwprof experiment system-overhead" + (" --quick" if r["quick"] else "")
    fit_i, fit_f = r["brr_fit"]["instrumented"], r["brr_fit"]["framework"]
    lines = [
        "# Instrumentation overhead in cycles on the RISC-V system",
        "",
        f"Command: `{cmd}`. Workload `hwprof/system/workloads/overhead.c` (Lee & Zilles sec. 5.3: "
        f"checksums and character distribution of {r['length']:,} characters, one site per "
        "path of the character loop, an edge profile), on PicoRV32 (RV32IM, multi-cycle, "
        "no branch prediction) with hwprof's brr unit, simulated in Verilator. Cycles are "
        "counted exactly by the core's cycle counter around the kernel; sites and samples "
        "by the brr unit's RETIRED and TAKEN registers.",
        "",
        f"Baseline kernel: {r['baseline_cycles']:,} cycles, {r['baseline_instret']:,} "
        f"instructions, {r['sites']:,} site executions when instrumented. Cycles per site = "
        "(cycles - baseline) / sites. *framework*: the sample code is empty; *instrumented*: "
        "it increments the edge's counter (a load, an add, a store).",
        "",
        "| interval | brr framework | brr instrumented | countdown framework | "
        "countdown instrumented | brr samples | model brr (paper's machine) | "
        "model counter |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in r["rows"]:
        lines.append(
            f"| 2^{row['freq'] + 1} | {row['brr_framework']:.2f} | {row['brr']:.2f} | "
            f"{row['countdown_framework']:.2f} | {row['countdown']:.2f} | {row['samples']:,} | "
            f"{row['model_brr']:.2f} | {row['model_counter']:.2f} |")  # fmt: skip
    full = r["full_instrumentation"]
    first, low = r["rows"][0], r["rows"][-1]
    empty = r["empty_loop"]
    e_fit, e_low = empty["brr_fit"]["framework"], empty["rows"][-1]
    if empty:
        lines += [
            "",
            f"The same sites in an empty loop ({empty['length']:,} iterations, one site each; "
            f"baseline {empty['baseline_cycles']:,} cycles):",
            "",
            "| interval | brr framework | brr instrumented | countdown framework | "
            "countdown instrumented | brr samples |",
            "| ---: | ---: | ---: | ---: | ---: | ---: |",
            *[f"| 2^{row['freq'] + 1} | {row['brr_framework']:.2f} | {row['brr']:.2f} | "
              f"{row['countdown_framework']:.2f} | {row['countdown']:.2f} | {row['samples']:,} |"
              for row in empty["rows"]],
            "",
            f"Empty loop: a not-taken brr site {e_fit['not_taken']:.2f} cycles, a taken one "
            f"{e_fit['taken']:.2f} (largest residual {e_fit['max_residual_cycles']:.1f}); full "
            f"instrumentation {empty['full_instrumentation']['instrumented']:.2f} cycles per "
            f"site; same checksum in every variant: {'yes' if empty['same_checksum'] else 'NO'}.",
        ]
    lines += [
        "",
        f"Full instrumentation (the sample code at every site, no sampling): "
        f"{full['instrumented']:.2f} cycles per site (paper: {r['paper']['full_instrumentation']} "
        "cycles).",
        "",
        "brr per outcome, solved from the runs above (extra cycles = sites x not-taken + "
        "samples x (taken - not-taken); the largest residual over the runs in cycles shows "
        "whether the split is exact):",
        "",
        "| code | not-taken site | taken site | largest residual |",
        "| --- | ---: | ---: | ---: |",
        f"| framework only | {fit_f['not_taken']:.2f} | {fit_f['taken']:.2f} | "
        f"{fit_f['max_residual_cycles']:.1f} |",
        f"| instrumented | {fit_i['not_taken']:.2f} | {fit_i['taken']:.2f} | "
        f"{fit_i['max_residual_cycles']:.1f} |",
        "",
        f"Every variant computed the same checksum: {'yes' if r['same_checksum'] else 'NO'}.",
        "",
        "## Beside the paper and the model",
        "",
        f"Paper: {r['paper']['text']}. The model is `brr-accuracy`'s overhead model of the "
        "paper's 4-wide out-of-order machine (docs/results/brr-accuracy.md).",
        "",
        f"- A not-taken brr site costs {fit_f['not_taken']:.2f} cycles in the character "
        f"loop and {e_fit['not_taken']:.2f} in the empty loop: there it is the brr "
        "instruction alone, a whole multi-cycle instruction on PicoRV32 (fetched over the "
        "bus, decoded, its registers read, executed); in the character loop the rest is "
        "what the compiler changes around the sites (an average over the loop's three "
        "paths). The model gives a third of a fetch slot on the paper's 3-wide front end "
        f"({low['model_brr']:.2f}) and the paper measured about 0.1, the out-of-order core "
        "hiding most of it.",
        f"- A taken brr costs {fit_f['taken'] - fit_f['not_taken']:.2f} cycles more than a "
        "not-taken one (the taken branch's refetch and the jump back from the out-of-line "
        "code); PicoRV32 has no pipeline to flush and no prediction, where the paper's machine "
        "pays a 5-cycle redirect and a fetch group for the jump back. So at 50 % brr costs "
        f"{first['brr_framework']:.2f} cycles per site framework-only "
        f"({first['brr']:.2f} with the counter update) against the paper's "
        f"{r['paper']['brr_50']} and the model's {first['model_brr']:.2f}.",
        f"- The countdown site (load, decrement, store, branch) costs {low['countdown']:.2f} "
        f"cycles at interval 2^{low['freq'] + 1}, {low['countdown'] / low['brr']:.1f}x brr's "
        f"{low['brr']:.2f} in the character loop and "
        f"{e_low['countdown'] / e_low['brr']:.1f}x in the empty loop: about the ratio of "
        "their instruction counts (4 to 1, the model "
        f"says {low['model_counter'] / low['model_brr']:.1f}x), with the load and store "
        "taking several cycles each on this core. The paper's 10-20x includes the branch "
        "mispredictions the countdown causes in a predicted core, which this core, without "
        "prediction, does not have.",
        f"- Full instrumentation costs {full['instrumented']:.2f} cycles per site (the "
        "counter update at every site); the paper's 4.3 cycles per site are for its own "
        "instrumentation on an out-of-order core.",
        "",
    ]
    return "\n".join(lines)


def headline(r: dict) -> list[tuple[str, str, str]]:
    rows = {row["freq"]: row for row in r["rows"]}
    out = []
    if 0 in rows:
        out.append(("cycles per brr site at 50 %", f"{PAPER_BRR_50}", f"{rows[0]['brr']:.2f}"))
    last = r["rows"][-1]
    out.append((f"cycles per site at interval 2^{last['freq'] + 1}: brr / countdown",
                "about 0.1 / 10-20x more", f"{last['brr']:.2f} / {last['countdown']:.2f}"))
    out.append(("full instrumentation, cycles per site", f"{PAPER_FULL_INSTRUMENTATION}",
                f"{r['full_instrumentation']['instrumented']:.2f}"))  # fmt: skip
    return out


EXPERIMENTS = [
    Experiment(
        name="system-overhead",
        description="brr vs software countdown sampling overhead in exact cycles on the "
        "RISC-V system (Lee & Zilles secs. 4-5, Figs. 12-14)",
        run=run,
        headline=headline,
    )
]
