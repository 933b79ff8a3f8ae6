"""Capture a program's loads (with values) and control transfers with our valgrind tool.

The tool is ``hwprof/traces/valgrind/hwprof_trace.c``. :func:`build_tool` compiles it on
first use with the system C compiler against the installed valgrind tool headers
and static libraries into a private directory (``build/valgrind/`` by default),
next to a link to valgrind's ``vgpreload_core`` library; valgrind finds it there
through ``VALGRIND_LIB``. The system install is never modified. The tool is
rebuilt when its source, the compile command or the valgrind version changes.

:func:`capture` runs ``valgrind --tool=hwprof`` on a command; the tool fills
blocks of records, laid out in the trace format's columns, in memory shared with
this process (:class:`SharedBlocks`) and reports each filled block on a FIFO;
each block goes to a :class:`~hwprof.traces.tracefile.TraceWriter` as one chunk
without a copy, and back to the tool once encoded. The tool writes its
end statistics (guest instructions, skipped instructions, records) into a small
JSON file that goes into the trace footer with the program's exit status.

Errors the user can fix (valgrind or the C compiler missing, tool headers or
libraries missing, an output path that cannot be written, an unknown command)
raise :class:`~hwprof.traces.tracefile.TraceError` with one line; the CLI prints
it and exits with status 2. A program that exits non-zero still leaves a trace.
"""

from __future__ import annotations

import functools
import hashlib
import json
import mmap
import os
import platform
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

# numpy and the writer (hwprof.traces.tracefile) are imported once valgrind runs: their
# imports then overlap valgrind's start-up instead of delaying it (see capture())
from .common import (
    BLOCK,
    BRANCH_KINDS,
    COLUMNS,
    KIND_NAMES,
    LOAD,
    TraceError,
    create_temporary,
    discard_temporary,
    parse_kinds,
)

if TYPE_CHECKING:
    from .tracefile import TraceWriter

__all__ = [
    "TOOL_SOURCE",
    "DEFAULT_TOOL_DIR",
    "INSTALL_HINT",
    "find_valgrind",
    "build_tool",
    "capture",
    "capture_command",
    "tool_kinds",
]

TOOL_NAME = "hwprof"
PLATFORM = "amd64-linux"
TOOL_SOURCE = Path(__file__).with_name("valgrind") / "hwprof_trace.c"
DEFAULT_TOOL_DIR = Path("build") / "valgrind"
INSTALL_HINT = "install it (Debian/Ubuntu: apt-get install valgrind)"

DEFINES = ["-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1",
           "-DVGPV_amd64_linux_vanilla=1"]  # fmt: skip
CFLAGS = ["-O2", "-m64", "-fno-strict-aliasing", "-fno-builtin", "-fno-stack-protector",
          "-fno-pie", "-Wall"]  # fmt: skip
# valgrind's Makefile.tool.am: a static executable at valgrind's tool address
LDFLAGS = ["-static", "-nodefaultlibs", "-nostartfiles", "-u", "_start", "-Wl,--build-id=none",
           "-Wl,-Ttext-segment=0x58000000"]  # fmt: skip
LIBRARIES = [f"libcoregrind-{PLATFORM}.a", f"libvex-{PLATFORM}.a", f"libgcc-sup-{PLATFORM}.a"]
PRELOAD = f"vgpreload_core-{PLATFORM}.so"

#: Records per block of the shared memory the tool fills (each becomes one trace chunk).
#: 2^18: the writer starts sooner and its tail after valgrind's exit is shorter than with
#: 2^20 (xz 2.94x against 3.15x ``none`` on an idle machine; docs/traces.md).
BLOCK_RECORDS = 1 << 18
#: Blocks in the shared memory: the tool fills one while the writer encodes others.
SHM_BLOCKS = 4
#: The tool's message for a filled block: magic "HWPM", block index, records.
MESSAGE = struct.Struct("<IIQ")
MESSAGE_MAGIC = 0x4D505748
#: zstd level of captured traces: the fastest standard level, since the writer's zstd is
#: most of the capture's cost (files 11-20% larger than at the format's default 3;
#: ``hwprof trace convert --level`` recompresses). docs/traces.md has the figures.
CAPTURE_LEVEL = 1
PROGRESS_SECONDS = 1.0


def find_valgrind() -> Path:
    """The ``valgrind`` on PATH; :class:`TraceError` (how to install it) if there is none."""
    path = shutil.which("valgrind")
    if path is None:
        raise TraceError(f"valgrind not found on PATH: {INSTALL_HINT}")
    return Path(path)


@functools.cache
def _valgrind_version(valgrind: Path) -> str:
    try:
        out = subprocess.run([str(valgrind), "--version"], capture_output=True, text=True,
                             timeout=60, check=False)  # fmt: skip
    except OSError as exc:
        raise TraceError(f"{valgrind}: cannot run ({exc.strerror})") from None
    return out.stdout.strip() or "unknown"


def _install_dirs(valgrind: Path) -> tuple[Path, Path, Path]:
    """(include dir, static library dir, preload dir) of the valgrind install."""
    prefix = valgrind.resolve().parent.parent
    multiarch = f"{platform.machine()}-linux-gnu"
    includes = [prefix / "include" / "valgrind"]
    libdirs = [prefix / "lib" / multiarch / "valgrind", prefix / "lib" / "valgrind",
               prefix / "libexec" / "valgrind", prefix / "lib64" / "valgrind"]  # fmt: skip
    include = next((d for d in includes if (d / "pub_tool_basics.h").is_file()), None)
    if include is None:
        raise TraceError(
            f"valgrind tool headers not found ({includes[0]}/pub_tool_basics.h): "
            f"install valgrind with its tool headers (Debian: apt-get install valgrind)"
        )
    libdir = next((d for d in libdirs if all((d / lib).is_file() for lib in LIBRARIES)), None)
    if libdir is None:
        raise TraceError(
            f"valgrind static libraries ({', '.join(LIBRARIES)}) not found in "
            f"{' or '.join(str(d) for d in libdirs[:2])}: install valgrind with its tool "
            f"libraries (Debian: apt-get install valgrind)"
        )
    preload = next((d for d in libdirs if (d / PRELOAD).is_file()), None)
    if preload is None:
        raise TraceError(f"valgrind's {PRELOAD} not found under {prefix}: reinstall valgrind")
    return include, libdir, preload


def build_tool(tool_dir: Path | str = DEFAULT_TOOL_DIR, *, quiet: bool = True) -> Path:
    """Compile the tool into ``tool_dir`` if it is missing or stale; return ``tool_dir``.

    ``tool_dir`` then holds ``hwprof-amd64-linux`` and links to valgrind's
    ``vgpreload_core-amd64-linux.so`` and ``default.supp``: pass it as ``VALGRIND_LIB``.

    Raises
    ------
    TraceError
        valgrind, its tool headers or static libraries, or a C compiler missing;
        a platform other than x86-64 Linux; the compiler failed.
    """
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        raise TraceError(f"trace capture supports x86-64 Linux only, not "
                         f"{platform.system()} {platform.machine()}")  # fmt: skip
    valgrind = find_valgrind()
    include, libdir, preload = _install_dirs(valgrind)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None or shutil.which(cc) is None:
        raise TraceError("no C compiler found (cc/gcc) to build the valgrind tool: install one "
                         "(Debian: apt-get install gcc)")  # fmt: skip
    tool_dir = Path(tool_dir)
    exe = tool_dir / f"{TOOL_NAME}-{PLATFORM}"
    command = [cc, *CFLAGS, f"-I{include}", *DEFINES, "-o", "OUT", str(TOOL_SOURCE), *LDFLAGS,
               *(str(libdir / lib) for lib in LIBRARIES), "-lgcc"]  # fmt: skip
    digest = hashlib.sha256()
    digest.update(TOOL_SOURCE.read_bytes())
    digest.update("\0".join(command).encode())
    digest.update(_valgrind_version(valgrind).encode())
    stamp = tool_dir / f"{exe.name}.stamp"
    key = digest.hexdigest()
    fresh = exe.is_file() and stamp.is_file() and stamp.read_text().strip() == key
    if not fresh:
        try:
            tool_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TraceError(f"{tool_dir}: cannot create the tool directory ({exc.strerror})") \
                from None
        tmp = tool_dir / f".{exe.name}.{os.getpid()}.tmp"
        command[command.index("OUT")] = str(tmp)
        if not quiet:
            print(f"hwprof: building the valgrind tool into {tool_dir}", file=sys.stderr)
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            tmp.unlink(missing_ok=True)
            first = next((ln for ln in result.stderr.splitlines() if "error" in ln),
                         result.stderr.strip().splitlines()[-1:] or ["?"])  # fmt: skip
            if isinstance(first, list):
                first = first[0]
            raise TraceError(f"building the valgrind tool failed: {first}")
        os.replace(tmp, exe)
        stamp.write_text(key + "\n")
    for name, target in ((PRELOAD, preload / PRELOAD), ("default.supp", preload / "default.supp")):
        link = tool_dir / name
        if target.exists() and (not link.is_symlink() or os.readlink(link) != str(target)):
            tmp_link = tool_dir / f".{name}.{os.getpid()}.tmp"
            tmp_link.unlink(missing_ok=True)
            tmp_link.symlink_to(target)
            os.replace(tmp_link, link)
    return tool_dir


def tool_kinds(kinds) -> tuple[tuple[int, ...], dict[str, bool]]:
    """Kind codes of ``kinds`` (``"loads,branches"``) and the tool's record switches."""
    codes = parse_kinds(kinds)
    if not codes:
        raise TraceError("--kinds names no record kind")
    switches = {"loads": LOAD in codes, "branches": any(k in codes for k in BRANCH_KINDS),
                "blocks": BLOCK in codes}  # fmt: skip
    bad = [KIND_NAMES[k] for k in codes if k not in (LOAD, BLOCK, *BRANCH_KINDS)]
    if bad:
        raise TraceError(f"the valgrind tool cannot record {', '.join(bad)} records")
    return codes, switches


def _resolve_program(name: str) -> Path:
    path = shutil.which(name)
    if path is None:
        raise TraceError(f"{name}: command not found")
    return Path(path)


def _script_note(program: Path) -> str | None:
    """A warning when ``program`` is a shell script (valgrind would record the shell)."""
    try:
        with open(program, "rb") as f:
            head = f.read(128)
    except OSError:
        return None
    if head.startswith(b"\x7fELF") or not head.startswith(b"#!"):
        return None
    interpreter = head[2:].split(b"\n")[0].strip().split()
    shell = interpreter and Path(interpreter[-1 if interpreter[0].endswith(b"env") else 0]
                                 .decode(errors="replace")).name  # fmt: skip
    if shell in ("sh", "bash", "dash", "zsh", "ksh"):
        return (f"note: {program} is a {shell} script: valgrind records the shell, not the "
                "programs it starts; give the real binary (e.g. python3 -c "
                "'import sys, os; print(os.path.realpath(sys.executable))')")  # fmt: skip
    return None


def _log_error(log: Path) -> str | None:
    """The first error line valgrind wrote to its log (it does not start the program then)."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        text = line.split("== ", 1)[-1].strip() if line.startswith("==") else line.strip()
        low = text.lower()
        if text and ("error" in low or "failed" in low or "cannot" in low or "bad option" in low
                     or low.startswith("valgrind:")):  # fmt: skip
            return text
    return None


def _fmt_rate(n: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n:.0f}"


class _Progress:
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = self.start
        self.tty = enabled and sys.stderr.isatty()
        self.shown = False

    def update(self, records: int, final: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not final and now - self.last < PROGRESS_SECONDS):
            return
        if not final and not self.tty and now - self.last < 10 * PROGRESS_SECONDS:
            return
        self.last = now
        rate = records / max(now - self.start, 1e-9)
        line = f"capture: {records:,} records, {_fmt_rate(rate)} records/s"
        end = "\n" if final or not self.tty else ""
        print(("\r" if self.tty else "") + line, end=end, file=sys.stderr, flush=True)
        self.shown = True


def capture(command, output, *, kinds="loads,branches", skip: int = 0, limit: int | None = None,
            progress: bool = True, stdin=None, stdout=None, cwd=None, env: dict | None = None,
            tool_dir: Path | str = DEFAULT_TOOL_DIR, header: dict | None = None,
            level: int | None = None) -> dict:
    """Record ``command`` under valgrind into the trace file ``output``.

    Parameters
    ----------
    command : list of str
        The program and its arguments (a PATH name is resolved).
    output : path-like
        Trace file; written to a temporary name and renamed when complete.
    kinds : str or iterable
        Record kinds (:func:`hwprof.traces.tracefile.parse_kinds`): ``loads``,
        ``branches``, ``blocks`` or single kind names (then the others are dropped).
    skip : int
        Guest instructions executed before recording starts (exact to a basic block).
    limit : int or None
        Records to keep; the program is stopped once they are written.
    progress : bool
        Print ``records so far, rate`` on stderr.
    stdin, stdout, cwd
        Passed to :class:`subprocess.Popen` for the program (stderr is inherited).
    env : dict, optional
        Variables added to the program's environment.
    tool_dir : path-like
        Where the tool is built (``VALGRIND_LIB``).
    header : dict, optional
        Extra header fields (e.g. ``workload``).
    level : int, optional
        zstd level of the trace file (default :data:`CAPTURE_LEVEL`, 1: the
        fastest; higher levels make smaller files more slowly).

    Returns
    -------
    dict
        The footer: ``exit_status`` (None when stopped at the limit, negative
        for a signal), ``guest_instructions``, ``skipped_instructions``,
        ``stopped_at_limit``, ``records``, ``counts`` (per kind name), plus ``path``.

    Raises
    ------
    TraceError
        Missing valgrind/headers/libraries/compiler, unknown command, an output
        that cannot be written, or valgrind failing before the program ran.
        No trace file is left then.
    """
    command = [str(c) for c in command]
    if not command:
        raise TraceError("no command to capture")
    if not isinstance(skip, int) or skip < 0:
        raise TraceError(f"skip must be a non-negative integer, not {skip!r}")
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise TraceError(f"limit must be a non-negative integer or None, not {limit!r}")
    codes, switches = tool_kinds(kinds)
    output = Path(output)
    valgrind = find_valgrind()
    tool = build_tool(tool_dir)
    program = _resolve_program(command[0])
    note = _script_note(program)
    if note:
        print(f"hwprof: {note}", file=sys.stderr)
    if output.is_dir():
        raise TraceError(f"{output}: is a directory")
    head = {"program": str(program), "argv": command,
            "kinds": [KIND_NAMES[k] for k in codes],
            "options": {"skip": skip, "limit": limit, "skip_unit": "instructions"},
            "tool": "hwprof_trace (valgrind)", "valgrind": _valgrind_version(valgrind),
            "machine": platform.machine()} | dict(header or {})  # fmt: skip
    wanted = set(codes)
    produced = ({LOAD} if switches["loads"] else set()) | (
        set(BRANCH_KINDS) if switches["branches"] else set()) | (
        {BLOCK} if switches["blocks"] else set())  # fmt: skip
    select_codes = None if produced == wanted else sorted(wanted)
    level = CAPTURE_LEVEL if level is None else level
    # the output's temporary file now (TraceError: the path cannot be written), before
    # the program runs; the writer that takes it over once valgrind has started
    temporary = create_temporary(output)
    writer = None

    def start_writer() -> TraceWriter:
        nonlocal writer
        from .tracefile import TraceWriter

        writer = TraceWriter(output, header=head, level=level, temporary=temporary)
        return writer

    try:
        with tempfile.TemporaryDirectory(prefix="hwprof-capture-") as tmp, \
                SharedBlocks(BLOCK_RECORDS, SHM_BLOCKS) as blocks:
            try:
                footer = _run(valgrind, tool, command, start_writer, blocks, Path(tmp),
                              switches, skip, limit, progress, select_codes, stdin, stdout,
                              cwd, env)  # fmt: skip
                writer.close(footer)
            except BaseException:
                if writer is not None:
                    writer.abort()  # its threads end before the blocks' release pipe closes
                raise
    except BaseException:
        if writer is not None:
            writer.abort()
        else:  # the writer never took the temporary file over
            discard_temporary(temporary)
        raise
    return footer | {"records": writer.records,
                     "counts": {KIND_NAMES[k]: int(writer.counts[k]) for k in KIND_NAMES
                                if writer.counts[k]},
                     "path": str(output)}  # fmt: skip


def _run(valgrind, tool, command, start_writer, blocks, tmp: Path, switches, skip, limit,
         progress, select_codes, stdin, stdout, cwd, extra_env) -> dict:
    """Run valgrind with the tool; ``start_writer()`` gives the writer once it runs."""
    fifo, stats, log = tmp / "records.fifo", tmp / "stats.json", tmp / "valgrind.log"
    os.mkfifo(fifo)
    yn = {True: "yes", False: "no"}
    argv = [str(valgrind), f"--tool={TOOL_NAME}", "--vex-guest-chase=no",
            "--vex-iropt-unroll-thresh=0", f"--log-file={log}", f"--out-file={fifo}",
            f"--stats-file={stats}", f"--trace-loads={yn[switches['loads']]}",
            f"--trace-branches={yn[switches['branches']]}",
            f"--trace-blocks={yn[switches['blocks']]}", f"--skip-instrs={skip}",
            f"--limit-records={-1 if limit is None else limit}", *blocks.tool_options(),
            *command]  # fmt: skip
    env = dict(os.environ) | dict(extra_env or {}) | {"VALGRIND_LIB": str(Path(tool).resolve())}
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    keep = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # no end-of-file before the exit
    try:
        try:
            proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, cwd=cwd, env=env,
                                    pass_fds=blocks.tool_fds())  # fmt: skip
        except OSError as exc:
            raise TraceError(f"{valgrind}: cannot run ({exc.strerror})") from None
        blocks.started()
        try:
            writer = start_writer()  # its imports overlap valgrind's start-up
            received = _pump(fd, proc, writer, blocks, progress, select_codes)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        status = proc.wait()
    finally:
        os.close(keep)
        os.close(fd)
    try:
        tool_stats = json.loads(stats.read_text())
    except (OSError, ValueError):
        tool_stats = None
    if tool_stats is None:
        error = _log_error(log)
        if error is not None or (status == 1 and received == 0):
            raise TraceError(f"valgrind failed: {error or 'exit status 1, no records'}")
    footer = {"exit_status": status}
    if tool_stats is None:
        footer["tool_stats"] = "missing (the program was killed or its process replaced)"
    else:
        for key in ("guest_instructions", "skipped_instructions", "stopped_at_limit"):
            footer[key] = tool_stats.get(key)
        if tool_stats.get("stopped_at_limit"):
            footer["exit_status"] = None
        if tool_stats.get("records") != received:
            raise TraceError(f"the tool wrote {tool_stats.get('records')} records but "
                             f"{received} arrived")  # fmt: skip
    return footer


class SharedBlocks:
    """The blocks of shared memory the tool fills, and the pipe that gives them back.

    A memory file (``memfd``) of ``count`` blocks of ``records`` records each, laid
    out as the tool's columns (``u8 kind[C] | u8 size[C] | u64 pc[C] | u64 addr[C] |
    u64 value[C]``, 26 C bytes), mapped here and in valgrind (``--shm-fd``); the
    tool reports a filled block with a message on the FIFO (:data:`MESSAGE`) and
    fills a block again only after this process has written its index, one byte,
    to the release pipe (``--ack-fd``).
    """

    def __init__(self, records: int, count: int):
        self.records, self.count = records, count
        self.block_bytes = 26 * records
        self._memory = self._release_read = self._release_write = self._map = None
        try:
            self._memory = os.memfd_create("hwprof-trace-blocks")
            self._release_read, self._release_write = os.pipe()
            os.ftruncate(self._memory, self.block_bytes * count)
            self._map = mmap.mmap(self._memory, self.block_bytes * count)
        except OSError as exc:
            self.close()
            raise TraceError(f"cannot set up the shared memory for the tool "
                             f"({exc.strerror})") from None  # fmt: skip

    def __enter__(self) -> SharedBlocks:
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def tool_options(self) -> list[str]:
        return [f"--block-records={self.records}", f"--shm-fd={self._memory}",
                f"--shm-blocks={self.count}", f"--ack-fd={self._release_read}"]  # fmt: skip

    def tool_fds(self) -> tuple[int, int]:
        return self._memory, self._release_read

    def started(self) -> None:
        """The tool has its own copies of the descriptors: close ours (not the mapping)."""
        for name in ("_memory", "_release_read"):
            if getattr(self, name) is not None:
                os.close(getattr(self, name))
                setattr(self, name, None)

    def columns(self, index: int, n: int) -> list:
        """Views (numpy arrays) of the first ``n`` records of block ``index``: kind, size,
        pc, addr, value."""
        import numpy as np

        base, c = index * self.block_bytes, self.records
        return [np.frombuffer(self._map, np.uint8, n, base),
                np.frombuffer(self._map, np.uint8, n, base + c),
                *(np.frombuffer(self._map, "<u8", n, base + (2 + 8 * i) * c)
                  for i in range(3))]  # fmt: skip

    def release(self, index: int) -> None:
        """Give block ``index`` back to the tool (from any thread; a no-op once closed)."""
        fd = self._release_write
        if fd is None:  # the tool has ended
            return
        try:
            os.write(fd, bytes([index]))
        except OSError:  # the tool has ended
            pass

    def close(self) -> None:
        """Close the descriptors (after the writer's threads have ended: they release
        blocks); the mapping goes when its last view does."""
        self.started()
        if self._release_write is not None:
            os.close(self._release_write)
            self._release_write = None
        self._map = None


def _pump(fd: int, proc: subprocess.Popen, writer: TraceWriter, blocks: SharedBlocks,
          progress: bool, select_codes) -> int:
    """Hand each block the tool reports to ``writer`` until valgrind has exited.

    This process holds a write end of the FIFO too (see :func:`_run`), so a read
    never sees end-of-file: the end is the process's exit, after which every
    message the tool wrote is in the pipe. A block goes to the writer as one
    chunk without a copy (:meth:`~hwprof.traces.tracefile.TraceWriter.write_chunk`),
    released to the tool once encoded; when only some kinds are kept, its selected
    records are copied and the block released at once.
    """
    shown = _Progress(progress)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    # the process's exit wakes the poll too (a pidfd), so the last messages are read
    # as soon as valgrind ends, not at the next timeout (this process holds the
    # FIFO's write end: the read side never sees a hang-up)
    exited = _pidfd(proc.pid)
    if exited is not None:
        poller.register(exited, select.POLLIN)
    try:
        return _pump_loop(fd, proc, writer, blocks, poller, shown, select_codes)
    finally:
        if exited is not None:
            os.close(exited)


def _pidfd(pid: int) -> int | None:
    """A file descriptor that polls readable when process ``pid`` exits (Linux 5.3+)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _messages(data: bytes, blocks: SharedBlocks) -> tuple[list[tuple[int, int]], bytes]:
    """The ``(block index, records)`` of the whole messages in ``data``, and the rest.

    Raises
    ------
    TraceError
        A message with the wrong magic, a block index or record count out of range.
    """
    whole = len(data) // MESSAGE.size * MESSAGE.size
    filled = []
    for magic, index, n in MESSAGE.iter_unpack(data[:whole]):
        if magic != MESSAGE_MAGIC or index >= blocks.count or not 0 < n <= blocks.records:
            raise TraceError(f"the tool sent a malformed message ({magic:#x}, block {index}, "
                             f"{n} records)")  # fmt: skip
        filled.append((index, n))
    return filled, data[whole:]


def _pump_loop(fd, proc, writer, blocks, poller, shown, select_codes) -> int:
    """The read loop of :func:`_pump`; ``select_codes``: the kind codes to keep, or None
    for all."""
    if select_codes is not None:
        from .tracefile import kind_mask  # imported by now (the writer's module)

        keep_kind = kind_mask(select_codes)
    done = False
    pending = b""  # a message cut by the last read
    received = 0  # records
    while True:
        if not done:
            done = proc.poll() is not None
        if not done and not poller.poll(200):
            continue
        try:
            got = os.read(fd, 4096)
        except BlockingIOError:
            got = b""
        if not got:
            if done:
                break
            continue
        filled, pending = _messages(pending + got, blocks)
        for index, n in filled:
            columns = blocks.columns(index, n)
            if select_codes is None:
                writer.write_chunk(*columns, release=functools.partial(blocks.release, index))
            else:
                keep = keep_kind[columns[0]]
                writer.write(**{name: c[keep] for name, c in zip(COLUMNS, columns, strict=True)})
                blocks.release(index)
            received += n
        shown.update(received)
    if pending:
        raise TraceError(f"the tool's messages ended inside a message ({len(pending)} bytes)")
    shown.update(received, final=shown.shown)
    return received


def capture_command(args) -> int:
    """``hwprof trace capture``: args.output, kinds, skip, limit, command (list)."""
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    try:
        result = capture(command, args.output, kinds=args.kinds, skip=args.skip,
                         limit=args.limit, progress=True,
                         level=getattr(args, "level", None))  # fmt: skip
    except KeyboardInterrupt:  # valgrind was stopped and the partial trace removed
        raise TraceError(f"{args.output}: capture interrupted, no trace written") from None
    counts = ", ".join(f"{n:,} {k}" for k, n in result["counts"].items()) or "no records"
    guest = result.get("guest_instructions")
    guest_text = f" from {guest:,} guest instructions" if guest is not None else ""
    print(f"{result['path']}: {result['records']:,} records ({counts}){guest_text}",
          file=sys.stderr)  # fmt: skip
    status = result["exit_status"]
    if result.get("stopped_at_limit"):
        print(f"hwprof: stopped {command[0]} after --limit {args.limit} records",
              file=sys.stderr)  # fmt: skip
        return 0
    if status:
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        print(f"hwprof: {command[0]} {how} (the trace was written)", file=sys.stderr)
        return 1
    return 0
