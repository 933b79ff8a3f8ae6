"""When the block RAM multi-hash profiler stalls its input: ``tuples.ready``, cycle by cycle.

Written from the stall rule of docs/multihash.md (the block RAM design, ``ways > 0``),
not from the RTL. The profiler takes one tuple per cycle; updates never stall. The
input stalls (``tuples.ready`` low) only while the previous interval's readout is
incomplete, and then only for a tuple at position ``T - 1`` or later of its interval
(``T``: that interval's threshold, positions from 0) or for the interval's last tuple:

* the readout of an interval whose last tuple is accepted in cycle ``c`` is incomplete
  from cycle ``c + 1`` up to and including the cycle its end marker enters the output
  FIFO (:data:`FIFO_DEPTH` entries, which drives ``records``);
* its ``k`` records are read from the accumulator one per cycle from cycle ``c + 6`` on,
  each entering the FIFO the cycle after it is read; a record is read only when the
  FIFO has room for it and the record still in flight (the FIFO's entries at the start
  of the cycle plus the one in flight, below :data:`FIFO_DEPTH`);
* the marker enters the FIFO in the first cycle from ``c + 6`` on in which every
  record has entered it (none in flight) and it has room (:data:`FIFO_DEPTH` entries
  at the start of the cycle: no room, even if one leaves in that cycle);
* ``records.valid`` is high while the FIFO holds an entry (from the cycle after the
  entry entered it); an entry leaves in a cycle with ``records.valid`` and
  ``records.ready`` high.

So with ``records.ready`` always high, a readout of ``k`` records is complete at the
end of cycle ``c + k + 7`` (``c + 6`` when ``k = 0``), and a consumer that holds
``records.ready`` low keeps it incomplete while ``k >= FIFO_DEPTH``. A configuration
written through ``cfg_*`` takes effect at the interval's end, as in
:class:`hwprof.golden.multihash.MultiHashProfiler`: the interval after it starts with
the new length and threshold, and its positions are compared with that threshold.

:class:`ReadoutStall` is the rule as a cycle model (``ready``, then ``clock``);
:func:`stall_runs` runs it over a whole stimulus of the native bench's form (every
tuple offered as soon as the one before it is accepted), skipping the cycles where
nothing can stall, and returns where the input stalls and for how long.
"""

from __future__ import annotations

import numpy as np

from .lfsr import check_int

__all__ = ["ReadoutStall", "stall_runs", "FIFO_DEPTH", "FIRST_READ"]

#: entries of the output FIFO that drives ``records``
FIFO_DEPTH = 4
#: the first record is read this many cycles after the interval's last tuple is accepted
#: (the last tuple leaves the four-stage pipeline; its cycle in the last stage writes the
#: pending flags, no read in it)
FIRST_READ = 6


class ReadoutStall:
    """The input stall rule of the block RAM design, one cycle at a time.

    Per cycle: read :attr:`ready` (``tuples.ready``) and :attr:`records_valid`
    (``records.valid``), then :meth:`clock` with what happened in the cycle.

    Parameters
    ----------
    interval_length, threshold : int
        The configuration registers' values after reset (the top's parameters).
    fifo_depth : int
        Entries of the output FIFO.

    Raises
    ------
    TypeError, ValueError
        ``interval_length`` or ``fifo_depth`` not a positive integer, ``threshold``
        not an integer of 1 or more.
    """

    def __init__(self, interval_length: int, threshold: int, fifo_depth: int = FIFO_DEPTH):
        check_int("interval_length", interval_length, 1)
        check_int("threshold", threshold, 1)
        check_int("fifo_depth", fifo_depth, 1)
        self.interval_length, self.threshold, self.fifo_depth = (
            interval_length,
            threshold,
            fifo_depth,
        )
        #: the position in its interval of the next tuple accepted
        self.position = 0
        self._written = None  # a configuration write waiting for the interval's end
        self._age = None  # cycles since the last tuple of the interval being read out
        self._records = 0  # its records
        self._unread = 0  # records not yet read from the accumulator
        self._in_flight = False  # a record read last cycle, entering the FIFO this cycle
        self._marker_owed = False  # the end marker has not entered the FIFO
        #: entries in the output FIFO
        self.level = 0

    def configure(self, interval_length: int, threshold: int) -> None:
        """A write through ``cfg_*`` in the cycle that accepts the next tuple (which must
        not be its interval's last): effective from the next interval."""
        check_int("interval_length", interval_length, 1)
        check_int("threshold", threshold, 1)
        self._written = (interval_length, threshold)

    @property
    def incomplete(self) -> bool:
        """The previous interval's readout is incomplete in this cycle."""
        return (self._age is not None or self._unread > 0 or self._in_flight
                or self._marker_owed)  # fmt: skip

    @property
    def last(self) -> bool:
        """The next tuple accepted is the last of its interval."""
        return self.position == self.interval_length - 1

    @property
    def ready(self) -> bool:
        """``tuples.ready`` in this cycle."""
        stalls_here = self.last or self.position >= self.threshold - 1
        return not (self.incomplete and stalls_here)

    @property
    def records_valid(self) -> bool:
        """``records.valid`` in this cycle."""
        return self.level > 0

    def clock(self, accept: bool, out_ready: bool, records: int | None = None) -> bool:
        """End the cycle: ``accept`` (a tuple was offered and :attr:`ready`),
        ``out_ready`` (``records.ready``), ``records``: the number of records of the
        interval the accepted tuple ends (its profile's length; only then). Returns
        whether a record or marker left the FIFO in this cycle.

        Raises ValueError on a tuple accepted while not :attr:`ready`, or on
        ``records`` missing (or given) where the tuple does (not) end its interval.
        """
        if accept and not self.ready:
            raise ValueError(f"a tuple accepted at position {self.position} while the "
                             "input stalls")  # fmt: skip
        ending = accept and self.last
        if ending != (records is not None):
            raise ValueError("records is the record count of the interval the accepted "
                             "tuple ends, and only then")  # fmt: skip
        age = self._age
        settling = age == FIRST_READ - 1  # the pending flags are written: no read
        room = self.level + self._in_flight < self.fifo_depth
        read = self._unread > 0 and room and not settling and age is None
        marker = (self._marker_owed and self._unread == 0 and not self._in_flight and room
                  and not settling and age is None)  # fmt: skip
        leaves = self.level > 0 and out_ready
        self.level += int(self._in_flight or marker) - int(leaves)
        self._in_flight = read
        self._unread -= int(read)
        if marker:
            self._marker_owed = False
        if age is not None:
            if age == FIRST_READ - 2:  # the last tuple leaves the pipeline: a marker owed
                self._marker_owed = True
            if settling:
                self._unread = self._records
                self._age = None
            else:
                self._age = age + 1
        if accept:
            if ending:
                self._age, self._records = 1, check_int("records", records, 0)
                self.position = 0
                if self._written is not None:
                    self.interval_length, self.threshold = self._written
                    self._written = None
            else:
                self.position += 1
        return leaves


def stall_runs(tuples: int, interval_length: int, threshold: int, records,
               out_ready: np.ndarray, writes=(), holds=(),
               fifo_depth: int = FIFO_DEPTH) -> dict:  # fmt: skip
    """Where the input stalls on a stimulus of the native bench's form, by
    :class:`ReadoutStall`.

    ``tuples`` tuples, each offered from the cycle after the one before it is accepted
    (tuple 0 in cycle 0), from reset values ``interval_length`` and ``threshold``.
    ``records``: the record count of each interval, in order (the golden model's
    profiles; at least one per interval the tuples end). ``out_ready``: the
    consumer's ``records.ready`` by cycle (a bool array, long enough for the run);
    ``writes``: ``(tuple, interval, threshold)``, each written in the cycle that
    accepts that tuple (:meth:`ReadoutStall.configure`); ``holds``: ``(tuple,
    cycles)``, ``records.ready`` held low for ``cycles`` cycles after the cycle that
    accepts that tuple (a hold replaces one still under way).

    Returns ``runs``: an array of rows ``(first cycle, tuple, cycles)``, one per run of
    stalled cycles (``tuple``: the one waiting), and ``leave``: the cycles in which a
    record or marker left the FIFO, up to the last readout's last.

    Raises ValueError when ``out_ready`` is too short, ``records`` has too few
    intervals, or a write falls on an interval's last tuple.
    """
    writes = {int(n): (int(length), int(t)) for n, length, t in writes}
    holds = {int(n): int(h) for n, h in holds}
    records = [int(k) for k in records]
    out_ready = np.asarray(out_ready, dtype=bool)
    model = ReadoutStall(interval_length, threshold, fifo_depth)
    runs, leave = [], []
    cycle = i = ended = 0
    held_to = -1  # records.ready held low up to this cycle
    run_start = None

    def consumer(t):
        if t >= len(out_ready):
            raise ValueError(f"out_ready has {len(out_ready)} cycles, the run needs more")
        return bool(out_ready[t]) and t > held_to

    while i < tuples or model.incomplete or model.level:
        quiet = not model.incomplete and i < tuples and not model.last
        if quiet:
            # nothing can stall before the interval's last tuple: tuples accepted one a
            # cycle up to it (or to the next hold), the FIFO drains on the consumer's cycles
            span = min(model.interval_length - 1 - model.position, tuples - i)
            upcoming = [n for n in holds if i <= n < i + span]
            if upcoming:
                span = min(upcoming) - i
        if quiet and span > 0:
            if run_start is not None:  # tuple i, accepted in this cycle, waited
                runs.append((run_start, i, cycle - run_start))
                run_start = None
            if cycle + span > len(out_ready):
                raise ValueError(f"out_ready has {len(out_ready)} cycles, the run needs more")
            take = out_ready[cycle : cycle + span].copy()
            take[: max(0, held_to + 1 - cycle)] = False
            gone = np.flatnonzero(take)[: model.level]
            leave += (gone + cycle).tolist()
            model.level -= len(gone)
            for n in range(i, i + span):
                if n in writes:
                    model.configure(*writes[n])
            model.position += span
            i += span
            cycle += span
            continue
        ready = model.ready
        offer = i < tuples
        accept = offer and ready
        if offer and not ready:
            if run_start is None:
                run_start = cycle
        elif run_start is not None:
            runs.append((run_start, i, cycle - run_start))
            run_start = None
        k = None
        if accept:
            if i in writes:
                if model.last:
                    raise ValueError(f"configuration write at tuple {i}, the last of its "
                                     "interval")  # fmt: skip
                model.configure(*writes[i])
            if model.last:
                if ended >= len(records):
                    raise ValueError(f"records has {len(records)} intervals; tuple {i} ends "
                                     "another")  # fmt: skip
                k = records[ended]
                ended += 1
        if model.clock(accept, consumer(cycle), k):
            leave.append(cycle)
        if accept:
            if i in holds:
                held_to = cycle + holds[i]  # (replacing a hold under way)
            i += 1
        cycle += 1
    return {
        "runs": np.array(runs, dtype=np.uint64).reshape(-1, 3),
        "leave": np.array(leave, dtype=np.uint64),
    }
