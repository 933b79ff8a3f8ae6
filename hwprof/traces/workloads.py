"""Real-program workloads for the experiments: how to run them, shipped traces, a capture cache.

Each workload runs a standard program of this machine on an input generated
from a seed (text from a Zipf vocabulary, so that values repeat the way real
data does): ``xz`` and ``bzip2`` compressing text, ``sort`` sorting lines,
``perl`` and ``python`` counting word frequencies; beyond them (``MORE_WORKLOADS``) gzip,
``sha256sum`` hashing the text, two small C programs of ours, and ``gcc``: gcc's compiler
proper ``cc1`` compiling a preprocessed file of three C programs of this tree, in an order
drawn from the seed.
``skip`` is the number of
guest instructions of initialisation (dynamic loader, interpreter start-up,
compressor set-up) that the capture skips, measured with the tool on an empty
input and rounded up.

* :func:`shipped_trace` - the small traces shipped in hwprof/traces/shipped/
  (2M records of loads and branches each, after ``skip``), for tests and quick runs.
* :func:`trace_for` - a trace of any size, captured on demand into a cache
  (``build/traces``) with our valgrind tool; without valgrind it raises
  :class:`~hwprof.traces.tracefile.TraceError` naming the shipped trace instead.

``docs/traces.md`` gives the command that recreates each shipped trace
(``python -m hwprof.traces.workloads --ship``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .tracefile import ZSTD_LEVEL, TraceError

__all__ = ["Workload", "WORKLOADS", "MORE_WORKLOADS", "SHIPPED_DIR", "SHIPPED_LIMIT",
           "shipped_trace", "trace_for",
           "cached_trace_path", "workload_command", "workload_description", "workload_env",
           "real_python", "LARGE_SCALE"]  # fmt: skip

#: The C programs of the workloads that compile their own (package data).
PROGRAMS_DIR = Path(__file__).resolve().with_name("programs")
#: The shipped traces (package data).
SHIPPED_DIR = Path(__file__).resolve().with_name("shipped")
#: Records per shipped trace (loads and branches).
SHIPPED_LIMIT = 2_000_000
SHIPPED_KINDS = "loads,branches"
DEFAULT_SEED = 1


def real_python() -> str:
    """The Python interpreter binary itself (``python3`` on PATH may be a shell shim)."""
    return os.path.realpath(sys.executable)


def _words(rng: np.random.Generator, n: int, vocabulary: int = 5000) -> list[str]:
    letters = np.array(list("etaoinshrdlcumwfgypbvkjxqz"))
    lengths = rng.integers(2, 10, vocabulary)
    vocab = ["".join(letters[rng.zipf(1.4, k) % 26]) for k in lengths]
    return [vocab[i] for i in (rng.zipf(1.2, n) - 1) % vocabulary]


def _text(path: Path, rng: np.random.Generator, n_words: int) -> str:
    """Write the text; return its name relative to the work dir (the command's cwd)."""
    words = _words(rng, n_words)
    lines = [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)]
    path.write_text("\n".join(lines) + "\n")
    return path.name


WORD_COUNT_PERL = (
    "while (<>) { $n{$_}++ for split } "
    'print "$_ $n{$_}\\n" for (sort { $n{$b} <=> $n{$a} || $a cmp $b } keys %n)[0..19]'
)
WORD_COUNT_PYTHON = (
    "import sys, collections\n"
    "n = collections.Counter()\n"
    "for line in open(sys.argv[1]):\n"
    "    n.update(line.split())\n"
    "for w, c in sorted(n.items(), key=lambda x: (-x[1], x[0]))[:20]:\n"
    "    print(w, c)\n"
)


@dataclass(frozen=True)
class Workload:
    """A program run on a generated input.

    Attributes
    ----------
    name : str
    description : str
    skip : int
        Guest instructions of initialisation to skip before recording.
    argv : callable (work dir, seed, scale) -> list of str
        Writes the input (``scale`` times the default size) into the work dir
        and returns the command (which runs in the work dir and names its input
        relative to it).
    env : dict
        Environment variables that make the run repeatable (hash seeds).
    source : str
        A C program of :data:`PROGRAMS_DIR` that the command compiles and runs
        (empty: a program of this machine); its text tags the capture cache.
    inputs : tuple of str
        C sources (relative to the hwprof package) that the command reads as its
        input; their text tags the capture cache too.
    """

    name: str
    description: str
    skip: int
    argv: Callable[[Path, int, int], list[str]]
    env: dict = field(default_factory=dict)
    source: str = ""
    inputs: tuple[str, ...] = ()


def _xz(work: Path, seed: int, scale: int = 1) -> list[str]:
    text = _text(work / "input.txt", np.random.default_rng(seed), 60_000 * scale)
    return ["xz", "-6", "-c", "-T1", text]


def _bzip2(work: Path, seed: int, scale: int = 1) -> list[str]:
    return ["bzip2", "-9", "-c", _text(work / "input.txt", np.random.default_rng(seed),
                                       60_000 * scale)]  # fmt: skip


def _gzip(work: Path, seed: int, scale: int = 1) -> list[str]:
    return ["gzip", "-9", "-c", _text(work / "input.txt", np.random.default_rng(seed),
                                      60_000 * scale)]  # fmt: skip


def _tool(name: str, package: str) -> str:
    """``name`` (a program of this machine) when it is on PATH, else a TraceError naming it."""
    if shutil.which(name) is None:
        raise TraceError(f"workload {name} needs {name} on PATH (Debian: apt-get install "
                         f"{package})")  # fmt: skip
    return name


def _sha256sum(work: Path, seed: int, scale: int = 1) -> list[str]:
    program = _tool("sha256sum", "coreutils")  # before the input is written
    return [program, _text(work / "input.txt", np.random.default_rng(seed), 60_000 * scale)]


def _compile(work: Path, source: str) -> str:
    """Compile ``PROGRAMS_DIR/source`` with ``cc -O2`` into the work dir; its path."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise TraceError(f"workload program {source} needs a C compiler (cc or gcc on PATH)")
    binary = work / Path(source).stem
    done = subprocess.run([compiler, "-O2", "-o", str(binary), str(PROGRAMS_DIR / source)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise TraceError(f"{source}: cc failed: {done.stderr.strip()[:200]}")
    return str(binary)


def _interp(work: Path, seed: int, scale: int = 1) -> list[str]:
    return [_compile(work, "interp.c"), str(100_000), str(8 * scale)]


def _kernel(work: Path, seed: int, scale: int = 1) -> list[str]:
    return [_compile(work, "kernel.c"), str(1000), str(40 * scale)]


#: The hwprof package: where the gcc workload's input programs live.
PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: The programs the gcc workload compiles, as one translation unit (relative to the
#: package): real C of this tree that needs only the C library's headers (compress.c:
#: an LZ77 coder with hash chains, CRC-32 and a quicksort, built for the host).
GCC_SOURCES = ("traces/programs/kernel.c", "traces/programs/interp.c",
               "system/workloads/compress.c")  # fmt: skip
#: cc1's options: the compiler proper at -O2; a fixed random seed (gcc draws one from
#: the time and the pid where it needs one)
CC1_OPTIONS = ("-quiet", "-O2", "-frandom-seed=0")
GCC_HINT = "apt-get install gcc"


def cc1_path() -> str:
    """gcc's compiler proper (``gcc -print-prog-name=cc1``); :class:`TraceError` naming the
    package when gcc or its cc1 is missing."""
    gcc = shutil.which("gcc")
    found = ""
    if gcc is not None:
        done = subprocess.run([gcc, "-print-prog-name=cc1"], capture_output=True, text=True,
                              check=False)  # fmt: skip
        found = done.stdout.strip()
    if not (os.path.isabs(found) and os.access(found, os.X_OK)):
        raise TraceError(f"workload 'gcc' needs gcc's compiler proper cc1 ("
                         f"{'gcc not on PATH' if gcc is None else 'gcc has no cc1'}; "
                         f"{GCC_HINT})")  # fmt: skip
    return found


def gcc_input(work: Path, seed: int) -> str:
    """Write the gcc workload's input into ``work``: the programs of :data:`GCC_SOURCES`
    copied there, in an order drawn from ``seed``, each included with its ``main`` renamed
    by one file ``input.c``, preprocessed by ``gcc -E`` into ``input.i`` (with line
    markers, as a compiler run's .i file); the name of the .i file."""
    cc1_path()
    order = np.random.default_rng(seed).permutation(len(GCC_SOURCES))
    lines = ["/* the programs of the gcc workload, in an order drawn from the seed */",
             "#define HWPROF_HOST 1"]  # fmt: skip
    for i in order:
        source = PACKAGE_DIR / GCC_SOURCES[i]
        name = source.name
        shutil.copyfile(source, work / name)
        lines += [f"#define main {source.stem}_main", f'#include "{name}"', "#undef main"]
    (work / "input.c").write_text("\n".join(lines) + "\n")
    done = subprocess.run(["gcc", "-E", "-o", "input.i", "input.c"], cwd=work,
                          capture_output=True, text=True, env=os.environ | WORKLOAD_ENV,
                          check=False)  # fmt: skip
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["?"])[0]
        raise TraceError(f"workload 'gcc': preprocessing its input failed: {first}")
    return "input.i"


def _gcc(work: Path, seed: int, scale: int = 1) -> list[str]:
    if scale != 1:
        raise TraceError(f"workload 'gcc' has one input size (scale 1), not {scale!r}")
    name = gcc_input(work, seed)
    return [cc1_path(), *CC1_OPTIONS, name, "-o", "input.s"]


def _sort(work: Path, seed: int, scale: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    words = _words(rng, 40_000 * scale)
    numbers = rng.integers(0, 1_000_000, len(words))
    path = work / "input.txt"
    path.write_text("".join(f"{w} {v}\n" for w, v in zip(words, numbers, strict=True)))
    # GNU sort sorts with threads from 128K lines on (SUBTHREAD_LINES_HEURISTIC); an
    # enlarged input is sorted in one thread, so that its loads are one program-order stream
    return ["sort", path.name] if scale == 1 else ["sort", "--parallel=1", path.name]


def _perl(work: Path, seed: int, scale: int = 1) -> list[str]:
    name = _text(work / "input.txt", np.random.default_rng(seed), 60_000 * scale)
    return ["perl", "-e", WORD_COUNT_PERL, name]


def _python(work: Path, seed: int, scale: int = 1) -> list[str]:
    name = _text(work / "input.txt", np.random.default_rng(seed), 60_000 * scale)
    # -P (3.11+): the work dir is not put on sys.path, so its random name is not
    # hashed into the import system's dicts (the run would differ from run to run)
    isolate = ["-P"] if sys.version_info >= (3, 11) else []
    return [real_python(), "-S", *isolate, "-c", WORD_COUNT_PYTHON, name]


#: name -> workload. Skips measured with ``--kinds`` off on an empty input:
#: xz 0.52M, bzip2 0.22M, sort 0.35M, perl 1.4M, python -S 21-28M instructions.
WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("xz", "xz -6 compressing 60K words of Zipf text", 2_000_000, _xz),
    Workload("bzip2", "bzip2 -9 compressing 60K words of Zipf text", 1_000_000, _bzip2),
    Workload("sort", "sort (LC_ALL=C) of 40K 'word number' lines", 1_000_000, _sort),
    Workload("perl", "perl word frequencies of 60K words", 5_000_000, _perl,
             {"PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}),
    Workload("python", "python -S word frequencies of 60K words (collections.Counter)",
             40_000_000, _python, {"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
                                   "PYTHONPATH": "", "PYTHONSTARTUP": ""}),
)}  # fmt: skip

#: Programs beyond the five, for the experiments that name them (captured on demand
#: with :func:`trace_for`; not among the programs other experiments loop over; interp
#: and kernel ship a trace of control transfers). Skips measured as above: gzip 0.25M
#: instructions, sha256sum 0.18M, interp 0.13M (argument 0); kernel 1.54M with its matrix
#: filled (1000 rows, 0 passes), so its skip starts in the kernel's loop; gcc 15.4M (cc1
#: with its options on an empty .i file). sha256sum is the one whose load values are
#: spread thin: most of its loads read the message schedule (words of the input and words
#: mixed from them), few values repeat (multihash-values).
MORE_WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("gzip", "gzip -9 compressing 60K words of Zipf text", 1_000_000, _gzip),
    Workload("sha256sum", "sha256sum of 60K words of Zipf text", 1_000_000, _sha256sum),
    Workload("interp", "a bytecode interpreter calling one handler per instruction, running "
             "a 6-instruction sum-of-squares loop (100K iterations, 8 times)", 200_000, _interp,
             source="interp.c"),
    Workload("kernel", "a kernel whose 64-iteration inner loop calls two leaf functions "
             "(load, store) on each element of 1000 rows, 40 passes", 2_000_000, _kernel,
             source="kernel.c"),
    Workload("gcc", "cc1 (gcc's compiler proper, -O2) compiling a preprocessed file of three "
             "C programs (kernel.c, interp.c, compress.c) in a seeded order", 20_000_000, _gcc,
             inputs=GCC_SOURCES),
)}  # fmt: skip

#: Input scale per workload that gives at least 100M loads after the skip (the
#: default inputs give xz 458M guest instructions and more than 100M loads, bzip2
#: 36.4M loads, perl 34.4M, python 31.2M, sort 14.7M, sha256sum 1.3M): multihash-values'
#: 100 intervals of 1M loads. Measured: docs/traces.md.
LARGE_SCALE = {"xz": 1, "bzip2": 4, "perl": 5, "python": 4, "sort": 8, "sha256sum": 100}

#: the environment of every workload (locale-independent behaviour)
WORKLOAD_ENV = {"LC_ALL": "C"}


def workload_env(name: str) -> dict[str, str]:
    """Environment variables workload ``name`` runs with (added to the caller's)."""
    return WORKLOAD_ENV | _workload(name).env


def _workload(name: str) -> Workload:
    try:
        return (WORKLOADS | MORE_WORKLOADS)[name]
    except KeyError:
        known = ", ".join(WORKLOADS | MORE_WORKLOADS)
        raise TraceError(f"unknown workload {name!r} (known: {known})") from None


def workload_command(name: str, work: Path, seed: int = DEFAULT_SEED, scale: int = 1) -> list[str]:
    """Write workload ``name``'s input (``scale`` times its size) into ``work``; its command."""
    if not isinstance(scale, int) or isinstance(scale, bool) or scale < 1:
        raise TraceError(f"input scale must be a positive integer, not {scale!r}")
    return _workload(name).argv(Path(work), seed, scale)


def workload_description(name: str, scale: int = 1) -> str:
    """The workload's description, with the input scale when it is not 1."""
    text = _workload(name).description
    return text if scale == 1 else f"{text}, input x{scale}"


def shipped_trace(name: str) -> Path:
    """The shipped trace of workload ``name`` (``traces/NAME.trace``)."""
    _workload(name)
    path = SHIPPED_DIR / f"{name}.trace"
    if not path.is_file():
        raise TraceError(f"{path}: no shipped trace for workload {name!r} (a source checkout "
                         "has them; or capture one with valgrind: trace_for)")  # fmt: skip
    return path


def _capture(name: str, output: Path, *, kinds, skip, limit, seed, progress, scale=1,
             level: int | None = None) -> dict:  # fmt: skip
    from .capture import capture

    with tempfile.TemporaryDirectory(prefix=f"hwprof-{name}-") as tmp:
        command = workload_command(name, Path(tmp), seed, scale)
        header = {"workload": name, "seed": seed,
                  "description": workload_description(name, scale), "env": workload_env(name)}
        if scale != 1:
            header["scale"] = scale
        return capture(command, output, kinds=kinds, skip=skip, limit=limit, progress=progress,
                       stdout=subprocess.DEVNULL, cwd=tmp, env=workload_env(name), level=level,
                       header=header)  # fmt: skip


def cached_trace_path(name: str, *, kinds: str, skip: int, limit: int | None, seed: int,
                      cache: Path | str, scale: int = 1) -> Path:
    """The cache file of :func:`trace_for`: named by the options, tagged by a hash of the
    tool's source, the workload's description (with its input scale) and environment."""
    _workload(name)
    if not isinstance(scale, int) or isinstance(scale, bool) or scale < 1:
        raise TraceError(f"input scale must be a positive integer, not {scale!r}")
    source = (Path(__file__).with_name("valgrind") / "hwprof_trace.c").read_bytes()
    program = _workload(name).source
    if program:  # the workload's own C program
        source += (PROGRAMS_DIR / program).read_bytes()
    for path in _workload(name).inputs:  # the C sources it reads
        source += (PACKAGE_DIR / path).read_bytes()
    # scale 1 keeps the tag and name of the traces cached before scales existed
    tag = hashlib.sha256(source + repr((workload_description(name, scale), kinds,
                                        workload_env(name))).encode()).hexdigest()[:10]
    scaled = "" if scale == 1 else f"-x{scale}"
    return Path(cache) / (f"{name}{scaled}-s{seed}-skip{skip}-limit{limit}-"
                          f"{kinds.replace(',', '+')}-{tag}.trace")  # fmt: skip


def trace_for(name: str, *, kinds: str = SHIPPED_KINDS, skip: int | None = None,
              limit: int | None = SHIPPED_LIMIT, seed: int = DEFAULT_SEED,
              cache: Path | str = Path("build/traces"), progress: bool = False,
              scale: int = 1) -> Path:
    """A trace of workload ``name``, captured into ``cache`` on first use.

    ``skip`` defaults to the workload's initialisation length; ``scale``
    multiplies the workload's input (for traces longer than the default input
    gives: :data:`LARGE_SCALE`). Raises
    :class:`TraceError` when it must capture and valgrind is missing (naming
    the shipped trace to use instead).
    """
    skip = _workload(name).skip if skip is None else skip
    path = cached_trace_path(name, kinds=kinds, skip=skip, limit=limit, seed=seed, cache=cache,
                             scale=scale)  # fmt: skip
    if path.is_file():
        return path
    if shutil.which("valgrind") is None:
        hint = SHIPPED_DIR / f"{name}.trace"
        raise TraceError(f"capturing workload {name!r} needs valgrind (not found on PATH; "
                         f"apt-get install valgrind); the shipped trace is {hint}")  # fmt: skip
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TraceError(f"{path.parent}: cannot create ({exc.strerror})") from None
    result = _capture(name, path, kinds=kinds, skip=skip, limit=limit, seed=seed,
                      progress=progress, scale=scale)  # fmt: skip
    status = result.get("exit_status")
    if status not in (0, None):
        path.unlink(missing_ok=True)
        raise TraceError(f"workload {name!r} exited with status {status}")
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m hwprof.traces.workloads --ship [NAME..]``: recreate the shipped traces."""
    parser = argparse.ArgumentParser(prog="python -m hwprof.traces.workloads")
    parser.add_argument("names", nargs="*", default=list(WORKLOADS), help="workloads")
    parser.add_argument("--ship", action="store_true", help="write traces/NAME.trace")
    parser.add_argument("--out", type=Path, default=SHIPPED_DIR, help="output directory")
    args = parser.parse_args(argv)
    if not args.ship:
        for w in (WORKLOADS | MORE_WORKLOADS).values():
            print(f"{w.name:8} skip {w.skip:>11,}  {w.description}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.names:
        out = args.out / f"{name}.trace"
        # shipped files are written once and kept: the format's level, not the capture's;
        # the programs beyond the five ship their control transfers only
        kinds = SHIPPED_KINDS if name in WORKLOADS else "branches"
        result = _capture(name, out, kinds=kinds, skip=_workload(name).skip,
                          limit=SHIPPED_LIMIT, seed=DEFAULT_SEED, progress=True,
                          level=ZSTD_LEVEL)  # fmt: skip
        print(f"{out}: {result['records']:,} records, {out.stat().st_size / 2**20:.2f} MiB, "
              f"stopped at limit: {result.get('stopped_at_limit')}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
