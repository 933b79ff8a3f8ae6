"""How often the one-cycle loops of two blocks below 100 MHz carry a value, and the cost of not.

Two blocks miss 100 MHz on ECP5 because of a per-cycle loop (docs/fpga.md, "Below 100 MHz"):
a multi-hash tuple's set update from the set the tuple just ahead wrote, and a
predictor decode group's row update from the row the group just ahead wrote. This
bench measures, with the golden models, how often those loops carry a value, and what
the predictor would lose if it dropped the update instead of forwarding:

* ``multihash``: over the load tuples of the shipped traces (traces/*.trace), with
  the catalog's default ``multihash`` (4 tables of 512 counters, 25 sets of 4 ways),
  the share of tuples that follow a tuple of the same accumulator set, and of tuples
  that share a counter (the same index in some table) with the tuple ahead. A
  design that stalls a cycle instead of forwarding loses that share of its
  throughput.
* ``predictor``: the selective-dispatch experiment's programs (hwprof/experiments/
  selective_dispatch.py: 4 lanes, profiling on for 25 % of every 40,000 instructions)
  with the paper's predictor: the decode cycles that update a table row, and those
  that update a set the cycle before updated too. A design that stalls decode a
  cycle instead adds that many cycles.
* ``drop``: the same runs with :class:`DropSameSet`, a predictor whose decode group
  skips its row update when the group ahead wrote that set, against the paper's
  predictor: PIs decoded and skipped, skips, flag mis-predictions, profile accuracy.

    PYTHONPATH=. python bench/bench_same_set_hazards.py [--seeds 5]
        [--instructions 200000] [--tuples 2000000] [--quick]

It prints its figures; the timing background is in docs/notes/fpga-timing.md.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from hwprof.catalog import get_top
from hwprof.experiments.selective_dispatch import run_point
from hwprof.golden.multihash import MultiHashProfiler
from hwprof.golden.predictor import ProfileFlagPredictor
from hwprof.traces.keys import PORT_VALUE_MAP, trace_keys
from hwprof.traces.workloads import SHIPPED_DIR

TRACES = SHIPPED_DIR
WORKLOADS = ("xz", "bzip2", "sort", "perl", "python")
#: the selective-dispatch experiment's sampling period and its headline fraction
PERIOD, FRACTION = 40_000, 0.25


def multihash_hazards(trace, tuples: int) -> dict:
    """Shares of the first ``tuples`` load tuples of ``trace`` that follow a tuple of
    the same accumulator set, or that share a counter with the tuple ahead."""
    params = get_top("multihash").resolve({})
    model = MultiHashProfiler(**{k: params[k] for k in (
        "tables", "counters", "counter_bits", "accumulator", "interval_length",
        "threshold", "ways", "hash_seed")})  # fmt: skip
    keys = np.concatenate(list(trace_keys(trace, limit=tuples, value_map=PORT_VALUE_MAP)))
    distinct, inverse = np.unique(keys, return_inverse=True)
    indices = np.array([model.indices(int(k)) for k in distinct], np.int64)
    sets = np.array([model.config.set_index(row) for row in indices.tolist()])[inverse]
    indices = indices[inverse]
    same_set = sets[1:] == sets[:-1]
    shared = (indices[1:] == indices[:-1]).any(axis=1)
    return {"tuples": len(keys), "same_set": float(same_set.mean()),
            "shared_counter": float(shared.mean()),
            "either": float((same_set | shared).mean())}  # fmt: skip


class RecordingPredictor(ProfileFlagPredictor):
    """The paper's predictor, recording the table sets each decode cycle updates."""

    def __init__(self, **params):
        super().__init__(**params)
        self.cycle_sets: list[frozenset] = []
        self._current: set = set()

    def end(self, update=(), squash=0) -> None:
        self._current = set()
        super().end(update, squash)
        self.cycle_sets.append(frozenset(self._current))

    def _update(self, pc, leader, flag, declared=None) -> None:
        self._current.add(self.split(leader)[1])
        super()._update(pc, leader, flag, declared)


class DropSameSet(RecordingPredictor):
    """A predictor whose decode group drops its row update when the group decoded the
    cycle before wrote that table set (a design without the forwarding loop, which
    neither stalls nor forwards); ``cycle_sets`` holds the sets each cycle wrote.
    ``update_latency`` must be 0."""

    def __init__(self, **params):
        super().__init__(**params)
        if self.config.update_latency:
            raise ValueError("DropSameSet models update_latency=0 only")
        self.dropped = 0

    def _update(self, pc, leader, flag, declared=None) -> None:
        if self.cycle_sets and self.split(leader)[1] in self.cycle_sets[-1]:
            self.dropped += 1
            return
        super()._update(pc, leader, flag, declared)


DROP_KEYS = ("cycles", "pi_decoded", "pi_skipped", "skips", "flag_mispredicts",
             "profile_accuracy")  # fmt: skip


def _run(seed, size, model):
    """The experiment's run of program ``seed`` with predictor class ``model``: its
    figures and the predictor."""
    made = []

    class Kept(model):
        def __init__(self, **params):
            super().__init__(**params)
            made.append(self)

    figures = run_point(seed, FRACTION, {}, size, predictor_model=Kept)
    return {k: figures[k] for k in DROP_KEYS}, made[0]


def predictor_runs(seed: int, instructions: int, period: int) -> dict:
    """The experiment's run of program ``seed`` with the paper's predictor (recording)
    and with :class:`DropSameSet`: the decode cycles, those that update a row and
    those that update a set the cycle before also updated; both runs' figures and the
    updates dropped."""
    size = {"period": period, "instructions": instructions}
    paper, recorder = _run(seed, size, RecordingPredictor)
    drop, dropper = _run(seed, size, DropSameSet)
    sets = recorder.cycle_sets
    return {"cycles": len(sets), "updating": sum(1 for s in sets if s),
            "after_same_set": sum(1 for a, b in zip(sets, sets[1:], strict=False) if a & b),
            "paper": paper, "drop": drop, "dropped": dropper.dropped}  # fmt: skip


def _spread(values, fmt="{:.3f}"):
    mean = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{fmt.format(mean)} ± {fmt.format(sd)}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="predictor programs (seeds 0..)")
    parser.add_argument("--instructions", type=int, default=200_000)
    parser.add_argument("--tuples", type=int, default=2_000_000,
                        help="load tuples per trace (at most what it holds)")
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds, 6,000 instructions, 20,000 tuples of xz (a smoke run)")
    args = parser.parse_args(argv)
    workloads, period = WORKLOADS, PERIOD
    if args.quick:  # the experiment's --quick sizes
        args.seeds, args.instructions, args.tuples, workloads = 2, 6_000, 20_000, ("xz",)
        period = 2_000

    print("| trace | load tuples | after a tuple of the same set | sharing a counter "
          "with the tuple ahead | either |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in workloads:
        h = multihash_hazards(TRACES / f"{name}.trace", args.tuples)
        print(f"| {name} | {h['tuples']:,} | {h['same_set']:.1%} | {h['shared_counter']:.1%} "
              f"| {h['either']:.1%} |")
    print()
    print("| program (seed) | decode cycles | updating a row | after an update of the same "
          "set | share of the updating cycles | share of all cycles |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    runs = [predictor_runs(seed, args.instructions, period) for seed in range(args.seeds)]
    for seed, h in enumerate(runs):
        print(f"| {seed} | {h['cycles']:,} | {h['updating']:,} | {h['after_same_set']:,} | "
              f"{h['after_same_set'] / max(h['updating'], 1):.1%} | "
              f"{h['after_same_set'] / max(h['cycles'], 1):.1%} |")
    print()
    print(f"| measure (mean ± sd over {args.seeds} programs) | paper | drop same-set updates |")
    print("| --- | ---: | ---: |")
    for key in DROP_KEYS:
        paper = [r["paper"][key] for r in runs if r["paper"][key] is not None]
        drop = [r["drop"][key] for r in runs if r["drop"][key] is not None]
        fmt = "{:,.0f}" if key in ("cycles", "skips", "flag_mispredicts") else "{:.3f}"
        print(f"| {key} | {_spread(paper, fmt)} | {_spread(drop, fmt)} |")
    print(f"| row updates dropped | 0 | {_spread([r['dropped'] for r in runs], '{:,.0f}')} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
