"""The workloads and the shipped traces (hwprof/traces/workloads.py, traces/)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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

WORKLOADS_ALL = WORKLOADS | workloads.MORE_WORKLOADS

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
    with pytest.raises(TraceError, match="unknown workload 'spice'"):
        shipped_trace("spice")
    with pytest.raises(TraceError, match="unknown workload"):
        trace_for("spice")


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


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None,
                               reason="gcc not installed (apt-get install gcc)")  # fmt: skip


@needs_gcc
def test_gcc_workload_compiles_a_seeded_preprocessed_file(tmp_path):
    """cc1 itself (not the gcc driver, which would run it as a child that valgrind does
    not follow) on a .i file of the three programs, in an order drawn from the seed."""
    inputs, orders = [], []
    for sub, seed in (("a", 3), ("b", 3), ("c", 4), ("d", 5), ("e", 6)):
        work = tmp_path / sub
        work.mkdir()
        command = workload_command("gcc", work, seed)
        assert command[0] == workloads.cc1_path() and Path(command[0]).name == "cc1"
        assert command[-3:] == ["input.i", "-o", "input.s"] and "-O2" in command
        text = (work / "input.i").read_text()
        inputs.append(text)
        # every program's functions are there, its main renamed
        for name in ("kernel", "interp", "compress"):
            assert f"{name}_main" in text, name
        assert "main(" not in text.replace("_main(", "")
        # the order of the programs: where each one's line markers first appear
        first = {n: text.index(f'"{n}.c"') for n in ("kernel", "interp", "compress")}
        orders.append(tuple(sorted(first, key=first.get)))
    assert inputs[0] == inputs[1] != inputs[2]
    assert len(set(orders)) > 1  # the seed changes the order
    # the file compiles: cc1 with the workload's options, as the capture runs it
    done = subprocess.run(workload_command("gcc", tmp_path / "a", 3), cwd=tmp_path / "a",
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "kernel_main:" in (tmp_path / "a" / "input.s").read_text()


@needs_gcc
def test_gcc_workload_has_one_input_size(tmp_path):
    with pytest.raises(TraceError, match="workload 'gcc' has one input size"):
        workload_command("gcc", tmp_path, 1, scale=2)
    assert "gcc" not in WORKLOADS  # the other experiments' loops keep to the five


def test_gcc_workload_without_gcc_names_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TraceError, match=r"needs gcc's compiler proper cc1 \(gcc not on PATH; "
                                         r"apt-get install gcc\)"):  # fmt: skip
        workload_command("gcc", tmp_path, 1)
    # a gcc without cc1 (a driver that prints the bare name, as gcc does then)
    fake = tmp_path / "gcc"
    fake.write_text("#!/bin/sh\necho cc1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/bin:/usr/bin")
    with pytest.raises(TraceError, match=r"gcc has no cc1; apt-get install gcc"):
        workload_command("gcc", tmp_path, 1)


def test_gcc_inputs_tag_the_capture_cache(tmp_path, monkeypatch):
    """The programs cc1 compiles are part of the cache's tag: a changed program gives a
    new trace."""
    common = {"kinds": "loads", "skip": 10, "limit": 100, "seed": 1, "cache": tmp_path}
    before = workloads.cached_trace_path("gcc", **common)
    copy = tmp_path / "pkg"
    for rel in workloads.GCC_SOURCES:
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(workloads.PACKAGE_DIR / rel, copy / rel)
    monkeypatch.setattr(workloads, "PACKAGE_DIR", copy)
    assert workloads.cached_trace_path("gcc", **common) == before
    with open(copy / workloads.GCC_SOURCES[-1], "a") as f:
        f.write("/* changed */\n")
    after = workloads.cached_trace_path("gcc", **common)
    assert after != before and after.name.startswith("gcc-s1-skip10-limit100-loads-")


@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("gcc") is None,
                    reason="valgrind or gcc not installed")  # fmt: skip
def test_gcc_workload_repeats(tmp_path):
    """Two captures of cc1 after its start-up take the same path and read the same values
    (pointers included: valgrind lays memory out alike, gcc's random seed is fixed), but
    for the two per-run random words of the C library (the stack protector's canary and
    the pointer guard, from AT_RANDOM: docs/traces.md)."""
    a = trace_for("gcc", limit=200_000, cache=tmp_path / "a")
    b = trace_for("gcc", limit=200_000, cache=tmp_path / "b")
    with TraceReader(a) as ra, TraceReader(b) as rb:
        ca, cb = next(ra.chunks()), next(rb.chunks())
        assert ra.footer["skipped_instructions"] >= WORKLOADS_ALL["gcc"].skip
    for col in ("kind", "pc", "addr"):
        assert (getattr(ca, col) == getattr(cb, col)).all(), col
    differ = ca.value != cb.value
    assert differ.mean() < 1e-3
    assert len(set(ca.value[differ].tolist())) <= 2 and len(set(cb.value[differ].tolist())) <= 2
