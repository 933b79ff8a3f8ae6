"""The multi-hash profiler split into stage submodules is the design it replaced.

The split (two components, the CAM and the block RAM accumulator, each with its
pipeline stages as submodules) changed the Verilog on purpose, not the function.
Both checks compare with the design of :data:`BEFORE` (generated from that
commit's source, so the tests need the git history), not with the golden model
(the golden checks are elsewhere: tests/test_multihash_*, the trace checks).

Proved, for the two formal parameter sets:
:func:`hwprof.verify.equivalence.check_equivalence` (yosys ``equiv_make``,
``equiv_simple``, ``equiv_induct``, then the base case from reset) proves the
designs equivalent (:data:`PROVED_SETS`). The other sets are out of this
machine's reach: the default's memories become tens of thousands of flops for
``memory_map``, and ``equiv_induct`` runs out of the memory of yosys' WebAssembly
build before it ends (docs/notes/verification.md).

Co-simulated, for every parameter set but the formal ones (the default top and
the slow variants; the catalog has no other variant): the old and the new
Verilog, each built with Verilator in the stream harness
(:class:`hwprof.sim.native.StreamHarness`), under the same stimulus
(:func:`cosim_stimulus`): seeded keys (hot keys, warm keys, a long tail, then a
slice of the shipped xz load trace), configuration writes through ``cfg_*``
(the reset configuration, long intervals with threshold 3, threshold 1, intervals
shorter than a full readout, threshold = interval: the accumulator fills, refuses
candidates, and is read out every interval), and the same seeded ready pattern on
``records`` (high in 70 % of cycles). Every output transfer (its cycle, key,
count and end marker) and the runs' cycles, accepted tuples and input stalls
must be equal; the harness records each transfer's cycle, so the output stream
is compared cycle by cycle. The input's ready is compared through the stall
count and its effect on every later cycle, not cycle by cycle. A failure prints
the seed and the first differing transfer of both designs.

The checks' own failures: the CAM design without its bypass register is not
proved equivalent, and differs from the old design under the co-simulation's
stimulus (the design with it matches); :func:`first_difference` finds injected
differences.

Tiers: the default's co-simulation and :func:`first_difference`'s test run in
``make test`` (the default: about 14 s CPU with its two Verilator builds cached
in the shared build root, about 50 s with them); the rest is soak (``--soak``).
The largest, the 1000-entry CAM (``slow2``), costs per design about 50 s CPU of
Verilator translation (6 MB of Verilog to 22-24 MB of C++), 47 s of g++ at ``-O0``
(``-O2``, the harness's default, at least 90 s on four of its files), and a run of
1.2M cycles (125 s at ``-O0``): minutes of CPU, not hours; an hour of wall time
only at low priority on a loaded machine. Its co-simulation (seed 1, the harness's
build at ``-O0``) found the designs equal.
Cost: the two formal proofs, the proof that fails and the old design's generation
together about 80 s wall (20 s CPU in the test process); the proofs of the
defaults and the slow variants, were they run, hours or more memory than yosys'
WebAssembly build can use.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest

from hwprof.catalog import get_top
from hwprof.rtl.multihash import MultiHash
from hwprof.sim.native import StreamHarness, StreamRun
from hwprof.synth import to_verilog
from hwprof.tops.multihash import FORMAL, readout_cycles
from hwprof.traces.keys import PORT_VALUE_MAP, trace_keys
from hwprof.traces.workloads import SHIPPED_DIR
from hwprof.verify.equivalence import check_equivalence, renames

#: the last commit with the multi-hash designs before the split (one module each)
BEFORE = "b52f902ed96d06e32002fe59a97c22317dc09005"
ROOT = Path(__file__).resolve().parents[1]

_TOP = get_top("multihash")
#: every catalog parameter set: the default top, its variants, the slow variants, the
#: proved (formal) sets
PARAM_SETS = {
    "default": {},
    **{f"variant{i}": v for i, v in enumerate(_TOP.variants) if v},
    **{f"slow{i}": v for i, v in enumerate(_TOP.slow_variants)},
    "formal_bram": {**FORMAL, "ways": 2},
    "formal_cam": {**FORMAL, "ways": 0},
}

#: the sets proved (the others are out of this machine's reach, and co-simulated)
PROVED_SETS = ["formal_bram", "formal_cam"]


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    """A directory holding the package ``hwprof`` as it was at :data:`BEFORE`."""
    if shutil.which("git") is None:
        pytest.skip("git is needed to read the design before the split")
    done = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", BEFORE, "hwprof"],
                          capture_output=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"commit {BEFORE[:10]} is not in this checkout's history")
    where = tmp_path_factory.mktemp("before")
    with tarfile.open(fileobj=BytesIO(done.stdout)) as tar:
        tar.extractall(where, filter="data")
    return where


def _verilog_before(where: Path, params: dict, out: Path) -> str:
    args = [a for k, v in params.items() for a in ("-p", f"{k}={v}")]
    subprocess.run([sys.executable, "-m", "hwprof.cli", "generate", "multihash", *args,
                    "-o", str(out)], cwd=where, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(where)})  # fmt: skip
    return (out / "multihash.v").read_text()


def test_renames_match_split_names():
    """A gate name is renamed to the gold one it stands for, only when that is unique."""
    gold = {"hit", "fifo.level", "position", "$12", "x"}
    gate = {
        "stage_d.hit",
        "readout.fifo.level",
        "stage_a.position",
        "config.position",
        "stage_b.$12",
        "x",
        "stage_c.x",
    }
    assert renames(gold, gate) == {"stage_d.hit": "hit", "readout.fifo.level": "fifo.level"}


@pytest.mark.soak
@pytest.mark.parametrize("name", PROVED_SETS)
def test_split_design_is_equivalent(name, before, tmp_path):
    params = PARAM_SETS[name]
    gold = _verilog_before(before, params, tmp_path / "before")
    gate = to_verilog(_TOP.construct(params), "multihash")
    assert gold != gate  # the Verilog did change
    proved, what = check_equivalence(gold, gate, "multihash", tmp_path / "equiv")
    assert proved, (name, what)


@pytest.mark.soak
def test_equivalence_check_rejects_a_different_design(before, tmp_path):
    """The CAM design without its bypass register (it misses the previous tuple's write)
    against the design before the split: not proved equivalent."""
    params = PARAM_SETS["formal_cam"]
    gold = _verilog_before(before, params, tmp_path / "before")
    broken = to_verilog(MultiHash(**_TOP.resolve(params), bypass=False), "multihash")
    proved, what = check_equivalence(gold, broken, "multihash", tmp_path / "equiv")
    assert not proved, what


# --- co-simulation: the sets the formal check cannot reach ---------------------------

#: the parameter sets co-simulated (every one but the formal sets, which are proved)
COSIM_SETS = sorted(n for n in PARAM_SETS if not n.startswith("formal"))
#: the co-simulated sets in ``make test`` (the rest: soak)
COSIM_FAST = ("default",)
#: fraction of cycles with the records' ready high (seeded pattern of stream.cpp)
READY = 0.7
#: the shipped load trace a slice of which is streamed
TRACE = SHIPPED_DIR / "xz.trace"


def cosim_schedule(params: dict) -> list[tuple[int, int, int, str]]:
    """Phases ``(interval, threshold, intervals, source)`` of the co-simulation stimulus.

    The reset configuration first; then, each written through ``cfg_*`` during the
    last interval of the phase before (it takes effect at the next boundary): long
    intervals with a low threshold (more candidates than accumulator entries),
    threshold 1 (every tuple a candidate), intervals shorter than a full readout
    (threshold 1: the readout of one interval still runs at the next boundary),
    threshold = interval (empty profiles), and a slice of a shipped load trace.
    ``source``: ``"mix"`` (hot keys and a long tail) or ``"trace"``.
    """
    interval, threshold, a = params["interval_length"], params["threshold"], params["accumulator"]
    return [(interval, threshold, 3 if interval <= 20_000 else 1, "mix"),
            (16 * a, 3, 6, "mix"), (4 * a, 1, 6, "mix"), (max(a // 2, 2), 1, 8, "mix"),
            (2 * a, 2 * a, 2, "mix"), (8 * a, 4, 8, "trace")]  # fmt: skip


def _mix_keys(rng, n: int, bits: int, a: int) -> np.ndarray:
    """``n`` keys: 30 % from 16 hot keys (Zipf weights), 40 % from ``3 a`` warm keys
    (uniform), 30 % a long tail (fresh random keys)."""
    top = 1 << bits
    hot = rng.integers(0, top, size=16, dtype=np.uint64)
    warm = rng.integers(0, top, size=3 * a, dtype=np.uint64)
    weights = 1.0 / np.arange(1, 17)
    pick = rng.random(n)
    keys = rng.integers(0, top, size=n, dtype=np.uint64)  # the tail
    is_hot, is_warm = pick < 0.3, (pick >= 0.3) & (pick < 0.7)
    keys[is_hot] = hot[rng.choice(16, size=int(is_hot.sum()), p=weights / weights.sum())]
    keys[is_warm] = warm[rng.integers(0, 3 * a, size=int(is_warm.sum()))]
    return keys


def cosim_stimulus(params: dict, seed: int) -> tuple[np.ndarray, dict, int]:
    """Keys, the ``drive`` of the configuration inputs (:func:`StreamHarness`) and the
    number of intervals of :func:`cosim_schedule`; the keys end at an interval boundary."""
    rng = np.random.default_rng(seed)
    bits = params["pc_bits"] + params["value_bits"]
    chunks, writes, start = [], [], 0
    phases = cosim_schedule(params)
    for k, (interval, _, count, source) in enumerate(phases):
        n = interval * count
        if source == "trace":
            offset = int(rng.integers(0, 100_000))
            chunks_of = trace_keys(
                TRACE,
                limit=offset + n,
                pc_bits=params["pc_bits"],
                value_bits=params["value_bits"],
                value_map=PORT_VALUE_MAP,
            )
            keys = np.concatenate(list(chunks_of))[offset:]
            assert len(keys) == n, f"{TRACE.name}: {len(keys)} load tuples, {n} wanted"
        else:
            keys = _mix_keys(rng, n, bits, params["accumulator"])
        chunks.append(keys)
        start += n
        if k + 1 < len(phases):  # the next phase's configuration, in this phase's last interval
            writes.append((start - interval + 1, *phases[k + 1][:2]))
    we = " || ".join(f"accepted == 64'd{at}" for at, _, _ in writes)
    interval = threshold = "0"
    for at, i, t in reversed(writes):
        interval = f"(accepted == 64'd{at}) ? {i} : {interval}"
        threshold = f"(accepted == 64'd{at}) ? {t} : {threshold}"
    drive = {"cfg_we": we, "cfg_interval": interval, "cfg_threshold": threshold}
    return np.concatenate(chunks), drive, sum(p[2] for p in phases)


def first_difference(old: StreamRun, new: StreamRun) -> str | None:
    """None if both runs made the same transfers (cycle and payload fields) and the same
    numbers of cycles, accepted tuples and input stalls; else where they first differ."""
    for what in ("cycles", "tuples", "stalls"):
        if getattr(old, what) != getattr(new, what):
            head = f"{what}: old {getattr(old, what)}, new {getattr(new, what)}"
            break
    else:
        head = None
    names = sorted(old.fields)
    common = min(len(old), len(new))
    same = old.cycle[:common] == new.cycle[:common]
    for name in names:
        same &= np.asarray(old.fields[name][:common] == new.fields[name][:common], dtype=bool)
    bad = np.flatnonzero(~same)
    if bad.size == 0 and len(old) == len(new):
        return head

    def show(run, i):
        if i >= len(run):
            return "none"
        return ", ".join([f"cycle {int(run.cycle[i])}",
                          *(f"{n} {int(run.fields[n][i]):#x}" for n in names)])  # fmt: skip

    i = int(bad[0]) if bad.size else common
    lines = [f"{int(bad.size) + abs(len(old) - len(new))} of {max(len(old), len(new))} "
             f"transfers differ (old {len(old)}, new {len(new)}); the first, transfer {i}:",
             f"  old: {show(old, i)}", f"  new: {show(new, i)}"]  # fmt: skip
    return "\n".join(([head] if head else []) + lines)


def _ports(verilog: str) -> list[str]:
    """The declarations of module ``multihash``'s ports (its ``input``/``output`` lines)."""
    body = verilog[verilog.index("module multihash(") :]
    body = body[: body.index("endmodule")]
    return sorted(line.strip() for line in body.splitlines()
                  if line.strip().startswith(("input ", "output ")))  # fmt: skip


def _cosim(name: str, gold: str, component, gate: str, seed: int, work: Path):
    """Both designs (Verilog ``gold`` and ``gate``, ports of ``component``) under the
    stimulus of :func:`cosim_stimulus`; the two runs, the intervals and the keys."""
    params = _TOP.resolve(PARAM_SETS[name])
    assert _ports(gold) == _ports(gate) != []  # so the one wrapper fits both
    keys, drive, intervals = cosim_stimulus(params, seed)
    drain = 2 * readout_cycles(params)
    runs = []
    for label, verilog in (("old", gold), ("new", gate)):
        harness = StreamHarness(component, verilog, "multihash", drive=drive,
                                name=f"multihash-cosim-{label}")  # fmt: skip
        runs.append(harness.run(keys, work / label, drain, READY, seed))
    return *runs, intervals, keys


def test_first_difference_finds_an_injected_one():
    """The comparison itself: equal runs pass; one changed field, cycle, count or a
    missing transfer is reported at its index with both sides."""

    def run(cycle, key, stalls=0):
        return StreamRun(cycles=10, tuples=3, stalls=stalls, seconds=0.0, cycles_per_second=0.0,
                         cpu_seconds=0.0, cpu_cycles_per_second=0.0,
                         cycle=np.array(cycle, dtype=np.uint64),
                         fields={"key": np.array(key, dtype=np.uint64)})  # fmt: skip

    base = run([3, 5, 8], [1, 2, 3])
    assert first_difference(base, run([3, 5, 8], [1, 2, 3])) is None
    assert "transfer 1:" in first_difference(base, run([3, 5, 8], [1, 7, 3]))
    assert "new: cycle 6, key 0x2" in first_difference(base, run([3, 6, 8], [1, 2, 3]))
    assert "transfer 2:\n  old: cycle 8, key 0x3\n  new: none" in first_difference(
        base, run([3, 5], [1, 2])
    )
    assert first_difference(base, run([3, 5, 8], [1, 2, 3], stalls=1)).startswith("stalls")


def _check_cosim(name: str, before: Path, seed: int, tmp_path: Path) -> None:
    params = PARAM_SETS[name]
    resolved = _TOP.resolve(params)
    gold = _verilog_before(before, params, tmp_path / "before")
    component = _TOP.construct(params)
    gate = to_verilog(component, "multihash")
    old, new, intervals, keys = _cosim(name, gold, component, gate, seed, tmp_path)
    differ = first_difference(old, new)
    assert differ is None, f"{name}, seed {seed}: the split design differs from the old\n{differ}"
    # the stimulus did what it is for: every tuple accepted, every interval read out
    # (end markers), the accumulator full in some interval, the output back-pressured
    ends = np.flatnonzero(new.fields["end"] == 1)
    sizes = np.diff(np.concatenate([[-1], ends])) - 1
    assert new.tuples == len(keys) and len(ends) == intervals, (new.tuples, len(ends))
    assert sizes.max() == resolved["accumulator"], sizes.max()
    print(
        f"{name}: {len(keys):,} tuples, {intervals} intervals, {len(new):,} transfers, "
        f"{new.stalls:,} input stalls, {new.cycles:,} cycles, the same in both designs"
    )


@pytest.mark.parametrize("name", [n if n in COSIM_FAST else pytest.param(n, marks=pytest.mark.soak)
                                  for n in COSIM_SETS])  # fmt: skip
def test_split_design_cosimulates_as_the_old(name, before, seed, tmp_path):
    """The old and the new Verilog of ``name`` under the same keys, configuration writes
    and seeded ready pattern: every output transfer equal, in the same cycle."""
    _check_cosim(name, before, seed, tmp_path)


@pytest.mark.soak
def test_cosimulation_rejects_a_different_design(before, seed, tmp_path):
    """The CAM design without its bypass register against the old one under the same
    stimulus: the transfers differ, and where is shown; the design with it matches."""
    name = "formal_cam"
    params = PARAM_SETS[name]
    gold = _verilog_before(before, params, tmp_path / "before")
    resolved = _TOP.resolve(params)
    broken = MultiHash(**resolved, bypass=False)
    old, new, _, _ = _cosim(name, gold, broken, to_verilog(broken, "multihash"), seed,
                            tmp_path / "broken")  # fmt: skip
    differ = first_difference(old, new)
    assert differ is not None, f"seed {seed}: the design without bypass was not told apart"
    print(f"{name} without bypass, seed {seed}:\n{differ}")
    right = _TOP.construct(params)
    old, new, _, _ = _cosim(name, gold, right, to_verilog(right, "multihash"), seed,
                            tmp_path / "right")  # fmt: skip
    assert first_difference(old, new) is None, f"seed {seed}: {first_difference(old, new)}"
