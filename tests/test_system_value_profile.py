"""Value profiling in the running system: hwprof/system/workloads/value_profile.c prints
the profile it read back from the multi-hash profiler; ``hwprof system run --profiler
--log-tuples FILE`` logs the tuples offered to the profiler as a trace file. The printed
profile must be the golden multi-hash model's on the tuples of that log the profiler
accepted (those the FIFO did not drop), read back through hwprof.traces.

Two system builds (cached under build/system/; the simulation clocks the profiler on its
own, so a clock ratio is a run-time choice, not a build):

* ``PROFILER`` at hash seed 1, FIFO of 16 (shared with tests/test_system_profiler_run.py):
  the profile at profiler/core clock ratios 1, 0.5 (slower) and 2 (faster), and edge
  profiling (taken branches, ``SOURCE`` = 1);
* hash seed 7 with a FIFO of 2 entries (shared with the seed-7 test there): the profile
  at ratio 1, and a profiler at a twentieth of the core's clock that drops more
  than a quarter of them (none at a tenth).

The build without conservative update is in the soak tier.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path

import numpy as np
import pytest

from hwprof.golden.multihash import run_plain
from hwprof.system import sim
from hwprof.system.firmware import FIRMWARE, compile_program
from hwprof.system.profiler import parse_profile_output
from hwprof.traces.keys import PORT_VALUE_MAP, trace_keys
from hwprof.traces.tracefile import TraceReader

WORKLOAD = Path(__file__).resolve().parent.parent / "hwprof" / "system" / "workloads" / \
    "value_profile.c"
#: a small profiler (a quick Verilator build), as tests/test_system_profiler_run.py
PROFILER = {"tables": 4, "counters": 256, "counter_bits": 16, "accumulator": 16, "ways": 4}
#: the second build: another hash seed and a FIFO small enough to overflow
SEED7_FIFO2 = {"hash_seed": 7, "fifo_depth": 2}
#: value_profile.c's defaults
INTERVAL, THRESHOLD, INTERVALS = 1000, 25, 3
#: a profiler clock slow enough that the FIFO of 2 overflows on value_profile.c's loads
SLOW = 0.05
pytestmark = pytest.mark.cocotb  # Verilator tier


def _cli(args):
    from hwprof.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


def profile_run(params: dict, work: Path, clock: float | None = None,
                defines: tuple[str, ...] = (), kinds: str = "loads") -> dict:  # fmt: skip
    """Run value_profile.c through the command line with the profiler and the tuple log
    (``clock``: the profiler's clock as a ratio to the core's; ``defines``: ``-D``)."""
    log = work / "tuples.trace"
    args = ["system", "run", "--json", "--profiler", "--log-tuples", log]
    args += [a for k, v in params.items() for a in ("-p", f"{k}={v}")]
    args += [a for d in defines for a in ("-D", d)]
    if clock is not None:
        args += ["--profiler-clock", clock]
    status, out, err = _cli([*args, WORKLOAD])
    assert status == 0, err
    record = json.loads(out)
    profiles, fields = parse_profile_output(record["output"])
    with TraceReader(log) as trace:
        keys = [int(k) for chunk in trace_keys(trace, kinds, value_map=PORT_VALUE_MAP)
                for k in chunk]  # fmt: skip
        footer, header = trace.footer, trace.header
        records = list(trace.chunks())
    return {"record": record, "profiles": profiles,
            "fields": {tag: numbers[0] for tag, numbers in fields.items()}, "keys": keys,
            "footer": footer, "header": header, "log": log, "records": records}  # fmt: skip


@pytest.fixture(scope="module")
def seed1(tmp_path_factory):
    return profile_run(PROFILER | {"hash_seed": 1}, tmp_path_factory.mktemp("vp1"))


@pytest.fixture(scope="module")
def overflow(tmp_path_factory):
    """The FIFO of 2 with the profiler at a twentieth of the core's clock: tuples dropped."""
    return profile_run(PROFILER | SEED7_FIFO2, tmp_path_factory.mktemp("vp7s"), clock=SLOW)


def golden(keys, params) -> list:
    """The golden model's profiles of ``keys`` for the profiler built with ``params``
    (``fifo_depth`` is the peripheral's, not the model's)."""
    model = {k: v for k, v in params.items() if k != "fifo_depth"}
    return run_plain(keys, interval_length=INTERVAL, threshold=THRESHOLD, **model)


def accepted_keys(run) -> list[int]:
    """The logged tuples the FIFO accepted: all but the footer's ``dropped_records``."""
    dropped = set(run["footer"]["dropped_records"])
    return [k for i, k in enumerate(run["keys"]) if i not in dropped]


def check_against_golden(run, params):
    """The printed profile is the golden model's on the accepted tuples of the log; the
    offered and dropped counts of the firmware, the summary and the log agree."""
    keys, fields, footer = run["keys"], run["fields"], run["footer"]
    assert fields["O"] == len(keys) == run["record"]["offered"] == footer["offered"]
    assert fields["D"] == run["record"]["dropped"] == footer["dropped"] \
        == len(footer["dropped_records"])
    assert fields["S"] & 0x8 == 0  # no overrun
    want = golden(accepted_keys(run), params)
    assert len(want) == fields["N"] >= INTERVALS
    assert all(want[:INTERVALS]), "every interval has candidates"
    assert run["profiles"] == want[:INTERVALS]


def test_profile_read_back_equals_golden_on_logged_stream(seed1):
    check_against_golden(seed1, PROFILER | {"hash_seed": 1})
    assert seed1["fields"]["D"] == 0  # the FIFO of 16 at the core's clock: nothing dropped
    # the stream is the program's: its pcs are in RAM, values of every load width
    assert len(seed1["keys"]) >= INTERVALS * INTERVAL
    assert seed1["header"]["kinds"] == ["load"]


def test_second_hash_seed(tmp_path):
    params = PROFILER | SEED7_FIFO2
    run = profile_run(params, tmp_path)
    check_against_golden(run, params)
    assert run["fields"]["D"] == 0  # the core's loads never fill 2 entries at ratio 1


def test_overflow_drops_are_counted_and_the_rest_profiled(overflow):
    """A FIFO that overflows: the firmware's DROPPED, the summary and the log's dropped
    records agree exactly, and the profile is the golden model's on the others."""
    check_against_golden(overflow, PROFILER | SEED7_FIFO2)
    assert overflow["fields"]["D"] > 0.25 * overflow["fields"]["O"]


def test_checker_fails_on_a_wrong_dropped_count(overflow):
    """The check fails when the dropped count is off by one anywhere: in the firmware's
    line, or in the log (one dropped tuple taken for accepted, counts kept consistent)."""
    run = copy.deepcopy(overflow)
    run["fields"]["D"] += 1
    with pytest.raises(AssertionError):
        check_against_golden(run, PROFILER | SEED7_FIFO2)
    # a dropped tuple of a hot key counted as accepted: only the profile can tell
    run = copy.deepcopy(overflow)
    hot = {k for profile in run["profiles"] for k, _ in profile}
    index = next(i for i in run["footer"]["dropped_records"] if run["keys"][i] in hot)
    run["footer"]["dropped_records"].remove(index)
    run["footer"]["dropped"] -= 1
    run["fields"]["D"] -= 1
    run["record"]["dropped"] -= 1
    with pytest.raises(AssertionError):
        check_against_golden(run, PROFILER | SEED7_FIFO2)
    # and the drops matter: the golden model on every offered tuple is another profile
    every = golden(overflow["keys"], PROFILER | SEED7_FIFO2)
    assert overflow["profiles"] != every[:INTERVALS]


@pytest.mark.parametrize("clock", [0.5, 2])
def test_profiler_clock_ratios_give_the_same_profile(clock, seed1, tmp_path):
    """The profiler slower and faster than the core (the same build, another clock):
    the same profile as at ratio 1, and the golden model's on the logged stream."""
    params = PROFILER | {"hash_seed": 1}
    run = profile_run(params, tmp_path, clock=clock)
    check_against_golden(run, params)
    assert run["fields"]["D"] == 0
    assert run["profiles"] == seed1["profiles"]


def _imm_b(word: int) -> int:
    """The B-type immediate of a RISC-V word (the RISC-V specification's layout)."""
    imm = ((word >> 31) & 1) << 12 | ((word >> 7) & 1) << 11 | ((word >> 25) & 0x3F) << 5 \
        | ((word >> 8) & 0xF) << 1
    return imm - (1 << 13) if imm & (1 << 12) else imm


def test_edge_profile_equals_golden_on_logged_branches(tmp_path):
    """Edge profiling: software selects taken branches (SOURCE = 1); the profile read
    back is the golden model's on the logged <pc, target> stream, and each logged
    tuple is a conditional branch of the program and its B-type target."""
    params = PROFILER | {"hash_seed": 1}
    run = profile_run(params, tmp_path, defines=("VP_SOURCE=1",), kinds="branches")
    check_against_golden(run, params)
    assert run["header"]["kinds"] == ["cond_taken"]
    # the program's image, compiled as the command line does
    image = compile_program([WORKLOAD], tmp_path / "fw", defines={"VP_SOURCE": "1"},
                            extra_flags=(f"-I{FIRMWARE}",)).image  # fmt: skip
    edges = {(int(k) >> 32, int(k) & 0xFFFF_FFFF) for k in run["keys"]}
    assert len(edges) > 5
    for pc, target in edges:
        word = int.from_bytes(image[pc:pc + 4], "little")
        assert word & 0x7F in (0x63, 0x0B), hex(word)  # a branch or a brr
        assert target == (pc + _imm_b(word)) & 0xFFFF_FFFF


@pytest.mark.soak
def test_profiler_without_conservative_update_fails_the_check(tmp_path):
    """A system built with the profiler's conservative update off: its profile is the C0
    golden model's and not the C1 one's (the same rule as the block-level test)."""
    params = PROFILER | {"hash_seed": 1, "conservative": False}
    run = profile_run(params, tmp_path)
    c1 = golden(run["keys"], params | {"conservative": True})
    assert run["profiles"] != c1[:INTERVALS]
    check_against_golden(run, params)


def test_checker_fails_without_conservative_update(seed1):
    """The comparison can fail: the golden model without conservative update (C0) on
    the same logged stream gives another profile than the one read back."""
    keys = seed1["keys"]
    c0 = golden(keys, PROFILER | {"hash_seed": 1, "conservative": False})
    assert seed1["profiles"] != c0[:INTERVALS]


def test_checker_fails_on_a_changed_tuple(seed1):
    """One logged tuple changed (a hot one, the first that changes a count): mismatch."""
    run = copy.deepcopy(seed1)
    hot = {k for k, _ in seed1["profiles"][0]}
    i = next(i for i, k in enumerate(run["keys"]) if k in hot)
    run["keys"][i] ^= 1
    with pytest.raises(AssertionError):
        check_against_golden(run, PROFILER | {"hash_seed": 1})


def test_log_is_a_trace_for_the_trace_commands(seed1):
    status, out, err = _cli(["trace", "info", seed1["log"]])
    assert status == 0, err
    assert f"{len(seed1['keys']):,} records" in out
    values = np.array(seed1["keys"], dtype=np.uint64) & np.uint64(0xFFFF_FFFF)
    assert len(np.unique(values)) > 20  # the interpreter's values, not a constant


# --- bad input: one line, exit 2, no build and no file -------------------------------------


@pytest.mark.parametrize(("extra", "message"), [
    (["-p", "tables=4"], "-p needs --profiler"),
    (["--log-loads", "{tmp}/l.trace"], "--log-tuples needs --profiler"),
    (["--profiler", "-p", "fifo_depth=3"], "fifo_depth must be a power of two from 2 to 1024"),
    (["--profiler", "-p", "fifo_depth=2048"], "fifo_depth must be a power of two from 2 to"),
    (["--profiler", "-p", "fifo_depth=1"], "fifo_depth must be a power of two from 2 to"),
    (["--profiler", "-p", "fifo_depth=many"], "fifo_depth must be an integer"),
    (["--profiler", "-D", "1X=2"], "-D must be NAME or NAME=VALUE"),
    (["-D", "VP SOURCE"], "-D must be NAME or NAME=VALUE"),
    (["--profiler", "-p", "tables=3"], "--profiler: multihash: counters / tables must be"),
    (["--profiler", "-p", "nosuch=1"], "--profiler: "),
    (["--profiler", "-p", "interval_length=100"], "interval_length is written by software"),
    (["--profiler", "-p", "tables"], "name=value"),
    (["--profiler", "--log-loads", "{tmp}/missing/l.trace"], "not a file in an existing"),
    (["--profiler", "--log-loads", "{tmp}"], "not a file in an existing directory"),
    (["--profiler-clock", "0.5"], "--profiler-clock needs --profiler"),
    (["--profiler", "--profiler-clock", "0.7"], "--profiler-clock must be a ratio"),
    (["--profiler", "--profiler-clock", "0"], "--profiler-clock must be a ratio"),
    (["--profiler", "--profiler-clock", "8"], "--profiler-clock must be a ratio"),
])  # fmt: skip
def test_cli_profiler_bad_input(extra, message, tmp_path, monkeypatch):
    def no_build(*args, **kwargs):
        raise AssertionError("bad input must not build the system")

    monkeypatch.setattr(sim, "build_system", no_build)
    args = ["system", "run", *(a.format(tmp=tmp_path) for a in extra), WORKLOAD]
    before = sorted(tmp_path.rglob("*"))
    status, out, err = _cli(args)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("hwprof: error: "), err
    assert message in err
    assert sorted(tmp_path.rglob("*")) == before
