"""Selective dispatch and profile-flag prediction on real program structure (sec. VII).

Vaswani, Srikant & Thazhuthaveetil instrument the 10 hottest methods of SPEC
programs for call-graph profiling (Fig. 4: ``mov/b; jal/b _mcount; mov/b`` at
method entry) and basic-block profiling (Fig. 3: a five-PI counter at every
basic block), each method wrapped in ``pushpf; resetpf`` ... ``poppf``, and let a
runtime patch the ``resetpf`` into ``setpf`` for 10, 25 or 50% of every period.

Here the block structure and the dynamic path come from real programs: the
branch records of hwprof traces (``traces/*.trace``, captured with our valgrind
tool): a basic block runs from the target (or fall-through) of one control
transfer to the next one, calls and returns give the methods (a shadow call
stack), and a block's instruction count is its length in bytes over the trace's
mean instruction length. The hot methods are the 10 with most instructions.
For each execution of an instrumented block, in program order, the golden
profile-flag predictor (:class:`hwprof.golden.predictor.ProfileFlagPredictor`,
2 x 64, ``min_block`` 4) looks the leader up at fetch and is updated with the
PIs decoded (a sequential model: one fetch lookup, then the decode of what was
fetched; no pipeline timing, no wrong path). Profiling is on when the
instruction count, shifted by a random phase (the seed), is in the first
fraction q of a period.

Reported per program and configuration: PIs fetched, decoded, dispatched and
skipped per instrumented execution, flag mis-predictions, profile accuracy
``(1 - MD/2) * 100`` (sec. VI-C) of the block counts or call-graph edges against
the full profile, and an overhead model in dynamic instructions (PIs dispatched
plus the ``_mcount`` body, relative to the program's instructions) and in
front-end slots (instructions fetched, plus ``REDIRECT_SLOTS`` per skip or
flag mis-prediction for the broken fetch block). There is no execution-time
simulator: the paper's overheads are execution time on SimpleScalar.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np

from ..golden.isa_profile import NOP, Insn, encode
from ..golden.predictor import ProfileFlagPredictor
from ..golden.tracefile import CALL, RETURN, TraceError, open_trace, recorded_instructions
from . import Experiment

__all__ = ["load_program", "simulate", "run", "EXPERIMENTS"]

FRACTIONS = (0.0, 0.10, 0.25, 0.50, 1.0)
WINDOW = 1_000_000  # instructions of each trace used (the shipped traces hold ~4 M)
PERIOD = 250_000  # sampling period, instructions (the paper: 20 M); 4 periods per window
HOT_METHODS = 10
REDIRECT_SLOTS = 1.5  # a fetch block broken by a redirect loses (W - 1) / 2 slots, W = 4
MCOUNT = (10, 25, 50)  # instructions of the _mcount body (swept; the paper gives none)
COUNTER_PIS = 5  # Fig. 3: lui/b, lw/b, addi/b, lui/b, sw/b
CALLGRAPH_PIS = 3  # Fig. 4: mov/b, jal/b _mcount, mov/b
ENTRY_PCIS = 3  # pushpf, resetpf/setpf, poppf
PI_WORD = encode(Insn("pi", "lw", 0, rd=26, rs1=26))
#: the paper's averages (Tables IV, V, VI): overhead % at 0/10/25/50/100% profiling
PAPER = {
    "callgraph": {"overhead": (0.48, 4.96, 11.41, 22.04, 41.81),
                  "accuracy": (None, 90.48, 96.24, 97.92, None)},
    "basic_block": {"overhead": (12.98, 14.35, 16.31, 19.87, 26.42),
                    "overhead_predictor": (7.96, 9.84, 12.52, 17.39, 26.31),
                    "accuracy": (None, 89.07, 96.20, 97.50, None)},
}  # fmt: skip


def load_program(path: Path, max_instructions: float | None = None) -> dict:
    """Dynamic basic blocks of a trace: start, instructions, method, call events."""
    with open_trace(path) as trace:
        chunks = list(trace.chunks(kinds="branches", columns=("kind", "pc", "addr", "value")))
        footer = trace.footer or {}
        header = trace.header or {}
    if not chunks:
        raise TraceError(f"{path}: no control-transfer records")
    kind = np.concatenate([c.kind for c in chunks])
    addr = np.concatenate([c.addr for c in chunks]).astype(np.int64)
    end = np.concatenate([c.value for c in chunks]).astype(np.int64)  # fall-through
    # block i (i >= 1) runs from the successor of transfer i - 1 to transfer i
    start = addr[:-1]
    length = end[1:] - start
    ok = (length > 0) & (length < 4096)
    window = recorded_instructions(footer) or 0
    mean_len = float(length[ok].sum()) / window if window > 0 else 4.0
    insns = np.where(ok, np.maximum(1, np.rint(length / max(mean_len, 1.0))), 1).astype(np.int64)
    kind = kind[1:]
    if max_instructions is not None:
        keep = int(np.searchsorted(np.cumsum(insns), max_instructions)) + 1
        start, insns, kind, addr = start[:keep], insns[:keep], kind[:keep], addr[1:keep + 1]
    else:
        addr = addr[1:]
    # methods: a shadow call stack; method 0 is whatever ran before the first call
    ids: dict[int, int] = {}
    method = np.zeros(len(start), np.int64)
    calls = []  # (block index of the callee's first block, caller, callee)
    stack = [0]
    for i, (k, target) in enumerate(zip(kind.tolist(), addr.tolist(), strict=True)):
        method[i] = stack[-1]
        if k == CALL:
            callee = ids.setdefault(target, len(ids) + 1)
            calls.append((i + 1, stack[-1], callee))
            stack.append(callee)
        elif k == RETURN and len(stack) > 1:
            stack.pop()
    weight = np.bincount(method, weights=insns, minlength=len(ids) + 1)
    weight[0] = 0  # the unknown outer context is not a method
    hot = set(np.argsort(weight)[::-1][:HOT_METHODS].tolist()) - {0}
    return {"name": Path(path).stem, "program": header.get("program", ""),
            "start": start, "insns": insns, "method": method, "hot": hot,
            "calls": np.array(calls, np.int64).reshape(-1, 3), "methods": len(ids),
            "instructions": int(insns.sum()), "mean_insn_bytes": mean_len}  # fmt: skip


def _accuracy(full: np.ndarray, sampled: np.ndarray) -> float | None:
    if full.sum() == 0 or sampled.sum() == 0:
        return None
    return float((1 - np.abs(full / full.sum() - sampled / sampled.sum()).sum() / 2) * 100)


def simulate(prog: dict, kind: str, fraction: float, period: int, phase: int,
             predictor: bool) -> dict:
    """One configuration: ``kind`` is ``"basic_block"`` or ``"callgraph"``."""
    cum = np.cumsum(prog["insns"]) - prog["insns"]  # instructions before each block
    on_block = ((cum + phase) % period) < fraction * period
    if kind == "basic_block":
        execs = np.flatnonzero(np.isin(prog["method"], list(prog["hot"])))
        leaders = prog["start"][execs]
        length = COUNTER_PIS
        keys = leaders
    else:
        calls = prog["calls"]
        calls = calls[np.isin(calls[:, 2], list(prog["hot"])) & (calls[:, 0] < len(cum))]
        execs = calls[:, 0]
        leaders = prog["start"][execs]
        length = CALLGRAPH_PIS
        keys = calls[:, 1] * (prog["methods"] + 1) + calls[:, 2]  # caller -> callee edge
    on = on_block[execs]
    n = len(execs)
    fetched = decoded = np.full(n, length, np.int64)
    skips = mispredicts = 0
    if predictor:
        p = ProfileFlagPredictor(lanes=4)
        fetched = np.empty(n, np.int64)
        for j, (leader, flag) in enumerate(zip(leaders.tolist(), on.tolist(), strict=True)):
            pc = (leader << 2) & 0xFFFF_FFFF  # the instrumented code, word aligned
            p.begin()
            skip = p.fetch_lane(PI_WORD, pc).skip
            if skip and not flag:  # the leader is fetched and dropped, the rest skipped
                skips += 1
                fetched[j] = 1
                update = [(PI_WORD, pc, 0)]
            else:
                skips += skip
                mispredicts += skip  # flag on: refetch the block from pc + 4 (A.1)
                fetched[j] = length
                update = [(PI_WORD, pc + 4 * i, int(flag)) for i in range(length)]
            update.append((NOP, pc + 4 * len(update), 0))  # the block's own code
            p.end(update)
        decoded = fetched
    dispatched = np.where(on, length, 0)
    uniq, inverse = np.unique(keys, return_inverse=True)
    full = np.bincount(inverse, minlength=len(uniq)).astype(float)
    sampled = np.bincount(inverse, weights=on.astype(float), minlength=len(uniq))
    hot_calls = prog["calls"][np.isin(prog["calls"][:, 2], list(prog["hot"]))]
    pcis = ENTRY_PCIS * len(hot_calls)
    instructions = prog["instructions"]
    redirects = skips + mispredicts
    row = {
        "kind": kind, "profiling": fraction, "predictor": predictor, "phase": phase,
        "executions": n, "pi_fetched": int(fetched.sum()), "pi_decoded": int(decoded.sum()),
        "pi_dispatched": int(dispatched.sum()),
        "pi_skipped": int(n * length - fetched.sum() + length * mispredicts),
        "skips": int(skips), "flag_mispredicts": int(mispredicts),
        "accuracy": _accuracy(full, sampled),
        "slots_overhead": 100 * (fetched.sum() + pcis + REDIRECT_SLOTS * redirects)
        / instructions,
    }  # fmt: skip
    if kind == "callgraph":
        row["dispatch_overhead"] = {m: 100 * (dispatched.sum() + m * on.sum()) / instructions
                                    for m in MCOUNT}  # fmt: skip
    else:
        row["dispatch_overhead"] = 100 * dispatched.sum() / instructions
    return row


def _mean_sd(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    return float(np.mean(values)), float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def _aggregate(rows):
    keys = ("pi_fetched", "pi_dispatched", "pi_skipped", "skips", "flag_mispredicts",
            "accuracy", "slots_overhead")  # fmt: skip
    out = {k: _mean_sd([r[k] for r in rows]) for k in keys}
    if isinstance(rows[0]["dispatch_overhead"], dict):
        out["dispatch_overhead"] = {m: _mean_sd([r["dispatch_overhead"][m] for r in rows])
                                    for m in MCOUNT}  # fmt: skip
    else:
        out["dispatch_overhead"] = _mean_sd([r["dispatch_overhead"] for r in rows])
    out["executions"] = rows[0]["executions"]
    return out


def _fmt(ms, digits=2, pct=False):
    mean, sd = ms
    if mean is None:
        return "–"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def _markdown(result, stem) -> str:
    cmd = "hwprof experiment selective-dispatch-programs" + (" --quick" if result["quick"] else "")
    lines = [
        "# Selective dispatch on real program structure (Vaswani et al., sec. VII)", "",
        f"`{cmd}` (seed {result['seed']}, {result['date']}); {result['seeds']} random "
        f"phases of the sampling period per point at 10-50% (mean ± standard deviation "
        f"over them; at 0% and 100% the phase changes nothing: one run); "
        f"the first {result['window']:,} instructions of each trace, sampling period "
        f"{result['period']:,} instructions; hot methods: the {HOT_METHODS} with "
        f"most instructions; predictor 2 x 64, min_block 4.", "",
        f"![overheads]({stem}.png)", "",
        "| program | instructions | methods | hot-method instructions | bytes/insn |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for t in result["programs"]:
        lines.append(f"| {t['name']} | {t['instructions']:,} | {t['methods']:,} | "
                     f"{100 * t['hot_share']:.1f}% | {t['mean_insn_bytes']:.2f} |")
    for kind, title in (("basic_block", "Basic-block profiling (Fig. 3)"),
                        ("callgraph", "Call-graph profiling (Fig. 4)")):
        lines += ["", f"## {title}", "",
                  "| program | profiling | predictor | executions | PIs fetched | dispatched "
                  "| skipped | skips | flag mispredicts | accuracy % | dispatch overhead % "
                  "| front-end slots overhead % |",
                  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                  "| ---: |"]  # fmt: skip
        for r in result["rows"]:
            if r["kind"] != kind:
                continue
            a = r["agg"]
            dov = a["dispatch_overhead"]
            dov = _fmt(dov[25]) + " (mcount 25)" if isinstance(dov, dict) else _fmt(dov)
            lines.append(
                f"| {r['program']} | {100 * r['profiling']:.0f}% | "
                f"{'yes' if r['predictor'] else 'no'} | {a['executions']:,} | "
                f"{_fmt(a['pi_fetched'], 0)} | {_fmt(a['pi_dispatched'], 0)} | "
                f"{_fmt(a['pi_skipped'], 0)} | {_fmt(a['skips'], 0)} | "
                f"{_fmt(a['flag_mispredicts'], 0)} | {_fmt(a['accuracy'])} | {dov} | "
                f"{_fmt(a['slots_overhead'])} |")
    lines += ["", "## Beside the paper (averages over the programs)", "",
              "| profile | profiling | paper overhead % (time) | ours: dispatch overhead % "
              "| ours: front-end slots % | paper accuracy % | ours: accuracy % |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for line in result["beside"]:
        lines.append(line)
    lines += ["", result["reading"], ""]
    return "\n".join(lines)


def _avg(rows, get) -> str:
    vals = [v for v in (get(r["agg"]) for r in rows) if v is not None]
    return f"{np.mean(vals):.2f}" if vals else "–"


def _beside(result):
    out = []
    for kind, pred, paper_key in (("callgraph", False, "overhead"),
                                  ("basic_block", False, "overhead"),
                                  ("basic_block", True, "overhead_predictor")):
        for i, q in enumerate(FRACTIONS):
            rows = [r for r in result["rows"] if r["kind"] == kind and r["predictor"] == pred
                    and r["profiling"] == q]  # fmt: skip
            dov = _avg(rows, lambda a, kind=kind: (a["dispatch_overhead"][25]
                                                   if kind == "callgraph"
                                                   else a["dispatch_overhead"])[0])
            slots = _avg(rows, lambda a: a["slots_overhead"][0])
            acc = _avg(rows, lambda a: a["accuracy"][0])
            paper_acc = PAPER[kind]["accuracy"][i]
            label = f"{kind.replace('_', '-')}{' + predictor' if pred else ''}"
            out.append(f"| {label} | {100 * q:.0f}% | {PAPER[kind][paper_key][i]:.2f} | {dov} "
                       f"| {slots} | {'–' if paper_acc is None else paper_acc} | {acc} |")
    return out


def _plot(result, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    xs = [100 * q for q in FRACTIONS]

    def callgraph_dispatch(agg):
        table = agg["dispatch_overhead"]
        return table[25 if 25 in table else "25"][0]  # JSON keys are strings

    panels = (("basic_block", lambda a: a["slots_overhead"][0],
               "basic-block: front-end slots overhead"),
              ("callgraph", callgraph_dispatch,
               "call-graph: dispatch overhead (_mcount 25 insns)"))  # fmt: skip
    for ax, (kind, value, title) in zip(axes, panels, strict=True):
        for color, t in enumerate(result["programs"]):
            for pred, style in ((False, "-"), (True, "--")):
                rows = sorted((r for r in result["rows"] if r["kind"] == kind
                               and r["predictor"] == pred and r["program"] == t["name"]),
                              key=lambda r: r["profiling"])  # fmt: skip
                ax.plot(xs, [value(r["agg"]) for r in rows], style, marker="o",
                        color=f"C{color}",
                        label=f"{t['name']}{' + predictor' if pred else ''}")  # fmt: skip
        ax.set_title(title)
        ax.set_xlabel("profiling on (% of each period)")
        ax.set_ylabel("% of the program's instructions")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(output_dir: Path, seed: int, quick: bool, traces=()) -> dict:
    paths = [Path(p) for p in traces] or sorted(Path("traces").glob("*.trace"))
    if not paths:
        raise TraceError("no traces: pass --trace FILE (the shipped ones are traces/*.trace)")
    if quick:
        paths = paths[:1]
    limit = 300_000 if quick else WINDOW
    period = 60_000 if quick else PERIOD
    seeds = 5
    programs = [load_program(p, limit) for p in paths]  # read everything first
    rng = np.random.default_rng(seed)
    result = {"seed": seed, "quick": quick, "period": period, "seeds": seeds, "window": limit,
              "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "programs": [], "rows": []}  # fmt: skip
    for prog in programs:
        hot_share = float(prog["insns"][np.isin(prog["method"], list(prog["hot"]))].sum()
                          / prog["instructions"])  # fmt: skip
        result["programs"].append({"name": prog["name"], "program": prog["program"],
                                   "instructions": prog["instructions"],
                                   "methods": prog["methods"], "hot_share": hot_share,
                                   "mean_insn_bytes": prog["mean_insn_bytes"]})  # fmt: skip
        phases = rng.integers(0, period, seeds).tolist()
        for kind in ("basic_block", "callgraph"):
            for pred in (False, True):
                for q in FRACTIONS:
                    # at 0% and 100% the phase changes nothing: one run, spread 0
                    use = phases if 0 < q < 1 else phases[:1]
                    runs = [simulate(prog, kind, q, period, ph, pred) for ph in use]
                    result["rows"].append({"program": prog["name"], "kind": kind,
                                           "predictor": pred, "profiling": q,
                                           "agg": _aggregate(runs)})  # fmt: skip
    result["beside"] = _beside(result)
    result["reading"] = READING
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    stem = "selective-dispatch-programs-quick" if quick else "selective-dispatch-programs"
    (output_dir / f"{stem}.json").write_text(json.dumps(result, indent=1, default=str))
    (output_dir / f"{stem}.md").write_text(_markdown(result, stem))
    _plot(result, output_dir / f"{stem}.png")
    bb = [r for r in result["rows"] if r["kind"] == "basic_block" and r["profiling"] == 0.25]
    return {"basic_block_25pct_slots": {
        ("predictor" if r["predictor"] else "dispatch_only") + ":" + r["program"]:
        round(r["agg"]["slots_overhead"][0], 2) for r in bb}}


READING = (
    "Reading. What the model reproduces: selective dispatch alone leaves every PI "
    "fetched and decoded whatever the sampling fraction (front-end slots stay at "
    "their 100% level; the paper's Figs. 5-6, i-cache accesses near their maximum), "
    "while dispatched PIs and `_mcount` calls follow the fraction (the paper's "
    "call-graph overheads falling roughly in proportion, 41.81% -> 11.41% at 25%); "
    "the profile-flag predictor skips basic-block counters while profiling is off, "
    "so front-end slots fall with the off time (the paper's Table VI: 26.31% -> "
    "12.52% at 25%), never skips the 3-PI call-graph blocks (shorter than min_block "
    "4, as the paper assumes) and does not change the profile (a skip is taken only "
    "for a block predicted ignored, and a flag mis-prediction refetches it: the "
    "guarantee itself is tested in tests/test_dispatch_paper.py).\n\n"
    "Differences, one by one. (1) Basic-block overheads are far larger here in "
    "instructions (about two thirds of the program's instructions at 100%) than the "
    "paper's 26.42% of execution time: x86 basic blocks of these programs are a few "
    "instructions long, so a 5-PI counter per block nearly doubles the hot "
    "methods' dynamic instructions, while the paper's out-of-order core executes "
    "these independent PIs in parallel (sec. IV: they 'add to the available "
    "instruction level parallelism'); only time would show that. (2) The call-graph "
    "overhead at 100% depends on the assumed `_mcount` size (10/25/50 instructions "
    "in the JSON; 25 shown), which the paper does not give; its fall with the "
    "fraction (in proportion) is what we can compare, and it matches. (3) Accuracy "
    "at 10% is higher than the paper's 89-90%: a 1-million-instruction window "
    "sampled every 250,000 instructions covers few program phases, whereas the "
    "paper's 20-million periods over 100-million windows miss whole phases (its "
    "explanation for parser and gzip). (4) With profiling off, the predictor cuts "
    "front-end slots by about a third, the same order as the paper's 12.98% -> "
    "7.96%; the leader of every skipped block is still fetched and decoded, the "
    "paper's first reason for the residual overhead.\n\n"
    "What it cannot reproduce: execution time. The paper's overheads are cycles on "
    "SimpleScalar (caches, out-of-order back end, the work of `_mcount`); ours are "
    "instruction and slot counts relative to the program's instructions, with "
    "1.5 slots lost per fetch redirect (fixed, not swept), a fixed sampling period, "
    "on the first million x86 instructions of each trace (the paper: "
    "100-million-instruction windows of SPEC CPU2000 on PISA), with block sizes "
    "estimated from byte lengths and methods from a shadow call stack."
)

EXPERIMENTS = [Experiment(
    "selective-dispatch-programs",
    "basic-block and call-graph profiling of real programs' block structure (branch "
    "traces): PIs fetched/dispatched/skipped, accuracy, overhead model (Vaswani et al. "
    "sec. VII)", run, takes_traces=True)]  # fmt: skip
