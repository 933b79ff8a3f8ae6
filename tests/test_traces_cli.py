"""``hwprof trace info|dump|convert|capture``, tuple statistics, and quiet closed pipes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from hwprof.cli import main
from hwprof.golden import trace_stats
from hwprof.golden.trace_stats import IntervalTuples, PcCounts
from hwprof.traces import lackey as legacy
from hwprof.traces.tracefile import (
    BLOCK,
    COLUMNS,
    COND_NOT_TAKEN,
    COND_TAKEN,
    EDGE,
    LOAD,
    RETURN,
    TraceWriter,
    open_trace,
)
from tests.trace_records import random_records, read_all, write_records


def interleaved_loads(rng, n_loads: int, n_other: int):
    """Loads with hot, warm and cold ``<pc,value>`` tuples, branches interleaved at random."""
    pcs = rng.integers(0x400000, 0x400400, 40).astype(np.uint64)
    hot = [(pcs[0], 7), (pcs[1], 7), (pcs[2], 1 << 40 | 7), (pcs[2], 7)]  # differ in high bits
    warm = [(pcs[i % 40], 1000 + i) for i in range(60)]
    pick = rng.random(n_loads)
    pc = np.empty(n_loads, np.uint64)
    value = np.empty(n_loads, np.uint64)
    h = rng.integers(0, len(hot), n_loads)
    w = rng.integers(0, len(warm), n_loads)
    for i in range(n_loads):
        if pick[i] < 0.3:
            pc[i], value[i] = hot[h[i]]
        elif pick[i] < 0.6:
            pc[i], value[i] = warm[w[i]]
        else:
            pc[i], value[i] = pcs[w[i] % 40], rng.integers(0, 1 << 63)
    addr = (0x7FFD_0000 + 8 * rng.zipf(1.3, n_loads) % (1 << 20)).astype(np.uint64)
    kind = np.full(n_loads + n_other, LOAD, np.uint8)
    others = rng.choice(n_loads + n_other, n_other, replace=False)
    kind[others] = rng.choice([COND_TAKEN, COND_NOT_TAKEN, RETURN], n_other)
    is_load = kind == LOAD
    columns = {"kind": kind, "size": np.where(is_load, 8, 0).astype(np.uint8)}
    for name, loads in (("pc", pc), ("addr", addr), ("value", value)):
        full = rng.integers(0x500000, 0x500100, n_loads + n_other).astype(np.uint64)
        full[is_load] = loads
        columns[name] = full
    return columns


def expected_per_interval(pcs, xs, length, thresholds):
    """Distinct and candidate tuples of each complete interval, by Python Counters."""
    distinct, candidates = [], [[] for _ in thresholds]
    for start in range(0, len(pcs) - length + 1, length):
        counts = Counter(zip(pcs[start : start + length].tolist(),
                             xs[start : start + length].tolist(), strict=True))  # fmt: skip
        distinct.append(len(counts))
        for out, t in zip(candidates, thresholds, strict=True):
            out.append(sum(c >= t for c in counts.values()))
    return distinct, candidates


def test_candidate_threshold_is_reached_at_equality():
    # paper sec. 5.2: a candidate's count is "greater than or equal to" threshold x length
    stats = IntervalTuples(1000, percents=(1.0,))
    assert stats.thresholds == (10,)
    pc = np.array([1] * 10 + [2] * 9 + list(range(100, 1081)), np.uint64)
    value = np.array([5] * 10 + [5] * 9 + [0] * 981, np.uint64)
    stats.add(pc, value)
    stats.add(pc[:500], value[:500])  # an incomplete interval: left over, not counted
    stats.finish()
    assert stats.distinct.tolist() == [2 + 981]
    assert stats.candidates[1.0].tolist() == [1]
    assert stats.leftover == 500


def test_tuples_differing_in_high_bits_only_are_distinct():
    # no key truncation: <pc, value> compared on all 64 bits of both fields
    stats = IntervalTuples(60, percents=(10.0,))
    high = [0, 1 << 32, 1 << 40, 1 << 63]
    pc = np.array([5 + h for h in high for _ in range(6)] + [5] * 36, np.uint64)
    value = np.array([7] * 24 + [7 + h for h in high for _ in range(9)], np.uint64)
    stats.add(pc, value)
    stats.finish()
    # <5,7> 15 times; <5+h,7> 6 times and <5,7+h> 9 times for the three h > 0
    assert stats.distinct.tolist() == [7]
    assert stats.candidates[10.0].tolist() == [7]  # threshold 6


def test_interval_tuples_match_counters_across_blocks(monkeypatch, seed):
    monkeypatch.setattr(trace_stats, "BLOCK_TUPLES", 25_000)  # several sort blocks
    rng = np.random.default_rng(seed)
    columns = interleaved_loads(rng, 45_000, 0)
    for x in ("value", "addr"):
        stats = IntervalTuples(10_000, percents=(1.0, 0.1))
        for lo in range(0, 45_000, 7_777):
            stats.add(columns["pc"][lo : lo + 7_777], columns[x][lo : lo + 7_777])
        stats.finish()
        distinct, (c1, c01) = expected_per_interval(columns["pc"], columns[x], 10_000, (100, 10))
        assert stats.distinct.tolist() == distinct
        assert stats.candidates[1.0].tolist() == c1
        assert stats.candidates[0.1].tolist() == c01
        assert stats.leftover == 5_000
    assert min(c1) >= 4 and max(c01) > max(c1)  # the stream has both kinds of candidates


def test_interval_tuples_one_million(seed):
    rng = np.random.default_rng(seed)
    n = 1_100_000
    pick = rng.random(n)  # 5% one tuple, 50% 400 tuples (~1250 each), 45% cold
    pcs = np.where(pick < 0.05, 7, rng.integers(0, 100, n)).astype(np.uint64)
    values = np.where(pick < 0.55, rng.integers(0, 4, n), rng.integers(0, 1 << 62, n))
    values = values.astype(np.uint64)
    values[pick < 0.05] = np.uint64(1 << 63 | 3)
    stats = IntervalTuples(1_000_000, percents=(1.0, 0.1))
    for lo in range(0, n, 300_000):
        stats.add(pcs[lo : lo + 300_000], values[lo : lo + 300_000])
    stats.finish()
    distinct, (c1, c01) = expected_per_interval(pcs, values, 1_000_000, (10_000, 1_000))
    assert stats.thresholds == (10_000, 1_000)
    assert stats.distinct.tolist() == distinct
    assert (stats.candidates[1.0].tolist(), stats.candidates[0.1].tolist()) == (c1, c01)
    assert c1 == [1] and c01[0] > 300


def test_pc_counts_top(seed):
    rng = np.random.default_rng(seed)
    counts = PcCounts()
    all_pcs, all_loads = [], []
    for _ in range(4):
        pc = rng.integers(0, 50, 3000).astype(np.uint64) * 4
        is_load = rng.random(3000) < 0.6
        counts.add(pc, is_load)
        all_pcs += pc.tolist()
        all_loads += is_load.tolist()
    total = Counter(all_pcs)
    loads = Counter(p for p, is_load in zip(all_pcs, all_loads, strict=True) if is_load)
    expected = sorted(total, key=lambda p: (-total[p], p))[:5]
    assert counts.top(5) == [(p, loads[p], total[p] - loads[p]) for p in expected]


def info_rows(out: str) -> dict:
    rows = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 8 and fields[0] in ("loads", "edges"):
            rows[(fields[0], fields[1], int(fields[2].replace(",", "")))] = fields[3:]
    return rows


def test_info_counts_tuples_and_candidates(tmp_path, capsys, seed):
    rng = np.random.default_rng(seed)
    columns = interleaved_loads(rng, 35_000, 9_000)
    path = tmp_path / "t.trace"
    write_records(path, columns, chunk_records=4096, footer={"tool": {"guest_instructions": 9}})
    capsys.readouterr()  # the seed line
    assert main(["trace", "info", str(path)]) == 0
    out = capsys.readouterr().out
    is_load = columns["kind"] == LOAD
    for name, n in Counter(columns["kind"].tolist()).items():
        label = {LOAD: "load", COND_TAKEN: "cond_taken", COND_NOT_TAKEN: "cond_not_taken",
                 RETURN: "return"}[name]  # fmt: skip
        assert any(line.split()[:2] == [label, f"{n:,}"] for line in out.splitlines()), label
    assert "program:        /bin/test" in out and "guest_instructions" in out
    rows = info_rows(out)
    for tuple_name, x in (("<pc,value>", "value"), ("<pc,address>", "addr")):
        pcs, xs = columns["pc"][is_load], columns[x][is_load]
        distinct, (c1, c01) = expected_per_interval(pcs, xs, 10_000, (100, 10))
        intervals, mean_distinct, mean_c1, mean_c01, thresholds = rows[("loads", tuple_name,
                                                                        10_000)]  # fmt: skip
        assert int(intervals) == 3
        assert float(mean_distinct) == pytest.approx(np.mean(distinct), abs=0.05)
        assert float(mean_c1) == pytest.approx(np.mean(c1), abs=0.005)
        assert float(mean_c01) == pytest.approx(np.mean(c01), abs=0.005)
        assert thresholds == "(100,10)"
        assert rows[("loads", tuple_name, 1_000_000)][:2] == ["0", "-"]  # no complete interval
    top = [line.split() for line in out.splitlines() if line.startswith("  0x")]
    by_pc = Counter(columns["pc"].tolist())
    best = max(by_pc, key=lambda p: (by_pc[p], -p))
    assert int(top[0][0], 16) == best
    loads_at_best = int(np.sum((columns["pc"] == best) & is_load))
    assert top[0][1:4] == [f"{loads_at_best:,}", "/", f"{by_pc[best] - loads_at_best:,}"]
    # the same figures as JSON (--json)
    assert main(["trace", "info", "--json", str(path)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["records"] == len(columns["kind"])
    assert info["footer"]["counts"]["load"] == int(is_load.sum())
    by_row = {(r["records"], r["tuple"], r["interval"]): r for r in info["tuples"]}
    for tuple_name, x in (("<pc,value>", "value"), ("<pc,address>", "addr")):
        distinct, (c1, c01) = expected_per_interval(columns["pc"][is_load], columns[x][is_load],
                                                    10_000, (100, 10))  # fmt: skip
        row = by_row[("loads", tuple_name, 10_000)]
        assert row["intervals"] == 3
        assert row["distinct"] == pytest.approx(np.mean(distinct))
        assert row["candidates"]["1.0"] == pytest.approx(np.mean(c1))
        assert row["candidates"]["0.1"] == pytest.approx(np.mean(c01))
        assert by_row[("loads", tuple_name, 1_000_000)]["distinct"] is None
    assert info["top_pcs"][0] == [best, loads_at_best, by_pc[best] - loads_at_best]


def test_dump_format_and_filters(tmp_path, capsys):
    path = tmp_path / "t.trace"
    with TraceWriter(path, header={}) as writer:
        writer.write(kind=LOAD, pc=0x401000, addr=0x7FFD0010, value=0xDEADBEEF, size=4)
        writer.write(kind=COND_TAKEN, pc=0x401010, addr=0x401000, value=0x401012)
        writer.write(kind=LOAD, pc=0x401004, addr=0x7FFD0018, value=0xFFFFFFFFFFFFFFFF, size=16)
        writer.write(kind=RETURN, pc=0x401020, addr=0x400800, value=0x401021)
        writer.write(kind=BLOCK, pc=0x400800)
        writer.close()
    assert main(["trace", "dump", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "L 401000 7ffd0010 deadbeef 4",
        "B 401010 401000 cond_taken",
        "L 401004 7ffd0018 ffffffffffffffff 10",
        "B 401020 400800 return",
        "S 400800",
    ]
    assert main(["trace", "dump", str(path), "--kind", "loads", "--limit", "1"]) == 0
    assert capsys.readouterr().out == "L 401000 7ffd0010 deadbeef 4\n"
    assert main(["trace", "dump", str(path), "--kind", "branches"]) == 0
    assert capsys.readouterr().out.splitlines() == ["B 401010 401000 cond_taken",
                                                    "B 401020 400800 return"]  # fmt: skip


def test_dump_limit_across_chunks(tmp_path, capsys, seed):
    records = random_records(np.random.default_rng(seed), 2500)
    path = write_records(tmp_path / "t.trace", records, chunk_records=1000)
    capsys.readouterr()  # the seed line
    assert main(["trace", "dump", str(path), "--limit", "1500"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1500
    assert lines[1234].split()[1] == f"{int(records['pc'][1234]):x}"


def test_convert_legacy_and_info(tmp_path, capsys, seed):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 1 << 32, 3000, dtype=np.uint64)
    dst = rng.integers(0, 1 << 32, 3000, dtype=np.uint64)
    old, new = tmp_path / "old.trace.gz", tmp_path / "new.trace"
    legacy.write_trace(old, src, dst, comment="sort: sort input")
    capsys.readouterr()  # the seed line
    assert main(["trace", "convert", str(old), str(new)]) == 0
    assert "3,000 records" in capsys.readouterr().out
    with open_trace(new) as reader:
        got = read_all(reader)
        assert reader.header["converted_from"] == str(old)
        assert reader.header["comment"] == "sort: sort input"
    assert set(got["kind"].tolist()) == {EDGE}
    np.testing.assert_array_equal(got["pc"], src)
    np.testing.assert_array_equal(got["addr"], dst)
    assert main(["trace", "info", str(new)]) == 0
    out = capsys.readouterr().out
    assert ("edges", "<source,destination>", 10_000) in info_rows(out)
    assert main(["trace", "dump", str(new), "--limit", "1"]) == 0
    assert capsys.readouterr().out == f"E {int(src[0]):x} {int(dst[0]):x}\n"


def test_convert_recompresses_a_trace_at_a_level(tmp_path, capsys):
    rng = np.random.default_rng(11)
    records = random_records(rng, 20_000, kinds=[0])
    records["value"] = rng.integers(0, 50, 20_000).astype(np.uint64)  # compressible
    records["addr"] = (records["pc"] * np.uint64(3)) % np.uint64(1 << 20)
    fast = write_records(tmp_path / "fast.trace", records, chunk_records=5000)
    small = tmp_path / "small.trace"
    assert main(["trace", "convert", "--level", "19", str(fast), str(small)]) == 0
    assert small.stat().st_size < fast.stat().st_size  # level 19 beats the default 3
    got = read_all(open_trace(small))
    for column in COLUMNS:
        np.testing.assert_array_equal(got[column], records[column], err_msg=column)
    capsys.readouterr()
    for command in (["convert", str(fast), str(tmp_path / "x.trace")],
                    ["capture", "-o", str(tmp_path / "x.trace"), "--", "true"]):  # fmt: skip
        with pytest.raises(SystemExit) as exc:
            main(["trace", *command[:1], "--level", "0", *command[1:]])
        assert exc.value.code == 2
        assert "expected a zstd level 1..19, not '0'" in capsys.readouterr().err
    assert not (tmp_path / "x.trace").exists()


def defects(tmp_path):
    good = write_records(tmp_path / "good.trace", random_records(np.random.default_rng(3), 50),
                         chunk_records=20)  # fmt: skip
    data = good.read_bytes()
    files = {
        "truncated": data[: len(data) // 2],
        "corrupt": data[:200] + bytes([data[200] ^ 1]) + data[201:],
        "version": data[:8] + b"\x07\x00" + data[10:],
        "magic": b"NOTATRACE" + data[9:],
        "empty": b"",
        "legacy-bad": gzip.compress(b"1 2\nnot hex\n"),
    }
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    return [tmp_path / name for name in files] + [tmp_path / "missing"]


@pytest.mark.parametrize("command", ["info", "dump", "convert"])
def test_bad_traces_give_one_line_and_exit_2(tmp_path, capsys, command):
    for path in defects(tmp_path):
        extra = [str(tmp_path / "out.trace")] if command == "convert" else []
        assert main(["trace", command, str(path), *extra]) == 2, path
        captured = capsys.readouterr()
        assert captured.out == ""
        lines = captured.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("hwprof: error: ") and str(path) in lines[0]
        assert not (tmp_path / "out.trace").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def run_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "hwprof.cli", *args], capture_output=True,
                          text=True)  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


def test_bad_trace_in_a_real_process_has_no_traceback(tmp_path):
    path = tmp_path / "bad.trace"
    path.write_bytes(b"HWPTRACE\x01\x00")
    code, out, err = run_cli("trace", "info", str(path))
    assert (code, out) == (2, "")
    assert err == f"hwprof: error: {path}: truncated trace (10 bytes: not even a header)\n"


def test_capture_without_the_capture_module_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "hwprof.traces.capture", None)  # as if not there
    out = tmp_path / "x.trace"
    assert main(["trace", "capture", "-o", str(out), "--", "true"]) == 2
    err = capsys.readouterr().err
    assert err == ("hwprof: error: trace capture is not available in this hwprof "
                   "(hwprof/traces/capture.py is missing)\n")  # fmt: skip
    assert not out.exists()


def test_capture_passes_its_arguments(monkeypatch, tmp_path):
    seen = {}

    class Fake:
        @staticmethod
        def capture_command(args):
            seen.update(vars(args))
            return 0

    monkeypatch.setitem(sys.modules, "hwprof.traces.capture", Fake)
    argv = ["trace", "capture", "-o", "t.trace", "--kinds", "loads", "--skip", "1000",
            "--limit", "5", "--", "xz", "-c", "-9"]  # fmt: skip
    assert main(argv) == 0
    assert {k: seen[k] for k in ("output", "kinds", "skip", "limit", "command")} == {
        "output": "t.trace", "kinds": "loads", "skip": 1000, "limit": 5,
        "command": ["xz", "-c", "-9"]}  # fmt: skip


def pipe_into_head(command: list[str]):
    writer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = subprocess.run(["head", "-1"], stdin=writer.stdout, capture_output=True)
    writer.stdout.close()
    err = writer.stderr.read().decode()
    writer.stderr.close()
    return writer.wait(), head.stdout.decode(), err


def test_closed_pipe_ends_quietly(tmp_path):
    records = random_records(np.random.default_rng(1), 200_000)  # ~10 MB of text
    path = write_records(tmp_path / "t.trace", records, chunk_records=50_000)
    code, first, err = pipe_into_head([sys.executable, "-m", "hwprof.cli", "trace", "dump",
                                       str(path)])  # fmt: skip
    assert first.startswith(("L ", "B ", "S ", "E "))
    assert (code, err) == (141, "")
    code, first, err = pipe_into_head([sys.executable, "-m", "hwprof.cli", "list"])
    assert first.startswith("brr") and err == "" and code in (0, 141)


def test_the_pipe_check_sees_a_traceback():
    # the check above can fail: a program without the handling prints BrokenPipeError
    code, _, err = pipe_into_head([sys.executable, "-c",
                                   "for i in range(10**6): print(i)"])  # fmt: skip
    assert "BrokenPipeError" in err and code != 0


def test_kinds_argument_is_validated(capsys):
    with pytest.raises(SystemExit) as excinfo:
        main(["trace", "capture", "-o", "x", "--kinds", "loads,stores", "--", "true"])
    assert excinfo.value.code == 2
    assert "unknown record kind 'stores'" in capsys.readouterr().err


def test_info_and_dump_refuse_a_legacy_file(tmp_path, capsys):
    """The legacy gzip'd text format is read only by ``convert``: other commands say so."""
    old = tmp_path / "old.trace.gz"
    legacy.write_trace(old, [1, 2, 3], [4, 5, 6])
    capsys.readouterr()
    for command in ("info", "dump"):
        assert main(["trace", command, str(old)]) == 2
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1 and not captured.out, captured
        assert f"hwprof trace convert {old} NEW.trace" in captured.err, captured.err
    assert os.path.exists(old)


def test_capture_starts_valgrind_before_numpy_is_imported(tmp_path):
    """`hwprof trace capture` starts valgrind before it imports numpy, zstandard or the
    trace writer: their imports then overlap valgrind's start-up (docs/traces.md).

    In a fresh interpreter, the command runs with valgrind's start (the ``Popen`` of
    ``--tool=...``) replaced by a recorder of the modules imported at that moment,
    which then fails as a missing program would (no valgrind or tool build needed).
    """
    out = tmp_path / "x.trace"
    code = f"""
import subprocess, sys
WATCH = ("numpy", "hwprof.traces.tracefile", "zstandard")
real, seen = subprocess.Popen, []
def popen(argv, *args, **kwargs):
    if not any(str(a).startswith("--tool=") for a in argv):
        return real(argv, *args, **kwargs)
    seen.append(sorted(m for m in WATCH if m in sys.modules))
    raise OSError(2, "stopped by the test")
subprocess.Popen = popen
from hwprof.traces import capture as trace_capture
trace_capture.find_valgrind = lambda: trace_capture.Path("/usr/bin/valgrind")
trace_capture.build_tool = lambda tool_dir, **kw: tool_dir
trace_capture._valgrind_version = lambda valgrind: "stub"
from hwprof.cli import main
status = main(["trace", "capture", "-o", {str(out)!r}, "--kinds", "loads,branches",
               "--", "true"])
print(status, seen)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)  # fmt: skip
    # one valgrind start, nothing of the three imported by then; the command then
    # fails (status 2, one line) and leaves no file
    assert run.stdout == "2 [[]]\n", run.stdout + run.stderr
    assert "stopped by the test" in run.stderr and run.stderr.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []
