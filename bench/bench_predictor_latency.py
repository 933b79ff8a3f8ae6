"""Effect of the predictor's pipelined table update (``update_latency``) on what it predicts.

Runs the golden front end (hwprof.golden.frontend) with the profile-flag predictor at
``update_latency`` 0 (the paper: the table row written at the end of the decode
cycle) and at each of ``--latencies`` (the RTL pipelined for timing: written
1, 2 or 3 cycles later) on the same programs and seeds, and prints the counts that the
table decides: skips, instructions skipped, PIs fetched, profile mis-fetches, flag
mis-predictions, each with its change from latency 0.

    PYTHONPATH=. python bench/bench_predictor_latency.py [--seeds 5] [--instructions 50000]
        [--latencies 1 2 3]
"""

from __future__ import annotations

import argparse
import random
import statistics

from hwprof.golden.frontend import FrontEnd, basic_block_program, directed_programs

KEYS = ("fetched", "skips", "skipped", "pi_fetched", "misfetch", "flag_mispredict")


def run(program, rate, seed, instructions, latency):
    frontend = FrontEnd(program, lanes=4, mispredict_rate=rate, seed=seed,
                        predictor={"update_latency": latency})
    frontend.run(instructions)
    return frontend.counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--instructions", type=int, default=50_000)
    parser.add_argument("--latencies", type=int, nargs="+", default=[1, 2],
                        choices=[1, 2, 3], help="update latencies compared with 0")
    args = parser.parse_args(argv)
    latencies = [0, *args.latencies]
    cases = [(f"{name}", lambda seed, p=p: p) for name, p in directed_programs().items()
             if name in ("fig3_off", "fig3_on", "fig4_off_misfetch", "nested_push_pop")]
    for toggle in (0.1, 0.5):
        cases.append((f"random toggle={toggle}", lambda seed, t=toggle: (
            basic_block_program(random.Random(seed), toggle_rate=t), 0.05)))
    print("| program | count | latency 0 (mean ± sd over seeds) | "
          + " | ".join(f"latency {lat} | change" for lat in args.latencies) + " |")
    print("| --- | --- | ---: |" + " ---: | ---: |" * len(args.latencies))
    for name, make in cases:
        per = {lat: {k: [] for k in KEYS} for lat in latencies}
        for seed in range(1, args.seeds + 1):
            program, rate = make(seed)
            for latency in latencies:
                counts = run(program, rate, seed, args.instructions, latency)
                for k in KEYS:
                    per[latency][k].append(counts[k])
        for k in KEYS:
            cells = []
            base = statistics.mean(per[0][k])
            for lat in latencies:
                values = per[lat][k]
                mean = statistics.mean(values)
                sd = statistics.stdev(values) if len(values) > 1 else 0.0
                cells.append(f"{mean:.0f} ± {sd:.0f}")
                if lat:
                    cells.append(f"{(mean - base) / base:+.2%}" if base else "n/a")
            print(f"| {name} | {k} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
