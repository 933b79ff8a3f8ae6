"""Proof of the valgrind tool (hwprof/traces/valgrind/hwprof_trace.c) and trace capture.

Expected values come from outside the tool: the constants written in the C
program below, symbol addresses from ``nm``, instruction addresses from
``objdump``, and counts from valgrind's own ``lackey`` tool. A mutant of the
tool (taken/not-taken swapped, 64-bit values truncated) must fail the same
checks. Tests that need valgrind or a C compiler skip with the reason.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hwprof.cli import main
from hwprof.traces import capture as trace_capture
from hwprof.traces.capture import build_tool, capture
from hwprof.traces.tracefile import (
    BLOCK,
    CALL,
    COND_NOT_TAKEN,
    COND_TAKEN,
    LOAD,
    RETURN,
    TraceError,
    TraceReader,
)

TABLE = [0x1111111111111111, 0x2222, 0x33, 0x4444444444444444, 0x5555, 0x66,
         0x7777777777777777, 0x8888888888888888]  # fmt: skip
WORDS = [0xDEADBEEF, 0xCAFEF00D, 0x12345678, 0x9ABCDEF0]
BYTES = [0xA5, 0x5A, 0xFF]
TRIPS = 37
ATOM = 0x123456789ABCDEF0
WIDE = [0x0102030405060708, 0xF1F2F3F4F5F6F7F8]

PROGRAM = f"""
#include <emmintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
volatile uint64_t hw_table[8] = {{{", ".join(f"{v:#x}ULL" for v in TABLE)}}};
volatile uint32_t hw_words[4] = {{{", ".join(f"{v:#x}u" for v in WORDS)}}};
volatile uint8_t hw_bytes[3] = {{{", ".join(f"{v:#x}" for v in BYTES)}}};
__attribute__((noinline)) uint64_t hw_sum(int n) {{
    uint64_t s = 0;
    for (int i = 0; i < n; i++) s += hw_table[i & 7];
    return s;
}}
__attribute__((noinline)) uint64_t hw_mix(void) {{
    uint64_t s = 0;
    for (int i = 0; i < 4; i++) s ^= hw_words[i];
    for (int i = 0; i < 3; i++) s += hw_bytes[i];
    return s;
}}
volatile uint64_t hw_atom = {ATOM:#x}ULL;
__attribute__((aligned(16))) volatile uint64_t hw_wide[2] = {{{WIDE[0]:#x}ULL, {WIDE[1]:#x}ULL}};
__attribute__((noinline)) uint64_t hw_atomic(void) {{   /* lock xadd: a CAS in VEX */
    return __atomic_fetch_add(&hw_atom, 1, __ATOMIC_SEQ_CST);
}}
__attribute__((noinline)) uint64_t hw_vector(void) {{   /* one 16-byte load */
    __m128i v = *(volatile __m128i *)hw_wide;
    return (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(v, _mm_srli_si128(v, 8)));
}}
int main(int argc, char **argv) {{
    int n = argc > 1 ? atoi(argv[1]) : {TRIPS};
    int status = argc > 2 ? atoi(argv[2]) : 0;
    if (argc > 3 && atoi(argv[3]) > 0) {{   /* fork: the child sums a different count */
        pid_t pid = fork();
        if (pid == 0) {{ hw_sum(atoi(argv[3])); _exit(0); }}
        waitpid(pid, 0, 0);
    }}
    if (argc > 4 && argv[4][0] == 'c')   /* close every descriptor but stdio */
        for (int fd = 3; fd < 1024; fd++) close(fd);
    uint64_t s = hw_sum(n) + hw_mix() + hw_atomic() + hw_vector();
    if (argc > 4 && argv[4][0] == 'e')   /* replace the process */
        execl("/bin/true", "true", (char *)0);
    return status + (int)(s & 0);
}}
"""

needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind not installed (apt-get install valgrind)"
)


@pytest.fixture(scope="module")
def tool(tmp_path_factory) -> Path:
    """The built tool's directory (skips with the reason if it cannot be built)."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind not installed (apt-get install valgrind)")
    try:
        return build_tool(tmp_path_factory.mktemp("vgtool"))
    except TraceError as exc:
        pytest.skip(f"cannot build the valgrind tool: {exc}")


def _compile(out: Path, *flags: str) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = out.with_suffix(".c")
    src.write_text(PROGRAM)
    result = subprocess.run([cc, "-O1", "-fno-pie", "-no-pie", "-o", str(out), str(src), *flags],
                            capture_output=True, text=True, check=False)  # fmt: skip
    if result.returncode != 0:
        pytest.skip(f"cannot compile the test program: {result.stderr.strip()[:200]}")
    return out


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return _compile(tmp_path_factory.mktemp("prog") / "hwprog")


@pytest.fixture(scope="module")
def symbols(program) -> dict[str, tuple[int, int]]:
    """name -> (address, size) from ``nm -S``."""
    out = subprocess.run(["nm", "-S", str(program)], capture_output=True, text=True, check=True)
    table = {}
    for line in out.stdout.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[3].startswith("hw_"):
            table[fields[3]] = (int(fields[0], 16), int(fields[1], 16))
    assert set(table) >= {"hw_table", "hw_words", "hw_bytes", "hw_sum", "hw_mix"}
    return table


@pytest.fixture(scope="module")
def disassembly(program) -> dict[str, list[tuple[int, str]]]:
    """function -> [(address, instruction text)] from ``objdump -d``."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(program)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    functions, current = {}, None
    for line in out.stdout.splitlines():
        head = re.match(r"^[0-9a-f]+ <(\w+)>:$", line)
        if head:
            current = functions.setdefault(head.group(1), [])
            continue
        insn = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if insn and current is not None:
            current.append((int(insn.group(1), 16), insn.group(2)))
    return functions


def _records(path: Path):
    with TraceReader(path) as reader:
        chunks = list(reader.chunks())
    cat = {c: np.concatenate([getattr(ch, c) for ch in chunks]) if chunks else np.array([])
           for c in ("kind", "size", "pc", "addr", "value")}  # fmt: skip
    return reader, cat


@pytest.fixture(scope="module")
def full_trace(tool, program, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("trace") / "full.trace"
    result = capture([str(program)], out, progress=False, tool_dir=tool)
    return out, result


def _referencing(insns, lo: int, size: int) -> list[int]:
    """Addresses of instructions whose operands name an address in [lo, lo + size)."""
    found = []
    for addr, text in insns:
        numbers = [int(x, 16) for x in re.findall(r"\b(?:0x)?([0-9a-f]{4,})\b", text)]
        if any(lo <= v < lo + size for v in numbers):
            found.append(addr)
    return found


def load_problems(cat, symbols, disassembly) -> list[str]:
    """Differences between the trace's loads of the three arrays and the C source's constants."""
    problems = []
    loads = cat["kind"] == LOAD
    for name, values, size, func in (("hw_table", TABLE, 8, "hw_sum"),
                                     ("hw_words", WORDS, 4, "hw_mix"),
                                     ("hw_bytes", BYTES, 1, "hw_mix")):  # fmt: skip
        base, nbytes = symbols[name]
        sel = loads & (cat["addr"] >= base) & (cat["addr"] < base + nbytes)
        got = list(zip(*(cat[c][sel].tolist() for c in ("pc", "addr", "value", "size")),
                       strict=True))  # fmt: skip
        pcs = _referencing(disassembly[func], base, nbytes)
        if name == "hw_table":
            # one load instruction in the loop, executed TRIPS times
            if len(pcs) != 1:
                problems.append(f"objdump: expected one instruction loading {name}, got {pcs}")
                continue
            want = [(pcs[0], base + 8 * (i & 7), TABLE[i & 7], 8) for i in range(TRIPS)]
        else:
            # unrolled: one instruction per element, in order
            if len(pcs) != len(values):
                problems.append(f"objdump: expected {len(values)} loads of {name}, got {pcs}")
                continue
            want = [(pc, base + size * i, v, size) for i, (pc, v) in enumerate(
                zip(pcs, values, strict=True))]  # fmt: skip
        if got != want:
            problems.append(f"{name}: trace {[tuple(map(hex, g)) for g in got[:4]]}... "
                            f"expected {[tuple(map(hex, w)) for w in want[:4]]}...")  # fmt: skip
    return problems


def branch_problems(cat, symbols, disassembly, trips: int = TRIPS) -> list[str]:
    """The loop branch of hw_sum: taken trips-1 times to the loop head, not taken once."""
    problems = []
    insns = disassembly["hw_sum"]
    backward = []
    for (addr, text), (nxt, _) in zip(insns, insns[1:], strict=False):
        m = re.match(r"j(?!mp)\w+\s+([0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr:
            backward.append((addr, int(m.group(1), 16), nxt))
    if len(backward) != 1:
        return [f"objdump: expected one backward conditional branch in hw_sum, got {backward}"]
    pc, head, fall = backward[0]
    at = cat["pc"] == pc
    taken = at & (cat["kind"] == COND_TAKEN)
    not_taken = at & (cat["kind"] == COND_NOT_TAKEN)
    if int(taken.sum()) != trips - 1 or int(not_taken.sum()) != 1:
        problems.append(f"loop branch {pc:#x}: taken {int(taken.sum())} (want {trips - 1}), "
                        f"not taken {int(not_taken.sum())} (want 1)")  # fmt: skip
    if not (np.all(cat["addr"][taken] == head) and np.all(cat["addr"][not_taken] == fall)):
        problems.append(f"loop branch {pc:#x}: targets {set(cat['addr'][at].tolist())}, "
                        f"want {head:#x} taken / {fall:#x} not taken")  # fmt: skip
    if not np.all(cat["value"][at] == fall):
        problems.append(f"loop branch {pc:#x}: fall-through column is not {fall:#x}")
    return problems


@needs_valgrind
def test_loads_hold_the_source_constants_at_the_objdump_pcs(full_trace, symbols, disassembly):
    path, result = full_trace
    _, cat = _records(path)
    assert result["exit_status"] == 0
    assert load_problems(cat, symbols, disassembly) == []


@needs_valgrind
def test_cas_and_wide_loads(full_trace, symbols, disassembly):
    """lock xadd reads the old value once (VEX: a load, then a CAS expecting it); a 16-byte
    load keeps its low 8 bytes."""
    path, _ = full_trace
    _, cat = _records(path)
    for name, func, value, size in (("hw_atom", "hw_atomic", ATOM, 8),
                                    ("hw_wide", "hw_vector", WIDE[0], 16)):  # fmt: skip
        base, nbytes = symbols[name]
        sel = (cat["kind"] == LOAD) & (cat["addr"] >= base) & (cat["addr"] < base + nbytes)
        pcs = _referencing(disassembly[func], base, nbytes)  # the volatile is read by each
        assert pcs, name
        got = [tuple(int(cat[c][sel][i]) for c in ("pc", "addr", "value", "size"))
               for i in range(int(sel.sum()))]  # fmt: skip
        assert got == [(pc, base, value, size) for pc in pcs], name


@needs_valgrind
def test_loop_branch_counts_and_call_return(full_trace, symbols, disassembly):
    path, _ = full_trace
    _, cat = _records(path)
    assert branch_problems(cat, symbols, disassembly) == []
    for func in ("hw_sum", "hw_mix"):
        start, size = symbols[func]
        calls = (cat["kind"] == CALL) & (cat["addr"] == start)
        assert int(calls.sum()) == 1, func
        rets = (cat["kind"] == RETURN) & (cat["pc"] >= start) & (cat["pc"] < start + size)
        # the return goes to the instruction after the call
        assert int(rets.sum()) == 1 and cat["addr"][rets][0] == cat["value"][calls][0], func


@needs_valgrind
def test_mutant_tool_fails_the_checks(tool, program, symbols, disassembly, tmp_path,
                                      monkeypatch):  # fmt: skip
    """Taken/not-taken swapped and 64-bit values truncated: both checks must object."""
    source = trace_capture.TOOL_SOURCE.read_text()
    mutant = source.replace("#define K_NOT_TAKEN 1\n#define K_TAKEN 2",
                            "#define K_NOT_TAKEN 2\n#define K_TAKEN 1")  # fmt: skip
    mutant = mutant.replace("   case Ity_I64: return e;",
                            "   case Ity_I64: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop("
                            "Iop_32Uto64, IRExpr_RdTmp(assign(g, Ity_I32, IRExpr_Unop("
                            "Iop_64to32, e))))));")  # fmt: skip
    assert mutant.count("Iop_64to32") == 1 and "#define K_NOT_TAKEN 2" in mutant
    src = tmp_path / "hwprof_trace.c"
    src.write_text(mutant)
    monkeypatch.setattr(trace_capture, "TOOL_SOURCE", src)
    tool_dir = build_tool(tmp_path / "mutant")
    out = tmp_path / "mutant.trace"
    capture([str(program)], out, progress=False, tool_dir=tool_dir)
    _, cat = _records(out)
    assert any("hw_table" in p for p in load_problems(cat, symbols, disassembly))
    assert branch_problems(cat, symbols, disassembly) != []


@needs_valgrind
def test_load_counts_agree_with_lackey(tool, tmp_path):
    """Per (pc, size) load counts equal lackey's --trace-mem loads (L + M) on a static program,
    except at locked read-modify-writes.

    Both tools run from one VALGRIND_LIB directory so that the program sees the
    same environment; the instruction count equals lackey's with chasing off.
    """
    static = _compile(tmp_path / "hwstatic", "-static")
    lib = tmp_path / "lib"
    lib.mkdir()
    for f in Path(tool).iterdir():
        (lib / f.name).symlink_to(f.resolve())
    lackey = Path(tool, trace_capture.PRELOAD).resolve().parent / "lackey-amd64-linux"
    if not lackey.is_file():
        pytest.skip(f"lackey not installed ({lackey})")
    (lib / lackey.name).symlink_to(lackey)
    out = tmp_path / "static.trace"
    result = capture([str(static)], out, kinds="loads", progress=False, tool_dir=lib)
    _, cat = _records(out)
    ours = collections.Counter(zip(cat["pc"].tolist(), cat["size"].tolist(), strict=True))
    env = dict(os.environ, VALGRIND_LIB=str(lib.resolve()))  # as capture() runs it
    log = tmp_path / "lackey.log"
    subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}",
                    str(static)], env=env, check=True)  # fmt: skip
    theirs, pc = collections.Counter(), None
    for line in log.read_text().splitlines():
        if line.startswith("I "):
            pc = int(line[3:].split(",")[0], 16)
        elif line.startswith((" L", " M")):
            theirs[(pc, int(line[3:].split(",")[1]))] += 1
    assert sum(theirs.values()) > 1000
    # a locked read-modify-write (lock xadd/add/..., xchg with memory) is a load and a CAS
    # expecting its value in VEX: lackey counts both, we count the one read
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(static)],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    locked = {int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):\s+(lock |xchg)",
                                                        dump, re.M)}  # fmt: skip
    differ = {k for k in set(ours) | set(theirs) if ours[k] != theirs[k]}
    assert {pc for pc, _ in differ} <= locked
    assert all(2 * ours[k] == theirs[k] for k in differ)
    assert any(pc in locked for pc, _ in differ)  # the program's lock xadd is one
    log2 = tmp_path / "lackey-counts.log"
    subprocess.run(["valgrind", "--tool=lackey", "--vex-guest-chase=no", f"--log-file={log2}",
                    str(static)], env=env, check=True)  # fmt: skip
    m = re.search(r"guest instrs:\s+([\d,]+)", log2.read_text())
    assert m and int(m.group(1).replace(",", "")) == result["guest_instructions"]


@needs_valgrind
def test_skip_and_limit_cut_the_full_trace(tool, program, symbols, tmp_path):
    # the full trace is captured here, not by a fixture: the program's path through
    # the C library depends on the environment, and pytest changes
    # PYTEST_CURRENT_TEST between a fixture's setup and the test
    path = tmp_path / "full.trace"
    result = capture([str(program)], path, progress=False, tool_dir=tool)
    _, full = _records(path)
    limited = tmp_path / "limit.trace"
    r = capture([str(program)], limited, limit=100, progress=False, tool_dir=tool)
    assert r["stopped_at_limit"] and r["exit_status"] is None and r["records"] == 100
    _, cat = _records(limited)
    for col in ("kind", "pc", "addr", "value", "size"):
        assert np.array_equal(cat[col], full[col][:100]), col
    skip = result["guest_instructions"] // 2
    skipped = tmp_path / "skip.trace"
    r = capture([str(program)], skipped, skip=skip, progress=False, tool_dir=tool)
    # recording starts at the first basic block at or after `skip`
    assert skip <= r["skipped_instructions"] < skip + 100
    _, cat = _records(skipped)
    n = len(cat["kind"])
    assert 0 < n < len(full["kind"])
    # values too, except the few that differ from run to run (the stack canary
    # and pointer guard come from AT_RANDOM, a vdso address): those of the program's data
    for col in ("kind", "pc", "addr", "size"):
        assert np.array_equal(cat[col], full[col][-n:]), col
    data = np.zeros(n, dtype=bool)
    for name in ("hw_table", "hw_words", "hw_bytes"):
        base, nbytes = symbols[name]
        data |= (cat["kind"] == LOAD) & (cat["addr"] >= base) & (cat["addr"] < base + nbytes)
    assert data.sum() == TRIPS + len(WORDS) + len(BYTES)
    assert np.array_equal(cat["value"][data], full["value"][-n:][data])


@needs_valgrind
def test_forked_child_records_nothing(tool, program, symbols, tmp_path):
    out = tmp_path / "fork.trace"
    result = capture([str(program), "5", "0", "7"], out, progress=False, tool_dir=tool)
    _, cat = _records(out)
    base, nbytes = symbols["hw_table"]
    table_loads = (cat["kind"] == LOAD) & (cat["addr"] >= base) & (cat["addr"] < base + nbytes)
    assert result["exit_status"] == 0
    assert int(table_loads.sum()) == 5  # the parent's hw_sum(5), not the child's 7


@needs_valgrind
@pytest.mark.parametrize("action", ["close", "exec"])
def test_program_closing_descriptors_or_exec(tool, program, symbols, tmp_path, action):
    """The tool's output survives a program closing all descriptors; an exec keeps
    the records made before it (the new image runs without the tool)."""
    out = tmp_path / f"{action}.trace"
    result = capture([str(program), "6", "0", "0", action], out, progress=False, tool_dir=tool)
    _, cat = _records(out)
    base, nbytes = symbols["hw_table"]
    table_loads = (cat["kind"] == LOAD) & (cat["addr"] >= base) & (cat["addr"] < base + nbytes)
    assert int(table_loads.sum()) == 6
    assert result["exit_status"] == 0 and result["guest_instructions"] > 0


@needs_valgrind
def test_kinds_select_records(tool, program, tmp_path):
    out = tmp_path / "calls.trace"
    capture([str(program)], out, kinds="call,return", progress=False, tool_dir=tool)
    reader, cat = _records(out)
    assert set(np.unique(cat["kind"]).tolist()) == {CALL, RETURN}
    assert reader.header["kinds"] == ["call", "return"]


@needs_valgrind
def test_nonzero_exit_still_writes_the_trace(tool, program, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(trace_capture, "DEFAULT_TOOL_DIR", Path(tool))
    out = tmp_path / "exit3.trace"
    status = main(["trace", "capture", "-o", str(out), "--", str(program), "37", "3"])
    err = capsys.readouterr().err
    assert status == 1
    assert "exited with status 3 (the trace was written)" in err
    with TraceReader(out) as reader:
        assert reader.footer["exit_status"] == 3 and reader.footer["records"] > 0


def _fail(argv, capsys) -> str:
    status = main(argv)
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_valgrind_missing_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no valgrind here
    out = tmp_path / "x.trace"
    err = _fail(["trace", "capture", "-o", str(out), "--", "/bin/true"], capsys)
    assert "valgrind not found" in err and "apt-get install valgrind" in err
    assert not out.exists()


def _fake_valgrind(root: Path, *, headers: bool) -> Path:
    """A valgrind prefix with no static libraries (and optionally no headers)."""
    (root / "bin").mkdir(parents=True)
    exe = root / "bin" / "valgrind"
    exe.write_text("#!/bin/sh\necho valgrind-fake\n")
    exe.chmod(0o755)
    if headers:
        (root / "include" / "valgrind").mkdir(parents=True)
        (root / "include" / "valgrind" / "pub_tool_basics.h").write_text("")
    return root / "bin"


def test_headers_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_valgrind(tmp_path / "vg", headers=False)))
    err = _fail(["trace", "capture", "-o", str(tmp_path / "x.trace"), "--", "/bin/true"], capsys)
    assert "valgrind tool headers not found" in err


def test_static_libraries_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_valgrind(tmp_path / "vg", headers=True)))
    err = _fail(["trace", "capture", "-o", str(tmp_path / "x.trace"), "--", "/bin/true"], capsys)
    assert "static libraries" in err and "libcoregrind-amd64-linux.a" in err


@needs_valgrind
def test_unwritable_output(tool, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(trace_capture, "DEFAULT_TOOL_DIR", Path(tool))
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = blocker / "x.trace"  # a path under a regular file
    err = _fail(["trace", "capture", "-o", str(out), "--", "/bin/true"], capsys)
    assert str(out) in err and "cannot write" in err
    assert list(tmp_path.iterdir()) == [blocker]


@needs_valgrind
def test_unknown_command(tool, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(trace_capture, "DEFAULT_TOOL_DIR", Path(tool))
    out = tmp_path / "x.trace"
    err = _fail(["trace", "capture", "-o", str(out), "--", "no-such-program-hwprof"], capsys)
    assert "no-such-program-hwprof: command not found" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


@needs_valgrind
def test_tool_rebuilds_when_the_source_changes(tool, tmp_path, monkeypatch):
    tool_dir = tmp_path / "t"
    exe = build_tool(tool_dir) / "hwprof-amd64-linux"
    first = exe.stat().st_mtime_ns
    assert build_tool(tool_dir) / "hwprof-amd64-linux" == exe and exe.stat().st_mtime_ns == first
    changed = tmp_path / "hwprof_trace.c"
    changed.write_text(trace_capture.TOOL_SOURCE.read_text() + "\n/* changed */\n")
    monkeypatch.setattr(trace_capture, "TOOL_SOURCE", changed)
    build_tool(tool_dir)
    assert exe.stat().st_mtime_ns != first
    assert (tool_dir / "vgpreload_core-amd64-linux.so").resolve().is_file()


THREADS = r"""
#include <pthread.h>
#include <stdint.h>
volatile uint64_t hw_t[4] = {11, 22, 33, 44};
void *work(void *arg) {
    uint64_t s = 0;
    for (int i = 0; i < 50000; i++) s += hw_t[i & 3];
    return (void *)s;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, work, 0);
    pthread_create(&b, 0, work, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
"""


@needs_valgrind
def test_threads_share_one_record_stream(tool, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    src, exe = tmp_path / "thr.c", tmp_path / "thr"
    src.write_text(THREADS)
    if cc is None or subprocess.run([cc, "-O1", "-fno-pie", "-no-pie", "-pthread", "-o", str(exe),
                                     str(src)],
                                    capture_output=True).returncode:  # fmt: skip
        pytest.skip("cannot compile a pthread program")
    nm = subprocess.run(["nm", "-S", str(exe)], capture_output=True, text=True, check=True)
    base, size = next((int(f[0], 16), int(f[1], 16)) for f in map(str.split, nm.stdout.splitlines())
                      if len(f) == 4 and f[3] == "hw_t")  # fmt: skip
    out = tmp_path / "thr.trace"
    result = capture([str(exe)], out, kinds="loads", progress=False, tool_dir=tool)
    _, cat = _records(out)
    sel = (cat["addr"] >= base) & (cat["addr"] < base + size)
    assert result["exit_status"] == 0
    assert int(sel.sum()) == 100_000
    assert collections.Counter(cat["value"][sel].tolist()) == {11: 25_000, 22: 25_000,
                                                               33: 25_000, 44: 25_000}


@needs_valgrind
def test_shell_script_gets_a_note(tool, tmp_path, capsys):
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nexec true\n")
    script.chmod(0o755)
    result = capture([str(script)], tmp_path / "sh.trace", progress=False, tool_dir=tool)
    err = capsys.readouterr().err
    assert "is a sh script: valgrind records the shell" in err
    assert result["records"] > 0  # the shell, up to its exec


@needs_valgrind
def test_block_entries(tool, program, disassembly, tmp_path):
    """Block entries (superblocks: chasing off, a block ends at a control transfer but
    not at a branch target). The loop head is entered by each taken back edge
    (TRIPS - 1); the first trip falls into it inside the block before."""
    out = tmp_path / "blocks.trace"
    capture([str(program)], out, kinds="blocks,branches", progress=False, tool_dir=tool)
    _, cat = _records(out)
    insns = disassembly["hw_sum"]
    heads = [int(m.group(1), 16) for addr, text in insns
             if (m := re.match(r"j(?!mp)\w+\s+([0-9a-f]+)", text)) and int(m.group(1), 16) < addr]
    assert len(heads) == 1
    blocks = cat["kind"] == BLOCK
    assert int((blocks & (cat["pc"] == heads[0])).sum()) == TRIPS - 1
    # a control transfer ends its block: the next record is the entry of the block at
    # its target (blocks also end without a transfer: system calls, rep instructions)
    transfers = np.nonzero(~blocks[:-1])[0]
    assert len(transfers) > 1000
    assert np.all(cat["kind"][transfers + 1] == BLOCK)
    assert np.all(cat["pc"][transfers + 1] == cat["addr"][transfers])


@needs_valgrind
def test_interrupt_stops_valgrind_and_leaves_no_file(tool, program, tmp_path, capsys,
                                                     monkeypatch):  # fmt: skip
    monkeypatch.setattr(trace_capture, "DEFAULT_TOOL_DIR", Path(tool))
    started = []

    def interrupted(fd, proc, *args):
        started.append(proc)
        raise KeyboardInterrupt

    monkeypatch.setattr(trace_capture, "_pump", interrupted)
    out = tmp_path / "x.trace"
    err = _fail(["trace", "capture", "-o", str(out), "--", str(program)], capsys)
    assert "capture interrupted, no trace written" in err
    assert started and started[0].poll() is not None  # valgrind was stopped
    assert list(tmp_path.iterdir()) == []


def test_the_reader_wakes_when_valgrind_exits():
    """The pidfd the FIFO reader polls turns readable at the process's exit (no timeout)."""
    import select
    import sys
    import time

    from hwprof.traces.capture import _pidfd

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    fd = _pidfd(proc.pid)
    if fd is None:
        proc.wait()
        pytest.skip("no pidfd_open on this system (the reader falls back to its timeout)")
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        assert poller.poll(0) == []  # still running
        start = time.monotonic()
        assert poller.poll(10_000), "the exit did not wake the poll"
        assert time.monotonic() - start < 5
    finally:
        os.close(fd)
        proc.wait()
    assert _pidfd(2**22 + 12345) is None  # no such process: the caller falls back


def _table_loads(cat, symbols) -> np.ndarray:
    base, nbytes = symbols["hw_table"]
    hit = (cat["kind"] == LOAD) & (cat["addr"] >= base) & (cat["addr"] < base + nbytes)
    return cat["value"][hit]


@needs_valgrind
def test_small_shared_blocks_wrap_around(tool, program, symbols, tmp_path, monkeypatch):
    """Two blocks of 1,024 records: the tool waits for each release, hundreds of times;
    the records are those of a capture with the default blocks (the addresses of the
    stack and of mappings may move with valgrind's own memory: not compared)."""
    trips = 100_000
    default = tmp_path / "default.trace"
    capture([str(program), str(trips)], default, progress=False, tool_dir=tool)
    monkeypatch.setattr(trace_capture, "BLOCK_RECORDS", 1024)
    monkeypatch.setattr(trace_capture, "SHM_BLOCKS", 2)
    small = tmp_path / "small.trace"
    result = capture([str(program), str(trips)], small, progress=False, tool_dir=tool)
    reader, got = _records(small)
    _, want = _records(default)
    assert result["records"] > 100 * 1024
    assert max(n for _, n, _ in reader._chunks) <= 1024
    for column in ("kind", "size", "pc"):
        np.testing.assert_array_equal(got[column], want[column], err_msg=column)
    assert _table_loads(got, symbols).tolist() == [TABLE[i % 8] for i in range(trips)]


def _tool_blocks(path: Path) -> dict[str, np.ndarray]:
    """The records of the tool's --out-file blocks (the file mode, without shared memory)."""
    data, at, parts = path.read_bytes(), 0, []
    while at < len(data):
        magic, zero, n = struct.unpack_from("<IIQ", data, at)
        assert (magic, zero) == (0x42505748, 0) and 0 < n <= 1024, (magic, zero, n)
        at += 16
        columns = {}
        for name, dtype in (("kind", "u1"), ("size", "u1"), ("pc", "<u8"), ("addr", "<u8"),
                            ("value", "<u8")):  # fmt: skip
            columns[name] = np.frombuffer(data, dtype, n, at)
            at += n * columns[name].itemsize
        parts.append(columns)
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


@needs_valgrind
def test_out_file_mode_writes_the_same_records(tool, program, symbols, tmp_path):
    """--out-file alone: the blocks go to the file (header and columns), same records as a
    capture run right before with the same environment (the C library's start-up
    depends on it)."""
    reference = tmp_path / "reference.trace"
    capture([str(program)], reference, progress=False, tool_dir=tool)
    out = tmp_path / "blocks.bin"
    env = dict(os.environ, VALGRIND_LIB=str(Path(tool).resolve()))  # as capture() sets it
    subprocess.run(["valgrind", "-q", "--tool=hwprof", f"--out-file={out}",
                    "--block-records=1024", str(program)], env=env, check=True)  # fmt: skip
    got = _tool_blocks(out)
    _, want = _records(reference)
    for column in ("kind", "size", "pc"):
        np.testing.assert_array_equal(got[column], want[column], err_msg=column)
    assert _table_loads(got, symbols).tolist() == [TABLE[i % 8] for i in range(TRIPS)]


@needs_valgrind
def test_tool_stops_recording_when_the_reader_goes_away(tool, program, tmp_path):
    """No release ever comes (the pipe's write end is closed): the tool says so once and
    the program runs on; the one block it reported stays the only message."""
    memory = os.memfd_create("test-blocks")
    os.ftruncate(memory, 26 * 1024)
    release_read, release_write = os.pipe()
    os.close(release_write)
    messages, log = tmp_path / "messages", tmp_path / "log"
    env = dict(os.environ, VALGRIND_LIB=str(tool))
    try:
        result = subprocess.run(
            ["valgrind", f"--log-file={log}", "--tool=hwprof", f"--out-file={messages}",
             "--block-records=1024", f"--shm-fd={memory}", "--shm-blocks=1",
             f"--ack-fd={release_read}", str(program), "5000"],
            env=env, pass_fds=(memory, release_read), check=False)  # fmt: skip
    finally:
        os.close(memory)
        os.close(release_read)
    assert result.returncode == 0
    assert log.read_text().count("the reader went away; recording stopped") == 1
    magic, index, n = struct.unpack("<IIQ", messages.read_bytes())
    assert (magic, index) == (0x4D505748, 0) and 1000 < n <= 1024  # a block fills up to 1,024


@needs_valgrind
@pytest.mark.parametrize("options, complaint", [
    (["--block-records=1028"], "--block-records must be a multiple of 8"),
    ([], "hwprof needs --out-file=PATH"),
    (["--shm-fd=3"], "--shm-fd and --ack-fd go together"),
])  # fmt: skip
def test_tool_rejects_bad_options(tool, program, tmp_path, options, complaint):
    env = dict(os.environ, VALGRIND_LIB=str(tool))
    out = [] if not options else [f"--out-file={tmp_path / 'o'}"]
    result = subprocess.run(["valgrind", "--tool=hwprof", *out, *options, str(program)],
                            env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 2 and f"hwprof: {complaint}" in result.stderr


def test_malformed_messages_are_one_error():
    """The FIFO's messages: whole ones parsed, a cut one kept for the next read, any field
    out of range one TraceError."""
    blocks = trace_capture.SharedBlocks(1024, 3)
    try:
        message = trace_capture.MESSAGE.pack
        magic = trace_capture.MESSAGE_MAGIC
        data = message(magic, 2, 1024) + message(magic, 0, 7) + b"\x01\x02"
        assert trace_capture._messages(data, blocks) == ([(2, 1024), (0, 7)], b"\x01\x02")
        for bad in (message(magic + 1, 0, 5), message(magic, 3, 5), message(magic, 0, 0),
                    message(magic, 0, 1025)):  # fmt: skip
            with pytest.raises(TraceError, match="malformed message"):
                trace_capture._messages(bad, blocks)
    finally:
        blocks.close()
