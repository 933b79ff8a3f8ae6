"""The workloads and the shipped traces (hwprof/traces/workloads.py, traces/)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from hwprof.traces import workloads
from hwprof.traces.tracefile import BRANCH_KINDS, LOAD, TraceError, TraceReader
from hwprof.traces.workloads import (
    MORE_WORKLOADS,
    SHIPPED_LIMIT,
    WORKLOADS,
    shipped_trace,
    trace_for,
    workload_command,
)

MiB = 1 << 20


def test_shipped_traces_are_small_and_complete():
    sizes = {}
    for name, work in WORKLOADS.items():
        path = shipped_trace(name)
        sizes[name] = path.stat().st_size
        assert sizes[name] <= 4 * MiB, name
        with TraceReader(path) as reader:
            header, footer = reader.header, reader.footer
            kinds = set()
            for chunk in reader.chunks():
                kinds.update(int(k) for k in set(chunk.kind.tolist()))
        assert header["workload"] == name
        assert footer["records"] == SHIPPED_LIMIT and footer["stopped_at_limit"]
        # recording began after the workload's initialisation
        assert footer["skipped_instructions"] >= work.skip
        assert LOAD in kinds and kinds & set(BRANCH_KINDS), name
    assert sum(sizes.values()) <= 16 * MiB
    assert len(sizes) >= 3


def test_unknown_workload():
    with pytest.raises(TraceError, match="unknown workload 'gcc'"):
        shipped_trace("gcc")
    with pytest.raises(TraceError, match="unknown workload"):
        trace_for("gcc")


def test_workload_inputs_are_seeded(tmp_path):
    texts = []
    for sub, seed in (("a", 3), ("b", 3), ("c", 4)):
        (tmp_path / sub).mkdir()
        command = workload_command("sort", tmp_path / sub, seed)
        assert command[0] == "sort"
        texts.append((tmp_path / sub / "input.txt").read_text())
    assert texts[0] == texts[1] != texts[2]


def test_trace_for_without_valgrind_names_the_shipped_trace(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TraceError, match=r"needs valgrind.*apt-get install valgrind.*xz\.trace"):
        trace_for("xz", cache=tmp_path / "cache")


def test_python_workload_runs_the_real_binary():
    # python3 on PATH may be a shell shim (pyenv): valgrind would record the shell
    with open(workloads.real_python(), "rb") as f:
        assert f.read(4) == b"\x7fELF"


@pytest.mark.skipif(shutil.which("valgrind") is None,
                    reason="valgrind not installed (apt-get install valgrind)")  # fmt: skip
def test_trace_for_captures_once_into_the_cache(tmp_path):
    path = trace_for("sort", limit=5000, cache=tmp_path)
    stamp = path.stat().st_mtime_ns
    with TraceReader(path) as reader:
        assert reader.footer["records"] == 5000
        assert reader.header["workload"] == "sort" and reader.header["seed"] == 1
        assert reader.footer["skipped_instructions"] >= WORKLOADS["sort"].skip
    again = trace_for("sort", limit=5000, cache=tmp_path)
    assert again == path and again.stat().st_mtime_ns == stamp


@pytest.mark.skipif(shutil.which("valgrind") is None,
                    reason="valgrind not installed (apt-get install valgrind)")  # fmt: skip
def test_perl_workload_repeats(tmp_path):
    """Hash seed fixed and the input named relative to the work dir: two captures take
    the same path through the interpreter (without PERL_HASH_SEED=0 they do not)."""
    a = trace_for("perl", limit=20_000, cache=tmp_path / "a")
    b = trace_for("perl", limit=20_000, cache=tmp_path / "b")
    with TraceReader(a) as ra, TraceReader(b) as rb:
        ca, cb = next(ra.chunks()), next(rb.chunks())
    assert ra.header["argv"] == rb.header["argv"] and ra.header["argv"][-1] == "input.txt"
    for col in ("kind", "pc", "addr"):
        assert (getattr(ca, col) == getattr(cb, col)).all(), col


def test_input_scale_multiplies_the_input(tmp_path):
    sizes, commands = {}, {}
    for scale in (1, 3):
        work = tmp_path / f"x{scale}"
        work.mkdir()
        commands[scale] = workload_command("sort", work, 5, scale=scale)
        sizes[scale] = len((work / "input.txt").read_text().splitlines())
    assert sizes == {1: 40_000, 3: 120_000}
    # an enlarged sort input is sorted in one thread (one program-order load stream)
    assert commands[1] == ["sort", "input.txt"]
    assert commands[3] == ["sort", "--parallel=1", "input.txt"]
    work = tmp_path / "perl"
    work.mkdir()
    workload_command("perl", work, 5, scale=2)
    assert len((work / "input.txt").read_text().split()) == 120_000


def test_scaled_traces_have_their_own_cache_name(tmp_path):
    common = {"kinds": "loads", "skip": 10, "limit": 100, "seed": 1, "cache": tmp_path}
    plain = workloads.cached_trace_path("perl", **common)
    assert plain == workloads.cached_trace_path("perl", scale=1, **common)
    assert plain.name.startswith("perl-s1-skip10-limit100-loads-")
    scaled = workloads.cached_trace_path("perl", scale=5, **common)
    assert scaled.name.startswith("perl-x5-s1-skip10-limit100-loads-")
    # the tag differs too (it hashes the description, which names the scale)
    assert scaled.name.rsplit("-", 1)[1] != plain.name.rsplit("-", 1)[1]
    assert workloads.workload_description("perl", 5).endswith("input x5")
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(TraceError, match="input scale must be a positive integer"):
            workloads.cached_trace_path("perl", scale=bad, **common)
        with pytest.raises(TraceError, match="input scale must be a positive integer"):
            workload_command("perl", tmp_path, 1, scale=bad)
    # every program of the value experiments has a large scale, and only known workloads do
    assert set(WORKLOADS) <= set(workloads.LARGE_SCALE)
    assert set(workloads.LARGE_SCALE) <= set(WORKLOADS) | set(workloads.MORE_WORKLOADS)


def test_sha256sum_workload_hashes_the_seeded_text(tmp_path):
    texts = []
    for sub, seed, scale in (("a", 3, 1), ("b", 3, 1), ("c", 4, 1), ("d", 3, 2)):
        (tmp_path / sub).mkdir()
        command = workload_command("sha256sum", tmp_path / sub, seed, scale=scale)
        assert command == ["sha256sum", "input.txt"]
        texts.append((tmp_path / sub / "input.txt").read_text())
    assert texts[0] == texts[1] != texts[2]
    assert [len(t.split()) for t in texts] == [60_000, 60_000, 60_000, 120_000]
    assert "sha256sum" not in WORKLOADS  # not among the five every experiment loops over
    assert workloads.LARGE_SCALE["sha256sum"] == 100


def test_sha256sum_workload_names_the_missing_program(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TraceError, match=r"workload sha256sum needs sha256sum on PATH "
                                         r"\(Debian: apt-get install coreutils\)"):  # fmt: skip
        workload_command("sha256sum", tmp_path, 1)
    assert not (tmp_path / "input.txt").exists()  # nothing written
    stub = tmp_path / "sha256sum"
    stub.write_text("#!/bin/sh\n")
    stub.chmod(0o755)
    assert workload_command("sha256sum", tmp_path, 1) == ["sha256sum", "input.txt"]


@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("sha256sum") is None,
                    reason="valgrind or sha256sum not installed")  # fmt: skip
def test_sha256sum_skip_covers_its_start_up(tmp_path):
    """On an empty input sha256sum runs fewer guest instructions than the workload skips,
    so a capture starts while the program hashes its input."""
    from hwprof.traces.capture import capture

    (tmp_path / "empty.txt").write_text("")
    result = capture(["sha256sum", "empty.txt"], tmp_path / "t.trace", kinds="loads",
                     progress=False, stdout=subprocess.DEVNULL, cwd=tmp_path)  # fmt: skip
    assert result["exit_status"] == 0
    assert 0 < result["guest_instructions"] < MORE_WORKLOADS["sha256sum"].skip
