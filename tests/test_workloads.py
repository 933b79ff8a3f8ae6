"""The workloads and the shipped traces (hwprof/sim/workloads.py, traces/)."""

from __future__ import annotations

import shutil

import pytest

from hwprof.golden.tracefile import BRANCH_KINDS, LOAD, TraceError, TraceReader
from hwprof.sim import workloads
from hwprof.sim.workloads import (
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
