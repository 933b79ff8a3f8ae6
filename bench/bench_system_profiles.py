"""The multi-hash profiler in the running system at its own clock: tuples and cycles.

Run: ``.venv/bin/python bench/bench_system_profiles.py`` (two Verilator builds of the
system the first time: with the profiler on a clock of its own, and without the
profiler). Writes ``docs/results/system-profiles.json`` and, from it,
``docs/results/system-profiles.md``; ``--markdown-only`` rewrites the Markdown from
the JSON.

For each program and each profiler/core clock ratio (1, 0.75, 0.5; the harness
toggles the profiler's clock at its own half period), the run's tuples offered to
the profiler, accepted (reached the multihash top) and dropped (the FIFO into the
profiler's domain was full), counted by the harness at the FIFO's write side. The
programs:

* ``value_profile.c`` profiles itself and prints the profile it read back; the table
  says whether it equals the golden multi-hash model's on the accepted tuples of the
  run's log and the profile at ratio 1;
* ``compress.c`` (a text of 1,500 characters) and ``overhead.c`` (the character loop,
  no instrumentation) are wrapped: the wrapper starts the profiler (interval 1,000,
  threshold 25), runs the program's ``main`` between two ``rdcycle`` and stops the
  profiler. The cycles of that ``main`` are measured three ways: profiler running,
  the same system with the profiler never started, and the system without the
  profiler; *cycles added* is the first less the third.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKLOADS = ROOT / "hwprof" / "system" / "workloads"
OUT = ROOT / "docs" / "results" / "system-profiles"
#: the profiler of tests/test_system_value_profile.py, on a clock of its own
PROFILER = {"tables": 4, "counters": 256, "counter_bits": 16, "accumulator": 16, "ways": 4,
            "hash_seed": 1}  # fmt: skip
#: profiler/core clock ratio -> the profiler's half period (the core's is 60)
RATIOS = {1.0: 60, 0.75: 80, 0.5: 120}
INTERVAL, THRESHOLD = 1000, 25
WRAPPED = {"compress.c": {"TEXT": 1500}, "overhead.c": {}}
WRAPPER = """#include "hwprof.h"
#include "hwprof_mh.h"
#define main hwprof_workload_main
#include "{source}"
#undef main
int main(void) {{
    if (PROFILE) hwprof_mh_config({interval}, {threshold});
    uint32_t c = hwprof_cycles();
    int r = hwprof_workload_main();
    c = hwprof_cycles() - c;
    if (PROFILE) hwprof_mh_stop();
    hwprof_puts("W ");
    hwprof_puthex(c);
    hwprof_putc('\\n');
    return r;
}}
"""


def _run(exe, sources, work, defines, *, loads=False, prof_half=None):
    from hwprof.system import sim
    from hwprof.system.firmware import FIRMWARE, compile_program

    program = compile_program(sources, work / "fw", defines=defines,
                              extra_flags=(f"-I{FIRMWARE}", f"-I{WORKLOADS}"))  # fmt: skip
    run = sim.run_image(exe, program.image, cycles=200_000_000, seed=1, work=work,
                        events=False, loads=loads, prof_half=prof_half)  # fmt: skip
    if run.status != "exit" or run.exit_code != 0:
        raise RuntimeError(f"{sources[0].name}: {run.status} {run.exit_code}\n{run.output}")
    return run


def _workload_cycles(output: str) -> int:
    return int(next(line for line in output.splitlines() if line.startswith("W "))[2:], 16)


def measure() -> dict:
    import numpy as np

    from hwprof.golden.multihash import run_plain
    from hwprof.system import sim
    from hwprof.system.profiler import parse_profile_output

    own = sim.build_system(profiler=PROFILER | {"own_clock": True})
    plain = sim.build_system()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-sysprof-") as tmp:
        tmp = Path(tmp)
        first = None
        for ratio, half in RATIOS.items():
            work = tmp / f"vp-{half}"
            run = _run(own, [WORKLOADS / "value_profile.c"], work, {}, loads=True,
                       prof_half=half)  # fmt: skip
            profiles, fields = parse_profile_output(run.output)
            fields = {tag: numbers[0] for tag, numbers in fields.items()}
            accepted = run.loads["dropped"] == 0
            keys = ((run.loads["pc"][accepted] << np.uint64(32)) | run.loads["value"][accepted])
            golden = run_plain([int(k) for k in keys], interval_length=INTERVAL,
                               threshold=THRESHOLD, **PROFILER)  # fmt: skip
            first = profiles if first is None else first
            rows.append({"program": "value_profile.c", "ratio": ratio, "offered": run.offered,
                         "accepted": run.offered - run.dropped, "dropped": run.dropped,
                         "firmware_offered": fields["O"], "firmware_dropped": fields["D"],
                         "intervals": len(profiles),
                         "equals_golden": profiles == golden[:len(profiles)],
                         "equals_ratio_1": profiles == first, "cycles": run.cycles})  # fmt: skip
        for name, defines in WRAPPED.items():
            wrapper = tmp / f"wrap-{name}"
            wrapper.write_text(WRAPPER.format(source=WORKLOADS / name, interval=INTERVAL,
                                              threshold=THRESHOLD))  # fmt: skip
            base = _run(plain, [wrapper], tmp / f"{name}-plain", defines | {"PROFILE": 0})
            idle = _run(own, [wrapper], tmp / f"{name}-idle", defines | {"PROFILE": 0},
                        prof_half=60)  # fmt: skip
            for ratio, half in RATIOS.items():
                run = _run(own, [wrapper], tmp / f"{name}-{half}", defines | {"PROFILE": 1},
                           prof_half=half)  # fmt: skip
                on = _workload_cycles(run.output)
                rows.append({"program": name, "ratio": ratio, "offered": run.offered,
                             "accepted": run.offered - run.dropped, "dropped": run.dropped,
                             "program_cycles": on,
                             "program_cycles_not_started": _workload_cycles(idle.output),
                             "program_cycles_without_profiler": _workload_cycles(base.output),
                             "cycles_added": on - _workload_cycles(base.output),
                             "cycles": run.cycles})  # fmt: skip
    return {"command": "python bench/bench_system_profiles.py", "profiler": PROFILER,
            "fifo_depth": 16, "interval": INTERVAL, "threshold": THRESHOLD,
            "wrapped_defines": WRAPPED, "rows": rows}  # fmt: skip


def markdown(data: dict) -> str:
    yes = {True: "yes", False: "no"}
    out = [
        "# The multi-hash profiler in the running system, at its own clock",
        "",
        f"Command: `{data['command']}` (Verilator; the profiler's clock toggled by the "
        "harness at its own half period). Profiler: the `multihash` top with "
        + ", ".join(f"`{k}={v}`" for k, v in data["profiler"].items())
        + f", FIFO of {data['fifo_depth']} entries; interval {data['interval']:,} tuples, "
        f"threshold {data['threshold']}. A tuple is *offered* when the core retires a load "
        "from RAM while the profiler runs, *dropped* when the FIFO into the profiler's "
        "domain is full, *accepted* otherwise (it reaches the multihash top).",
        "",
        "| program | profiler / core clock | offered | accepted | dropped | profile = golden "
        "model on the accepted tuples | profile = at ratio 1 |",
        "| --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in data["rows"]:
        if r["program"] != "value_profile.c":
            continue
        out.append(f"| `{r['program']}` | {r['ratio']} | {r['offered']:,} | {r['accepted']:,} "
                   f"| {r['dropped']:,} | {yes[r['equals_golden']]} ({r['intervals']} "
                   f"intervals) | {yes[r['equals_ratio_1']]} |")  # fmt: skip
    out += [
        "",
        "Programs wrapped (their `main` between two `rdcycle`, the profiler started before "
        "and stopped after; defines "
        + ", ".join(f"`{p}`: " + (", ".join(f"`{k}={v}`" for k, v in d.items()) or "none")
                    for p, d in data["wrapped_defines"].items())
        + "). Cycles of that `main` with the profiler running, with it never started, "
        "and on the system built without it; *added* = running less without.",
        "",
        "| program | profiler / core clock | offered | accepted | dropped | cycles, running "
        "| not started | without profiler | added |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["rows"]:
        if r["program"] == "value_profile.c":
            continue
        out.append(f"| `{r['program']}` | {r['ratio']} | {r['offered']:,} | {r['accepted']:,} "
                   f"| {r['dropped']:,} | {r['program_cycles']:,} "
                   f"| {r['program_cycles_not_started']:,} "
                   f"| {r['program_cycles_without_profiler']:,} | {r['cycles_added']:,} |")
    dropped = sum(r["dropped"] for r in data["rows"])
    added = sorted({r["cycles_added"] for r in data["rows"] if "cycles_added" in r})
    out += ["", f"Tuples dropped over all runs: {dropped:,}. Cycles added to a program by "
            f"profiling: {', '.join(f'{a:,}' for a in added)} (the profiler is passive: the "
            "core never waits for it)."]  # fmt: skip
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown-only", action="store_true",
                        help="rewrite the Markdown from the JSON")  # fmt: skip
    args = parser.parse_args()
    json_path, md_path = OUT.with_suffix(".json"), OUT.with_suffix(".md")
    if args.markdown_only:
        data = json.loads(json_path.read_text())
    else:
        data = measure()
        json_path.write_text(json.dumps(data, indent=1) + "\n")
    md_path.write_text(markdown(data))
    print(md_path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
