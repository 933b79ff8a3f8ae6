"""A real workload sampled by brr on the RISC-V system (Lee & Zilles, sec. 5.2's
method execution frequency profile).

``hwprof/system/workloads/compress.c`` (text generation, LZ77 compression with hash
chains, decompression, CRC-32, quicksort of the words) has a profiling site at the
entry of each of its 15 functions: one brr whose taken path increments the
function's sampled counter. Built with ``FULL_PROFILE`` it also counts every
execution. For each sampling rate the run on the system gives:

* the sampled profile printed by the firmware, which must equal the golden brr
  model (:class:`hwprof.golden.brr.Brr` from the run's seed) applied to the
  sequence of site executions that the simulation logged (each retired brr's pc,
  mapped to its function by the table the firmware prints);
* the full profile, which must equal the logged site executions per function;
* the overlap accuracy of the sampled profile against the full one,
  ``sum_f min(sampled_f / sampled, full_f / full)``.

With every site built never taken (``NEVER_TAKEN``) the workload must print the
same text on the system as the same C compiled for the host (``HWPROF_HOST``,
zig's clang for the host machine).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from . import Experiment, write_results

__all__ = ["EXPERIMENTS", "run", "parse_output", "profile_check", "host_output"]

WORKLOAD = Path(__file__).resolve().parents[1] / "system" / "workloads" / "compress.c"
SITE_NAMES = ("rnd", "put_word", "make_text", "hash4", "longest_match", "emit_literals",
              "emit_match", "compress", "decompress", "copy_match", "crc32", "compare",
              "partition", "sort", "swap")  # fmt: skip
FREQS, QUICK_FREQS = (3, 5, 7), (5,)
TEXT, QUICK_TEXT = 6000, 1500


def parse_output(text: str) -> dict:
    """``{"results": [...], "sampled": {id: n}, "full": {id: n}, "sites": {id: pc}}``."""
    out = {"results": [], "sampled": {}, "full": {}, "sites": {}}
    for line in text.splitlines():
        words = line.split()
        if words[0] in ("sampled", "full"):
            out[words[0]][int(words[1], 16)] = int(words[2], 16)
        elif words[0] == "site":
            out["sites"][int(words[1], 16)] = int(words[2], 16)
        else:
            out["results"].append(line)
    return out


def profile_check(run, brr_params: dict | None = None) -> dict:
    """The printed profiles against the golden model and the logged site executions.

    The golden model (``brr_params``, default the catalog's defaults) starts from the
    logged LFSR load of the run's seed and replays every logged brr.
    """
    from ..golden.brr import Brr, BrrConfig

    parsed = parse_output(run.output)
    ev = run.events
    golden = Brr(BrrConfig(**(brr_params or {})))
    brr = ev["kind"] == 1
    taken = np.zeros(len(ev["kind"]), dtype=bool)
    for i in range(len(ev["kind"])):
        if ev["kind"][i] == 2:
            golden.step(load_valid=1, load_data=int(ev["value"][i]))
        else:
            taken[i] = golden.step(decode_valid=1, freq=int(ev["freq"][i])).taken
    by_pc = {pc: site for site, pc in parsed["sites"].items()}
    golden_sampled = {site: 0 for site in parsed["sites"]}
    executions = {site: 0 for site in parsed["sites"]}
    unknown = 0
    for pc, t in zip(ev["pc"][brr].tolist(), taken[brr].tolist(), strict=True):
        site = by_pc.get(pc)
        if site is None:
            unknown += 1
            continue
        executions[site] += 1
        golden_sampled[site] += t
    sampled, full = parsed["sampled"], parsed["full"]
    total_s, total_f = sum(sampled.values()), sum(full.values())
    overlap = sum(min(sampled[s] / total_s, full[s] / total_f) for s in full) if total_s else 0.0
    return {
        "sites": len(parsed["sites"]),
        "site_executions": int(brr.sum()),
        "samples": total_s,
        "sampled": [sampled[s] for s in sorted(sampled)],
        "golden_sampled": [golden_sampled.get(s, 0) for s in sorted(sampled)],
        "full": [full.get(s, 0) for s in sorted(sampled)],
        "logged_executions": [executions.get(s, 0) for s in sorted(sampled)],
        "sampled_mismatches": sum(sampled[s] != golden_sampled.get(s, 0) for s in sampled),
        "full_mismatches": sum(full.get(s, 0) != executions.get(s, 0) for s in sampled),
        "brr_outside_sites": unknown,
        "overlap_accuracy": 100.0 * overlap,
        "results": parsed["results"],
    }


def host_output(defines: dict, work: Path) -> str:
    """Compile the workload for the host (zig's clang) and run it; its stdout."""
    from ..system.firmware import ZIG_CACHE, zig_command

    exe = Path(work) / "host-workload"
    env = dict(os.environ, ZIG_GLOBAL_CACHE_DIR=str(ZIG_CACHE.resolve()),
               ZIG_LOCAL_CACHE_DIR=str(ZIG_CACHE.resolve()))  # fmt: skip
    ZIG_CACHE.mkdir(parents=True, exist_ok=True)
    cmd = [*zig_command(), "cc", "-O2", "-DHWPROF_HOST",
           *(f"-D{k}={v}" for k, v in defines.items()), str(WORKLOAD), "-o", str(exe)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"host build of {WORKLOAD.name} failed:\n{proc.stderr}")
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def run(output_dir: Path, seed: int, quick: bool) -> dict:
    """Every rate and the host comparison; writes ``system-workload[-quick].{json,md}``."""
    from ..system.sim import build_system, run_program

    exe = build_system()
    text = QUICK_TEXT if quick else TEXT
    lfsr_seed = seed % ((1 << 20) - 1) + 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="hwprof-workload-") as work:
        work = Path(work)
        for freq in QUICK_FREQS if quick else FREQS:
            defines = {"TEXT": text, "SAMPLE_FREQ": freq, "FULL_PROFILE": 1}
            r = run_program([WORKLOAD], exe=exe, seed=lfsr_seed, work=work / f"f{freq}",
                            defines=defines)  # fmt: skip
            if r.status != "exit" or r.exit_code != 0:
                raise RuntimeError(f"compress.c at freq {freq}: {r.summary()}")
            rows.append({"freq": freq, "cycles": r.cycles, "instret": r.instret,
                         **profile_check(r)})  # fmt: skip
        never = run_program([WORKLOAD], exe=exe, work=work / "never", events=False,
                            defines={"TEXT": text, "NEVER_TAKEN": 1})  # fmt: skip
        host = host_output({"TEXT": text}, work)
    record = {"quick": quick, "text": text, "seed": lfsr_seed, "rows": rows,
              "site_names": SITE_NAMES, "system_output": never.output, "host_output": host,
              "host_equal": never.output == host, "never_taken_cycles": never.cycles}  # fmt: skip
    write_results(output_dir, "system-workload", quick, record, markdown(record))
    return record


def markdown(r: dict) -> str:
    cmd = "hwprof experiment system-workload" + (" --quick" if r["quick"] else "")
    lines = [
        "# A real workload sampled by brr on the RISC-V system",
        "",
        f"Command: `{cmd}` (LFSR seed {r['seed']}). Workload "
        "`hwprof/system/workloads/compress.c`: a text of "
        f"{r['text']:,} characters made of pseudo-random words, LZ77-compressed (hash "
        "chains), decompressed and verified, CRC-32, its words quicksorted. Each of its "
        f"{len(r['site_names'])} functions starts with a brr site whose taken path "
        "increments the function's sampled counter (Lee & Zilles sec. 5.2: method "
        "execution frequencies); the same run also counts every execution (the full "
        "profile).",
        "",
        "| sampling rate | site executions | samples | sampled profile = golden brr on "
        "the logged sites | full profile = logged executions | overlap accuracy | cycles |",
        "| --- | ---: | ---: | --- | --- | ---: | ---: |",
    ]
    for row in r["rows"]:
        lines.append(
            f"| 2^-{row['freq'] + 1} | {row['site_executions']:,} | {row['samples']:,} | "
            f"{'yes' if row['sampled_mismatches'] == 0 else 'NO'} | "
            f"{'yes' if row['full_mismatches'] == 0 else 'NO'} | "
            f"{row['overlap_accuracy']:.1f} % | {row['cycles']:,} |")  # fmt: skip
    last = r["rows"][-1]
    lines += [
        "",
        f"Per function at 2^-{last['freq'] + 1} (sampled, golden, full):",
        "",
        "| function | sampled | golden model | full |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, s, g, f in zip(r["site_names"], last["sampled"], last["golden_sampled"],
                             last["full"], strict=True):  # fmt: skip
        lines.append(f"| `{name}` | {s:,} | {g:,} | {f:,} |")
    lines += [
        "",
        "With every site built never taken, the system printed "
        f"{'the same text as' if r['host_equal'] else 'a DIFFERENT text from'} the same C "
        f"compiled for the host ({r['never_taken_cycles']:,} cycles on the system):",
        "",
        "```",
        *[ln for ln in r["system_output"].splitlines() if not ln.startswith("sampled")],
        "```",
        "",
    ]
    return "\n".join(lines)


def headline(r: dict) -> list[tuple[str, str, str]]:
    out = [(f"overlap accuracy at 2^-{row['freq'] + 1}", "-", f"{row['overlap_accuracy']:.1f} %")
           for row in r["rows"]]  # fmt: skip
    out.append(("sampled profile = golden model", "-",
                "yes" if all(row["sampled_mismatches"] == 0 for row in r["rows"]) else "no"))
    out.append(("system output = host output", "-", "yes" if r["host_equal"] else "no"))
    return out


EXPERIMENTS = [
    Experiment(
        name="system-workload",
        description="a compressor/sort workload profiled by brr-sampled counters on the "
        "RISC-V system: golden check, overlap accuracy, host comparison",
        run=run,
        headline=headline,
    )
]
