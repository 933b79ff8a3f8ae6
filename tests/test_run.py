"""hwprof.run: the executor of long jobs, in-process against a local Dask cluster.

The unit functions are in tests/run_units.py (workers import them by name). The
commands' own runs (mutate, experiment) through ``--jobs`` and ``--scheduler`` are in
tests/test_run_commands.py.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from hwprof.run import Journal, RunError, RunOptions, Unit, executor, run_units
from hwprof.run.executor import Progress
from tests import run_units as ru


def records(path):
    """The journal's unit records without their timing field, by unit."""
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return {r["unit"]: {k: v for k, v in r.items() if k != "timing"} for r in lines}


def marks(path):
    return sorted(int(x) for x in path.read_text().split()) if path.exists() else []


def test_in_process_and_local_cluster_agree(tmp_path):
    """The same records from both; a unit that raises is its result, run once (never
    retried)."""
    calls = tmp_path / "calls"
    units = [Unit(f"u{x}", ru.square, {"x": x}) for x in range(5)]
    units.insert(2, Unit("bad", ru.fail_on, {"x": 9, "bad": 9, "marks": str(calls)}))
    one = run_units(units, RunOptions(jobs=1), journal=Journal(tmp_path / "1.jsonl", {"n": 6}),
                    shared={"offset": 7}, log=lambda _: None)  # fmt: skip
    assert marks(calls) == [9]
    two = run_units(units, RunOptions(jobs=2), journal=Journal(tmp_path / "2.jsonl", {"n": 6}),
                    shared={"offset": 7}, log=lambda _: None)  # fmt: skip
    assert marks(calls) == [9, 9]
    assert list(one) == list(two) == [u.key for u in units]
    assert [o.value for o in one.values()] == [o.value for o in two.values()]
    assert one["u4"].value == {"x": 4, "y": 23, "third": 4 / 3, "pair": [4, -4]}
    assert [o.ok for o in two.values()] == [True, True, False, True, True, True]
    assert two["bad"].error == "unit 9 is bad" and two["bad"].error_type == "builtins.ValueError"
    assert records(tmp_path / "1.jsonl") == records(tmp_path / "2.jsonl")
    assert {o.timing["worker"] for o in one.values()} == {"in-process"}
    assert all(o.timing["worker"].startswith("tcp://127.0.0.1:") for o in two.values())


def test_resume_runs_only_the_missing_units(tmp_path):
    calls = tmp_path / "calls"
    journal = Journal(tmp_path / "j.jsonl", {"what": "resume"})
    units = [Unit(str(x), ru.interrupt_at, {"x": x, "stop": 3, "marks": str(calls)})
             for x in range(6)]  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        run_units(units, RunOptions(jobs=1), journal=journal, log=lambda _: None)
    assert marks(calls) == [0, 1, 2] and set(records(journal.path)) == {"0", "1", "2"}
    units = [Unit(str(x), ru.counted, {"x": x, "marks": str(calls)}) for x in range(6)]
    seen = []
    out = run_units(units, RunOptions(jobs=1, resume=True), journal=journal,
                    on_done=lambda o: seen.append(o.key), log=lambda _: None)  # fmt: skip
    assert marks(calls) == [0, 1, 2, 3, 4, 5]  # 0-2 not again
    assert seen == [str(x) for x in range(6)] and all(o.ok for o in out.values())
    assert out["1"].value == ru.square(1) | {"pair": [1, -1]}
    # without --resume the journal starts again
    run_units(units, RunOptions(jobs=1), journal=journal, log=lambda _: None)
    assert len(marks(calls)) == 12


def test_resume_refuses_another_runs_journal(tmp_path):
    path = tmp_path / "j.jsonl"
    run_units([Unit("a", ru.square, {"x": 1})], RunOptions(jobs=1),
              journal=Journal(path, {"n": 1}), log=lambda _: None)  # fmt: skip
    with pytest.raises(RunError, match="records another run"):
        run_units([Unit("a", ru.square, {"x": 1})], RunOptions(jobs=1, resume=True),
                  journal=Journal(path, {"n": 2}), log=lambda _: None)  # fmt: skip


def test_a_killed_worker_is_replaced_and_nothing_lost(tmp_path):
    calls = tmp_path / "calls"
    units = [Unit(str(x), ru.kill_worker_once, {"x": x, "victim": 1, "marks": str(calls)})
             for x in range(4)]  # fmt: skip
    said = []
    out = run_units(units, RunOptions(jobs=2, progress=True), log=said.append, name="kill")
    # with the progress line (a terminal) the command says where the units run
    assert said == ["kill: 4 units on a local cluster of 2 worker processes"]
    assert (tmp_path / "calls.killed1").exists()  # the first attempt did kill its worker
    assert all(o.ok for o in out.values()) and marks(calls) == [0, 1, 2, 3]
    assert [o.value for o in out.values()] == [ru.square(x) | {"pair": [x, -x]}
                                               for x in range(4)]  # fmt: skip


def test_progress_line():
    stream = io.StringIO()
    progress = Progress("mutate brr", 40, 10, True, stream)
    progress.done, progress.running, progress.failed = 12, 2, 1
    progress.update(force=True)
    line = stream.getvalue()
    assert line.startswith("\rmutate brr: 12/40 done, 2 running, 1 failed, 0:00 elapsed, ~")
    quiet = io.StringIO()
    Progress("x", 3, 0, False, quiet).update(force=True)
    assert quiet.getvalue() == ""


def test_quiet_when_not_a_terminal(tmp_path, capfd):
    run_units([Unit("a", ru.square, {"x": 1})], RunOptions(jobs=1), name="quiet")
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True])
def test_bad_jobs(jobs):
    with pytest.raises(RunError, match="--jobs must be a positive integer"):
        RunOptions(jobs=jobs)


def test_unreachable_scheduler(monkeypatch):
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", 2)
    free_port = ru.free_port()
    with pytest.raises(RunError, match=f"cannot reach the Dask scheduler at "
                                       f"tcp://127.0.0.1:{free_port}"):  # fmt: skip
        run_units([Unit("a", ru.square, {"x": 1})],
                  RunOptions(scheduler=f"tcp://127.0.0.1:{free_port}"))  # fmt: skip


def test_journal_path_is_under_build_runs_unless_the_variable_names_a_directory(monkeypatch):
    """docs/run.md: journals go to build/runs/ of the working directory, or to the
    directory HWPROF_RUNS_DIR names."""
    from hwprof.run import journal_path

    monkeypatch.delenv("HWPROF_RUNS_DIR")
    assert journal_path("mutate-brr") == Path("build/runs/mutate-brr.jsonl")
    monkeypatch.setenv("HWPROF_RUNS_DIR", "/elsewhere/runs")
    assert journal_path("experiment-x") == Path("/elsewhere/runs/experiment-x.jsonl")


def test_the_suite_keeps_journals_out_of_the_checkout(tmp_path):
    """conftest.py: a test's runs write their journals under its tmp_path."""
    from hwprof.run import journal_path

    assert journal_path("mutate-brr").parent == tmp_path / "build" / "runs"
