"""Run a list of independent units in-process, on a local Dask cluster or on a given one.

A *unit* is one call ``func(**shared, **kwargs)`` of a module-level function that
returns JSON data (a mutant's regression, one place and route, one proof, one
program x configuration x seed of an experiment). :func:`run_units` runs them

* in-process, one after the other (``jobs=1``; Dask is not imported);
* on a ``distributed.LocalCluster`` of ``jobs`` worker processes, one thread
  each, on 127.0.0.1 (the default: one per core);
* on an existing Dask cluster (``scheduler="tcp://host:8786"``).

Whichever runs them, a unit's result is the same JSON value: the function's
return value after a JSON round trip, computed by the same code on the same
inputs. A unit that raises is a *failed* result (its exception's type and first
line), never retried; a unit whose worker dies is run again elsewhere by Dask's
scheduler (``distributed.scheduler.allowed-failures`` times).

Each finished unit is appended to a journal (JSON lines, one per unit, flushed
at once), so an interrupted run keeps what it finished; ``resume=True`` reads
the journal and runs only the units it lacks. The wall time and worker of a
unit live in its record's one ``timing`` field; nothing else in a record
depends on where or when it ran.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Unit", "Outcome", "RunOptions", "RunError", "Journal", "run_units", "machine_jobs"]

#: seconds to wait for a scheduler named by ``--scheduler`` to answer
CONNECT_TIMEOUT = 10
#: the environment variable naming a scheduler when ``--scheduler`` is not given
SCHEDULER_ENV = "HWPROF_SCHEDULER"


class RunError(Exception):
    """A run that cannot start or go on (bad options, unreachable scheduler, a journal of
    another run): one line for the user."""


@dataclass(frozen=True)
class Unit:
    """One independent piece of work.

    Parameters
    ----------
    key : str
        Unique within a run and stable between runs: the journal's name for it.
    func : callable
        A module-level function (workers import it by name).
    kwargs : dict
        Its arguments besides the run's shared ones; picklable.
    """

    key: str
    func: Callable
    kwargs: dict = field(default_factory=dict)


@dataclass
class Outcome:
    """A unit's result: ``ok`` and its JSON ``value``, or the ``error`` it raised."""

    key: str
    ok: bool
    value: object = None
    error: str = ""
    error_type: str = ""
    timing: dict = field(default_factory=dict)

    def record(self) -> dict:
        """The journal line (everything but ``timing`` independent of where it ran)."""
        out = {"unit": self.key, "ok": self.ok}
        if self.ok:
            out["value"] = self.value
        else:
            out.update(error=self.error, error_type=self.error_type)
        out["timing"] = self.timing
        return out

    @classmethod
    def from_record(cls, record: dict) -> Outcome:
        return cls(record["unit"], record["ok"], record.get("value"), record.get("error", ""),
                   record.get("error_type", ""), record.get("timing", {}))  # fmt: skip


@dataclass
class RunOptions:
    """Where units run: ``jobs`` (1: in-process; None: one worker per core) or ``scheduler``
    (an address; wins over ``jobs``); ``resume``: skip the units the journal holds;
    ``progress``: the progress line (None: only when stderr is a terminal)."""

    jobs: int | None = None
    scheduler: str | None = None
    resume: bool = False
    progress: bool | None = None

    def __post_init__(self):
        if self.jobs is not None and (isinstance(self.jobs, bool) or not isinstance(self.jobs, int)
                                      or self.jobs < 1):  # fmt: skip
            raise RunError(f"--jobs must be a positive integer, not {self.jobs!r}")
        if self.scheduler is not None and not str(self.scheduler).strip():
            raise RunError("--scheduler needs an address such as tcp://host:8786")


def machine_jobs() -> int:
    """Worker processes of the default local cluster: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover (not Linux)
        return max(1, os.cpu_count() or 1)


class Journal:
    """The JSON-lines record of a run: a header line ``{"run": identity}``, then one line
    per finished unit (:meth:`Outcome.record`), in the order they finished."""

    def __init__(self, path: Path, identity: dict):
        self.path = Path(path)
        self.identity = json.loads(json.dumps(identity, sort_keys=True))
        self._file = None

    def load(self) -> dict[str, Outcome]:
        """The finished units of an earlier run of the same identity ({} if no journal)."""
        if not self.path.exists():
            return {}
        lines = self.path.read_text().splitlines()
        try:
            header = json.loads(lines[0]) if lines else {}
        except ValueError:
            header = {}
        if header.get("run") != self.identity:
            raise RunError(f"{self.path} records another run than this one; rerun without "
                           "--resume to start again")  # fmt: skip
        done = {}
        for line in lines[1:]:
            try:
                outcome = Outcome.from_record(json.loads(line))
            except (ValueError, KeyError, TypeError):  # a line cut short by a kill
                continue
            done[outcome.key] = outcome
        return done

    def open(self, keep: Iterable[Outcome]) -> None:
        """Start the file again: the header, then ``keep`` (the units resumed)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "w")  # noqa: SIM115 (closed by close())
        self._file.write(json.dumps({"run": self.identity}, sort_keys=True) + "\n")
        for outcome in keep:
            self._write(outcome)
        self._file.flush()

    def _write(self, outcome: Outcome) -> None:
        self._file.write(json.dumps(outcome.record(), sort_keys=True) + "\n")

    def add(self, outcome: Outcome) -> None:
        self._write(outcome)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def call_unit(func: Callable, shared: dict, kwargs: dict) -> dict:
    """Run one unit where it lands: its record fields (never raises for the unit's own
    failure, so Dask never retries one)."""
    start, cpu = time.perf_counter(), time.process_time()
    try:
        value = json.loads(json.dumps(func(**shared, **kwargs)))
        out = {"ok": True, "value": value}
    except Exception as exc:  # the unit's own failure is its result
        first = (str(exc).strip().splitlines() or [""])[0]
        out = {"ok": False, "error": first or type(exc).__name__,
               "error_type": f"{type(exc).__module__}.{type(exc).__qualname__}",
               "traceback": traceback.format_exc(limit=-8)}  # fmt: skip
    out["timing"] = {"seconds": round(time.perf_counter() - start, 3),
                     "cpu_seconds": round(time.process_time() - cpu, 3), "worker": _where(),
                     "finished": time.time()}  # fmt: skip
    return out


def _where() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "in-process"


def _outcome(key: str, fields: dict) -> Outcome:
    fields = dict(fields)
    fields.pop("traceback", None)
    return Outcome(key, fields["ok"], fields.get("value"), fields.get("error", ""),
                   fields.get("error_type", ""), fields.get("timing", {}))  # fmt: skip


class Progress:
    """``name: 3/40 done, 2 running, 1 failed, 0:42 elapsed, ~8:10 left`` on one terminal
    line of ``stream``; silent when ``enabled`` is False."""

    def __init__(self, name: str, total: int, done: int, enabled: bool, stream=None):
        self.name, self.total, self.done, self.failed = name, total, done, 0
        self.running, self.enabled = 0, enabled
        self.stream = stream or sys.stderr
        self.start, self.first_done, self.last = time.monotonic(), done, 0.0

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not force and now - self.last < 0.5):
            return
        self.last = now
        elapsed = now - self.start
        new = self.done - self.first_done
        left = "?"
        if new:
            left = _clock(elapsed / new * (self.total - self.done))
        self.stream.write(f"\r{self.name}: {self.done}/{self.total} done, {self.running} running, "
                          f"{self.failed} failed, {_clock(elapsed)} elapsed, ~{left} left\x1b[K")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.update(force=True)
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return (f"{hours}:" if hours else "") + f"{rest // 60:0{2 if hours else 1}d}:{rest % 60:02d}"


def run_units(units: list[Unit], options: RunOptions | None = None, *,
              journal: Journal | None = None, shared: dict | None = None,
              on_done: Callable[[Outcome], None] | None = None, name: str = "run",
              log: Callable[[str], None] | None = None) -> dict[str, Outcome]:  # fmt: skip
    """Run ``units``; ``{key: Outcome}`` in the order of ``units``.

    ``shared``: arguments every unit takes (sent to each worker once). ``journal``:
    where finished units are recorded (and, with ``options.resume``, read from).
    ``on_done(outcome)``: called in the driver as each unit finishes (resumed ones
    first). ``log``: where one-off lines go (the dashboard's address); default stderr.
    A ``KeyboardInterrupt`` stops the run (the journal keeps the finished units) and
    propagates.
    """
    options = options or RunOptions()
    shared = shared or {}
    log = log or (lambda text: print(text, file=sys.stderr, flush=True))
    keys = [u.key for u in units]
    if len(set(keys)) != len(keys):
        raise ValueError("unit keys must be unique")
    done: dict[str, Outcome] = {}
    if journal is not None and options.resume:
        recorded = journal.load()
        done = {k: recorded[k] for k in keys if k in recorded}
    if journal is not None:
        journal.open(done.values())
    pending = [u for u in units if u.key not in done]
    show = options.progress if options.progress is not None else sys.stderr.isatty()
    progress = Progress(name, len(units), len(done), show)
    progress.failed = sum(not o.ok for o in done.values())
    if done and show:
        log(f"{name}: {len(done)} of {len(units)} units already recorded in "
            f"{journal.path}; running {len(pending)}")  # fmt: skip
    for outcome in done.values():
        if on_done is not None:
            on_done(outcome)

    def finished(outcome: Outcome) -> None:
        done[outcome.key] = outcome
        if journal is not None:
            journal.add(outcome)
        progress.done += 1
        progress.failed += not outcome.ok
        if on_done is not None:
            on_done(outcome)
        progress.update(force=True)

    try:
        if pending and options.scheduler is None and (options.jobs or machine_jobs()) == 1:
            for unit in pending:
                progress.running = 1
                progress.update()
                finished(_outcome(unit.key, call_unit(unit.func, shared, unit.kwargs)))
            progress.running = 0
        elif pending:
            _run_dask(pending, options, shared, finished, progress, name, log)
    finally:
        progress.finish()
        if journal is not None:
            journal.close()
    return {k: done[k] for k in keys}


def _connect(options: RunOptions, workers: int, log):
    """A ``(client, cluster or None)``: the given scheduler's, or a new local cluster's."""
    import logging

    from distributed import Client, LocalCluster

    if options.scheduler is not None:
        try:
            client = Client(options.scheduler, timeout=CONNECT_TIMEOUT,
                            set_as_default=False)  # fmt: skip
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            first = (str(exc).splitlines() or [""])[0]
            raise RunError(f"cannot reach the Dask scheduler at {options.scheduler}: "
                           f"{first or type(exc).__name__}") from None  # fmt: skip
        return client, None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0",
                           memory_limit=0, silence_logs=logging.ERROR)  # fmt: skip
    return Client(cluster, set_as_default=False), cluster


def dashboard_address(client) -> str | None:
    """The Dask dashboard's URL, if the scheduler runs one (it needs bokeh)."""
    info = client.scheduler_info()
    port = info.get("services", {}).get("dashboard")
    if port is None:
        return None
    try:  # without bokeh the scheduler serves no dashboard pages
        if not client.run_on_scheduler(_has_bokeh):
            return None
    except Exception:  # a scheduler without hwprof cannot run the check: no address
        return None
    host = info["address"].split("://")[-1].rsplit(":", 1)[0]
    return f"http://{host}:{port}/status"


def _has_bokeh() -> bool:
    import importlib.util

    return importlib.util.find_spec("bokeh") is not None


def _run_dask(pending, options, shared, finished, progress, name, log) -> None:
    from distributed import as_completed

    workers = min(options.jobs or machine_jobs(), len(pending))
    client, cluster = _connect(options, workers, log)
    futures = {}
    try:
        where = options.scheduler or f"a local cluster of {workers} worker processes"
        link = dashboard_address(client)
        if progress.enabled or link:  # quiet in a log, but for the dashboard's address
            log(f"{name}: {len(pending)} units on {where}"
                + (f"; dashboard {link}" if link else ""))  # fmt: skip
        shared_data = client.scatter([shared], broadcast=True, hash=False)[0] if shared else {}
        token = uuid.uuid4().hex[:8]
        for unit in pending:
            future = client.submit(call_unit, unit.func, shared_data, unit.kwargs,
                                   key=f"{name}-{unit.key}-{token}", pure=False,
                                   retries=0)  # fmt: skip
            futures[future] = unit.key
        threads = max(1, sum(client.nthreads().values()))
        progress.running = min(threads, len(futures))
        progress.update(force=True)
        left, lost = len(futures), []
        with client.as_current():
            completed = as_completed(list(futures))
        for future in completed:
            left -= 1
            progress.running = min(threads, left)
            if future.status == "error":  # its workers died (KilledWorker): not a result
                exc = future.exception()
                lost.append(f"{futures[future]} ({type(exc).__name__}: {exc})")
                progress.update()
                continue
            finished(_outcome(futures[future], future.result()))
        if lost:
            raise RunError(f"{len(lost)} units lost with their workers, first {lost[0]}; the "
                           "others are recorded: rerun with --resume")  # fmt: skip
    finally:
        for future in futures:
            future.cancel()
        client.close()
        if cluster is not None:
            cluster.close()
