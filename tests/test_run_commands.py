"""``--jobs``, ``--scheduler`` and ``--resume`` of the long commands (hwprof.run), end to
end: the quick stratified-values experiment (one unit per trace x seed) in-process, on a
local cluster of two workers and on a scheduler and two workers started here as separate
processes (``dask scheduler`` / ``dask worker`` on 127.0.0.1), with a worker killed during
a run, an interrupted run resumed, and bad input. Every run's results must equal the
in-process run's, byte for byte, but for the one timing field (JSON) and line (Markdown).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hwprof.cli import main
from hwprof.run import RUNS_ENV, executor
from tests.run_units import free_port

ROOT = Path(__file__).resolve().parents[1]
DASK = Path(sys.executable).parent / "dask"
STEM = "stratified-values-quick"
#: the quick run's units: 5 seeds of the compressors, the stream's properties, and 5 seeds
#: each of the readings and the long readings (one shipped trace)
UNITS = 16
JOURNAL = Path("build/runs") / f"experiment-{STEM}.jsonl"
#: seconds any one step here may take on a loaded 2-core machine before the test gives up
LIMIT = 240


def env():
    """The children's environment: journals under their working directory (``build/runs``),
    whatever the suite's ``HWPROF_RUNS_DIR``."""
    return {**{k: v for k, v in os.environ.items() if k != RUNS_ENV}, "PYTHONPATH": str(ROOT)}


def as_from_a_terminal() -> None:
    """In the child before exec: SIGINT delivered and at its default, as a shell starts a
    command. A child inherits ignored and blocked signals, and in the full suite the
    driver once ignored every SIGINT that this test sent (its exit status was 0)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def experiment(cwd: Path, out: str, *flags: str, wait: bool = True):
    cmd = [sys.executable, "-m", "hwprof.cli", "experiment", "stratified-values", "--quick",
           "-o", out, *flags]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=cwd, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_from_a_terminal)  # fmt: skip
    if not wait:
        return proc
    try:
        stdout, stderr = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, stderr
    return stderr


def results(folder: Path) -> dict:
    """The run's files, the JSON without its ``timing`` field, the Markdown without its
    ``This run:`` line."""
    data = json.loads((folder / f"{STEM}.json").read_text())
    assert set(data.pop("timing")) == {"date", "seconds", "unit_seconds", "kept", "program_runs"}
    md = [line for line in (folder / f"{STEM}.md").read_text().splitlines()
          if not line.startswith("This run: ")]  # fmt: skip
    return {"json": data, "md": md, "png": (folder / f"{STEM}.png").read_bytes()}


def journal(cwd: Path) -> dict:
    """The journal's unit records by unit (timing kept)."""
    lines = (cwd / JOURNAL).read_text().splitlines()[1:]
    return {r["unit"]: r for r in map(json.loads, lines)}


def without_timing(records: dict) -> dict:
    return {k: {f: v for f, v in r.items() if f != "timing"} for k, r in records.items()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The in-process run (``--jobs 1``): its results and journal."""
    cwd = tmp_path_factory.mktemp("jobs1")
    experiment(cwd, "out", "--jobs", "1")
    return results(cwd / "out"), journal(cwd)


def test_two_local_workers_same_results(reference, tmp_path):
    assert experiment(tmp_path, "out", "--jobs", "2") == ""  # quiet: not a terminal
    assert results(tmp_path / "out") == reference[0]
    records = journal(tmp_path)
    assert without_timing(records) == without_timing(reference[1])
    assert len(records) == UNITS and {r["timing"]["worker"] for r in records.values()} != {
        "in-process"}


def _stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``(address, [worker processes], gate folder)``: a scheduler and two workers (no
    nanny, so that a killed worker stays dead; each unit a second longer and held at the
    gate when a test closes it, tests/run_slow_worker.py), separate processes on
    127.0.0.1; stopped at the end."""
    cwd = tmp_path_factory.mktemp("cluster")
    gate = cwd / "gate"  # tests/run_slow_worker.py: open unless a test closes it
    gate.mkdir()
    (gate / "open").touch()
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], cwd=cwd, env=env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]  # fmt: skip
    try:
        for _ in range(2):
            procs.append(subprocess.Popen(
                [str(DASK), "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                 "--no-nanny", "--no-dashboard", "--preload", "tests.run_slow_worker"],
                cwd=cwd, env={**env(), "HWPROF_TEST_GATE": str(gate)}, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))  # fmt: skip
        from distributed import Client

        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=LIMIT)
        yield address, procs[1:], gate
    finally:
        for proc in reversed(procs):
            _stop(proc)


def test_scheduler_two_workers_then_one_killed(reference, cluster, tmp_path):
    address, workers, _ = cluster
    assert experiment(tmp_path, "out", "--scheduler", address) == ""
    assert results(tmp_path / "out") == reference[0]
    records = journal(tmp_path)
    assert without_timing(records) == without_timing(reference[1])
    assert len({r["timing"]["worker"] for r in records.values()} - {"in-process"}) >= 1
    # again (another directory, another journal), killing one worker (SIGKILL) as soon as
    # the first unit is recorded
    again = tmp_path / "again"
    again.mkdir()
    proc = experiment(again, "out", "--scheduler", address, wait=False)
    deadline = time.monotonic() + LIMIT
    while len(journal(again) if (again / JOURNAL).exists() else {}) < 1:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    workers[0].kill()
    recorded = len(journal(again))
    stdout, stderr = proc.communicate(timeout=LIMIT)
    assert proc.returncode == 0, stderr
    assert recorded < UNITS, "the run ended before the worker was killed"
    assert results(again / "out") == reference[0]
    assert without_timing(journal(again)) == without_timing(reference[1])


def test_missing_trace_on_a_worker(cluster, tmp_path, capfd):
    """The driver never opens --trace files: a worker reads its unit's by path."""
    address, *_ = cluster
    missing = tmp_path / "elsewhere.trace"
    proc = subprocess.run([sys.executable, "-m", "hwprof.cli", "experiment", "stratified-values",
                           "--quick", "-o", "out", "--trace", str(missing), "--scheduler",
                           address], cwd=tmp_path, env=env(), capture_output=True, text=True,
                          timeout=LIMIT)  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines[-1:]) == 1 and str(missing) in lines[-1]
    assert lines[-1].startswith("hwprof: error: ") and "(on tcp://127.0.0.1:" in lines[-1]
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


def test_resume_after_ctrl_c_runs_no_finished_unit_again(reference, cluster, tmp_path):
    """On the cluster, the gate closed but for one unit's pass (tests/run_slow_worker.py):
    the interrupt lands once that unit is recorded, five seconds before any other unit
    can finish."""
    address, _, gate = cluster
    (gate / "open").unlink()
    (gate / "pass").touch()
    try:
        proc = experiment(tmp_path, "out", "--scheduler", address, wait=False)
        deadline = time.monotonic() + LIMIT
        while len(journal(tmp_path) if (tmp_path / JOURNAL).exists() else {}) < 1:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
    finally:
        (gate / "open").touch()
    stdout, stderr = proc.communicate(timeout=LIMIT)
    assert proc.returncode == 130, (stderr, "SIGINT in the test process:",
                                    signal.getsignal(signal.SIGINT),
                                    signal.pthread_sigmask(signal.SIG_BLOCK, []))  # fmt: skip
    assert "interrupted" in stderr and "--resume" in stderr and "Traceback" not in stderr
    before = journal(tmp_path)
    assert 1 <= len(before) < UNITS and not (tmp_path / "out").exists()
    experiment(tmp_path, "out", "--scheduler", address, "--resume")
    after = journal(tmp_path)
    assert results(tmp_path / "out") == reference[0]
    assert without_timing(after) == without_timing(reference[1])
    for unit, record in before.items():  # the same record, its timing too: not run again
        assert after[unit] == record


@pytest.mark.parametrize("flags, message", [
    (["--jobs", "0"], "--jobs must be a positive integer, not 0"),
    (["--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"], "give --jobs"),
])  # fmt: skip
def test_bad_options(flags, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "stratified-values", "--quick", "-o", "out", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_unreachable_scheduler(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", 2)
    address = f"tcp://127.0.0.1:{free_port()}"
    monkeypatch.setenv("HWPROF_SCHEDULER", address)  # the variable names it
    assert main(["experiment", "stratified-values", "--quick", "-o", "out"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"cannot reach the Dask scheduler at {address}" in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.cocotb
def test_mutation_run_same_records_in_process_and_on_two_workers(tmp_path):
    """Two mutants of brr (a short regression: --cycles 300), each a unit: the records of
    --jobs 1 and --jobs 2 are the same but for their timing. (Run in the repository, whose
    build/ caches the Verilator build of the mutants; the journal goes to a temporary
    directory.)"""
    got = {}
    for jobs in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "hwprof.cli", "mutate", "brr", "-n", "2",
                               "--cycles", "300", "--jobs", jobs, "--records",
                               str(tmp_path / f"m{jobs}.json")],
                              cwd=ROOT, env={**env(), RUNS_ENV: str(tmp_path / "runs")},
                              capture_output=True, text=True, timeout=2 * LIMIT)  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        data = json.loads((tmp_path / f"m{jobs}.json").read_text())
        assert set(data.pop("timing")) == {"seconds"}
        lines = (tmp_path / "runs/mutate-brr.jsonl").read_text().splitlines()
        got[jobs] = data, without_timing({r["unit"]: r for r in map(json.loads, lines[1:])})
    assert got["1"] == got["2"]
    data, records = got["1"]
    assert [m["index"] for m in data["mutants"]] == [1, 2] and set(records) == {"1", "2"}
    assert all(m["status"] in ("killed", "equivalent", "survived") for m in data["mutants"])
