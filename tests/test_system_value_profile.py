"""Value profiling in the running system: hwprof/system/workloads/value_profile.c prints
the profile it read back from the multi-hash profiler; ``hwprof system run --profiler
--log-loads FILE`` logs the tuples offered to the profiler as a trace file. The printed
profile must be the golden multi-hash model's on that logged stream, read back through
hwprof.traces.

One system build per hash seed (cached under build/system/; the parameters are those of
tests/test_system_profiler_run.py, so the seed-1 build is shared with it); the second
seed and the build without conservative update are in the soak tier.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from hwprof.golden.multihash import run_plain
from hwprof.system import sim
from hwprof.traces.keys import PORT_VALUE_MAP, trace_keys
from hwprof.traces.tracefile import TraceReader

WORKLOAD = Path(__file__).resolve().parent.parent / "hwprof" / "system" / "workloads" / \
    "value_profile.c"
#: a small profiler (a quick Verilator build), as tests/test_system_profiler_run.py
PROFILER = {"tables": 4, "counters": 256, "counter_bits": 16, "accumulator": 16, "ways": 4}
#: value_profile.c's defaults
INTERVAL, THRESHOLD, INTERVALS = 1000, 25, 3
pytestmark = pytest.mark.cocotb  # Verilator tier


def _cli(args):
    from hwprof.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


def parse(output: str):
    """value_profile.c's lines: profiles (lists of (key, count)) and the tail fields."""
    profiles, fields = [], {}
    for line in output.splitlines():
        tag, *hexes = line.split()
        numbers = [int(h, 16) for h in hexes]
        if tag == "I":
            profiles.append([])
        elif tag == "C":
            profiles[-1].append(((numbers[0] << 32) | numbers[1], numbers[2]))
        else:
            fields[tag] = numbers[0]
    return profiles, fields


def profile_run(params: dict, work: Path, clock: float | None = None) -> dict:
    """Run value_profile.c through the command line with the profiler and the load log
    (``clock``: the profiler on its own clock at that ratio to the core's)."""
    log = work / "loads.trace"
    args = ["system", "run", "--json", "--profiler", "--log-loads", log, WORKLOAD]
    if clock is not None:
        args[2:2] = ["--profiler-clock", clock]
    for k, v in params.items():
        args[4:4] = ["-p", f"{k}={v}"]
    status, out, err = _cli(args)
    assert status == 0, err
    record = json.loads(out)
    profiles, fields = parse(record["output"])
    with TraceReader(log) as trace:
        keys = [int(k) for chunk in trace_keys(trace, value_map=PORT_VALUE_MAP) for k in chunk]
        footer, header = trace.footer, trace.header
    return {"record": record, "profiles": profiles, "fields": fields, "keys": keys,
            "footer": footer, "header": header, "log": log}  # fmt: skip


@pytest.fixture(scope="module")
def seed1(tmp_path_factory):
    return profile_run(PROFILER | {"hash_seed": 1}, tmp_path_factory.mktemp("vp1"))


def check_against_golden(run, params):
    """The printed profile is the golden model's on the logged stream; the counts agree."""
    keys, fields = run["keys"], run["fields"]
    assert fields["O"] == len(keys) == run["record"]["offered"] == run["footer"]["offered"]
    assert fields["D"] == 0 == run["record"]["dropped"] and run["footer"]["dropped_records"] == []
    assert fields["S"] & 0x8 == 0  # no overrun
    want = run_plain(keys, interval_length=INTERVAL, threshold=THRESHOLD, **params)
    assert len(want) == fields["N"] >= INTERVALS
    assert all(want[:INTERVALS]), "every interval has candidates"
    assert run["profiles"] == want[:INTERVALS]


def test_profile_read_back_equals_golden_on_logged_stream(seed1):
    check_against_golden(seed1, PROFILER | {"hash_seed": 1})
    # the stream is the program's: its pcs are in RAM, values of every load width
    assert len(seed1["keys"]) >= INTERVALS * INTERVAL
    assert seed1["header"]["kinds"] == ["load"]


@pytest.mark.soak
def test_second_hash_seed(tmp_path):
    params = PROFILER | {"hash_seed": 7}
    check_against_golden(profile_run(params, tmp_path), params)


@pytest.mark.soak
@pytest.mark.parametrize("clock", [1, 0.75, 0.5])
def test_profiler_clock_ratios_give_the_same_profile(clock, seed1, tmp_path):
    """The profiler on a clock of its own (one more build): the same profile as on the
    core's clock, and the golden model's on the logged stream."""
    params = PROFILER | {"hash_seed": 1}
    run = profile_run(params, tmp_path, clock=clock)
    check_against_golden(run, params)
    assert run["profiles"] == seed1["profiles"]


def test_checker_fails_without_conservative_update(seed1):
    """The comparison can fail: the golden model without conservative update (C0) on
    the same logged stream gives another profile than the one read back."""
    keys = seed1["keys"]
    c0 = run_plain(keys, interval_length=INTERVAL, threshold=THRESHOLD, conservative=False,
                   hash_seed=1, **PROFILER)  # fmt: skip
    assert seed1["profiles"] != c0[:INTERVALS]


def test_checker_fails_on_a_changed_tuple(seed1):
    """One logged tuple changed (a hot one, the first that changes a count): mismatch."""
    keys = list(seed1["keys"])
    params = PROFILER | {"hash_seed": 1}
    hot = {k for k, _ in seed1["profiles"][0]}
    i = next(i for i, k in enumerate(keys) if k in hot)
    keys[i] ^= 1
    want = run_plain(keys, interval_length=INTERVAL, threshold=THRESHOLD, **params)
    assert seed1["profiles"] != want[:INTERVALS]


@pytest.mark.soak
def test_profiler_without_conservative_update_fails_the_check(tmp_path):
    """A system built with the profiler's conservative update off: its profile is the C0
    golden model's and not the C1 one's (the same rule as the block-level test)."""
    params = PROFILER | {"hash_seed": 1, "conservative": False}
    run = profile_run(params, tmp_path)
    c1 = run_plain(run["keys"], interval_length=INTERVAL, threshold=THRESHOLD,
                   **(params | {"conservative": True}))  # fmt: skip
    assert run["profiles"] != c1[:INTERVALS]
    check_against_golden(run, params)


def test_log_is_a_trace_for_the_trace_commands(seed1):
    status, out, err = _cli(["trace", "info", seed1["log"]])
    assert status == 0, err
    assert f"{len(seed1['keys']):,} records" in out
    values = np.array(seed1["keys"], dtype=np.uint64) & np.uint64(0xFFFF_FFFF)
    assert len(np.unique(values)) > 20  # the interpreter's values, not a constant


# --- bad input: one line, exit 2, no build and no file -------------------------------------


@pytest.mark.parametrize(("extra", "message"), [
    (["-p", "tables=4"], "-p needs --profiler"),
    (["--log-loads", "{tmp}/l.trace"], "--log-loads needs --profiler"),
    (["--profiler", "-p", "tables=3"], "--profiler: multihash: counters / tables must be"),
    (["--profiler", "-p", "nosuch=1"], "--profiler: "),
    (["--profiler", "-p", "interval_length=100"], "interval_length is written by software"),
    (["--profiler", "-p", "tables"], "name=value"),
    (["--profiler", "--log-loads", "{tmp}/missing/l.trace"], "not a file in an existing"),
    (["--profiler", "--log-loads", "{tmp}"], "not a file in an existing directory"),
    (["--profiler-clock", "0.5"], "--profiler-clock needs --profiler"),
    (["--profiler", "--profiler-clock", "0.7"], "--profiler-clock must be a ratio"),
    (["--profiler", "--profiler-clock", "0"], "--profiler-clock must be a ratio"),
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
