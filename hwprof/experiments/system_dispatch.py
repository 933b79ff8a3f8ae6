"""Selective dispatch on the RISC-V system: the paper's Fig. 3 basic-block counter.

Vaswani, Srikant & Thazhuthaveetil, Fig. 3: each basic block of a function carries
a counter increment made of profile instructions (here ``lw/b``, ``addi/b``,
``sw/b`` of type 0, ``hwprof_pi_count``), and the function keeps its caller's flag
with ``pushpf``/``poppf``. ``hwprof/system/workloads/bbcount.c`` wraps a small
recursive workload (its recursion goes deeper than the core's 4-entry hardware
flag stack, so the firmware's spill handler runs) and turns profiling on for
``ON`` of every 8 top-level calls. For each ``ON`` the run on the system gives:

* the block counts the firmware prints, which must equal :func:`golden_counts`
  (the paper's semantics: a counter's PIs execute iff flag 0 is set when they
  are reached; pushpf/poppf restore the flag on return), and the PIs executed
  and dropped that the core counted;
* the cycles of the loop, beside the same workload built without any
  instrumentation (``NO_PROFILE``): the cost of profiling off is the dropped PIs,
  the PCIs and the ordinary instructions that form the counters' addresses.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from . import Experiment, write_results

__all__ = ["EXPERIMENTS", "WORKLOAD", "golden_counts", "parse_output", "run"]

WORKLOAD = Path(__file__).resolve().parents[1] / "system" / "workloads" / "bbcount.c"
CALLS, QUICK_CALLS = 2000, 200
ONS = (0, 1, 2, 8)
MASK = 0xFFFFFFFF


def golden_counts(n: int, on: int, depths: int = 7) -> dict:
    """bbcount.c's output by the paper's semantics, computed here from its C logic.

    Flag 0 is on for top-level call ``i`` iff ``i % 8 < on``; call ``i`` recurses to
    depth ``i % depths``; every block execution is 3 PIs, executed iff the flag is on.
    """
    counts = [0] * 4
    blocks = [0]

    def work(x, depth, flag):
        executed = [0, 1 if x & 1 else 2] + ([3] if depth > 0 else [])
        r = (3 * x + 1) & MASK if x & 1 else x >> 1
        for b in executed:
            blocks[0] += 1
            counts[b] += flag
        if depth > 0:
            r = (r + work(r, depth - 1, flag)) & MASK
        return r

    acc = 0
    for i in range(n):
        acc = (acc + work((i * 7 + 3) & MASK, i % depths, int(i % 8 < on))) & MASK
    dispatched = 3 * sum(counts)
    return {"counts": counts, "result": acc, "dispatched": dispatched,
            "dropped": 3 * blocks[0] - dispatched}  # fmt: skip


def parse_output(text: str) -> dict:
    """The five lines bbcount.c prints."""
    lines = text.splitlines()
    result, dispatched, dropped = (int(w, 16) for w in lines[1].split())
    return {"counts": [int(w, 16) for w in lines[0].split()], "result": result,
            "dispatched": dispatched, "dropped": dropped, "exceptions": int(lines[2], 16),
            "loop_cycles": int(lines[3], 16)}  # fmt: skip


def run_one(exe, n: int, work: Path, *, on: int | None, depths: int = 7) -> dict:
    """One run: ``on`` calls of 8 profiled, or ``None`` for the uninstrumented build."""
    from ..system.sim import run_program

    defines = {"N": n, "DEPTHS": depths, **({"NO_PROFILE": 1} if on is None else {"ON": on})}
    r = run_program([WORKLOAD], exe=exe, work=work, events=False, defines=defines)
    if r.status != "exit" or r.exit_code != 0:
        raise RuntimeError(f"bbcount.c {defines}: {r.summary()}")
    return {"on": on, "depths": depths, "cycles": r.cycles, "instret": r.instret,
            **parse_output(r.output)}


def run(output_dir: Path, seed: int, quick: bool) -> dict:
    """Every ``ON`` and the uninstrumented build; writes ``system-dispatch[-quick].*``."""
    from ..system.sim import build_system

    exe = build_system()
    n = QUICK_CALLS if quick else CALLS
    rows = []
    with tempfile.TemporaryDirectory(prefix="hwprof-dispatch-") as work:
        work = Path(work)
        base = run_one(exe, n, work / "none", on=None)
        for on in ONS:
            row = run_one(exe, n, work / f"on{on}", on=on)
            golden = golden_counts(n, on)
            row["golden"] = golden
            row["equal"] = all(row[k] == golden[k]
                               for k in ("counts", "result", "dispatched", "dropped"))
            rows.append(row)
        # recursion that fits the hardware flag stack (depth <= 3: 4 nested pushpf)
        shallow_base = run_one(exe, n, work / "none4", on=None, depths=4)
        shallow = run_one(exe, n, work / "off4", on=0, depths=4)
        shallow["equal"] = all(shallow[k] == golden_counts(n, 0, 4)[k]
                               for k in ("counts", "result", "dispatched", "dropped"))
    if base["result"] != golden_counts(n, 0)["result"]:
        raise RuntimeError("the uninstrumented build computed another result")
    record = {"quick": quick, "calls": n, "uninstrumented": base, "rows": rows,
              "shallow_uninstrumented": shallow_base, "shallow_off": shallow}
    write_results(output_dir, "system-dispatch", quick, record, markdown(record))
    return record


def markdown(r: dict) -> str:
    cmd = "hwprof experiment system-dispatch" + (" --quick" if r["quick"] else "")
    base = r["uninstrumented"]
    lines = [
        "# Selective dispatch on the RISC-V system: the Fig. 3 basic-block counter",
        "",
        f"Command: `{cmd}`. Workload `hwprof/system/workloads/bbcount.c`: {r['calls']:,} "
        "calls of a recursive function (recursion depth 0..6, deeper than the core's "
        "4-entry hardware flag stack) whose 4 basic blocks each carry the counter of "
        "Vaswani et al., Fig. 3 (`lw/b`, `addi/b`, `sw/b` of type 0); the function keeps "
        "its caller's flag with `pushpf`/`poppf`; main turns profiling on for ON of "
        "every 8 calls. Golden: the paper's semantics applied to the workload's logic "
        "(`hwprof.experiments.system_dispatch.golden_counts`). Cycles: the loop, by "
        "`rdcycle`.",
        "",
        "| profiled calls | block counts | = golden | PIs executed | PIs dropped | "
        "flag-stack exceptions | loop cycles | vs uninstrumented |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
        f"| no instrumentation | - | - | - | - | - | {base['loop_cycles']:,} | 1.000 |",
    ]
    for row in r["rows"]:
        lines.append(
            f"| {row['on']}/8 | {' '.join(str(c) for c in row['counts'])} | "
            f"{'yes' if row['equal'] else 'NO'} | {row['dispatched']:,} | "
            f"{row['dropped']:,} | {row['exceptions']:,} | {row['loop_cycles']:,} | "
            f"{row['loop_cycles'] / base['loop_cycles']:.3f} |")  # fmt: skip
    off = r["rows"][0]
    s_base, s_off = r["shallow_uninstrumented"], r["shallow_off"]
    lines += [
        "",
        f"With profiling off the instrumented loop takes {off['loop_cycles']:,} cycles, "
        f"{off['loop_cycles'] / base['loop_cycles']:.3f} times the uninstrumented "
        f"{base['loop_cycles']:,}. PicoRV32 is not pipelined and has no fetch queue, so "
        "a dropped PI still costs its fetch and a launch (it retires without effect, "
        "it is not skipped); the ordinary instructions that form each counter's "
        "address and the pushpf/poppf run whatever the flag, and here the recursion "
        f"takes {off['exceptions']:,} flag-stack exceptions into the firmware's spill "
        "handler. With the recursion limited to depth 3 (4 nested pushpf, within the "
        f"hardware stack; DEPTHS=4) profiling off takes {s_off['exceptions']:,} "
        f"exceptions and {s_off['loop_cycles']:,} cycles against "
        f"{s_base['loop_cycles']:,} uninstrumented "
        f"({s_off['loop_cycles'] / s_base['loop_cycles']:.3f} times; counts = golden: "
        f"{'yes' if s_off['equal'] else 'NO'}).",
        "",
    ]
    return "\n".join(lines)


def headline(r: dict) -> list[tuple[str, str, str]]:
    base = r["uninstrumented"]["loop_cycles"]
    off = r["rows"][0]["loop_cycles"]
    shallow = r["shallow_off"]["loop_cycles"] / r["shallow_uninstrumented"]["loop_cycles"]
    return [("block counts = golden", "-", "yes" if all(x["equal"] for x in r["rows"]) else "no"),
            ("cycles, profiling off / no instrumentation", "-", f"{off / base:.3f}"),
            ("the same, recursion within the hardware stack", "-", f"{shallow:.3f}")]


EXPERIMENTS = [
    Experiment(
        name="system-dispatch",
        description="the Fig. 3 basic-block counter with selective dispatch on the RISC-V "
        "system: counts against the paper's semantics, cycles with profiling off",
        run=run,
        headline=headline,
    )
]
