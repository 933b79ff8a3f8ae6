"""The multi-hash profiler as a system peripheral, in its own clock domain.

The catalog's ``multihash`` top (Narayanasamy et al., sections 5-7) takes one
``<pc, value>`` tuple per cycle of its own clock. A single-issue core retires far
fewer loads than one per cycle, so the profiler runs in a clock domain of its own
(``prof``) behind an :class:`amaranth.lib.fifo.AsyncFIFO`: the core offers a tuple
in the cycle it retires the load and never waits; a tuple that finds the FIFO full
is dropped and counted. Inside the profiler nothing is dropped and nothing waits:
the ``multihash`` top consumes the FIFO at up to one tuple per ``prof`` cycle.

Software (the core's domain, ``sync``) writes the interval length and the
threshold and starts profiling; at each interval end the candidates are written
into one of two banks of a candidate memory (written in ``prof``, read in
``sync``), and ``done`` (and ``irq``) tell software, which reads the number of
candidates and candidate ``i`` (its tuple and count). See docs/system-profiler.md.
"""

from __future__ import annotations

from amaranth.hdl import (
    Cat,
    ClockDomain,
    ClockSignal,
    DomainRenamer,
    Module,
    Mux,
    ResetSignal,
    Signal,
)
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..catalog import get_top
from ..rtl._params import checked_config
from ..rtl.multihash import tuple_layout

__all__ = ["MultiHashPeripheral", "START_INTERVAL", "START_THRESHOLD"]

#: Reset values of the multi-hash top's configuration registers inside the peripheral.
#: Each start resets the top and runs one interval of two tuples at this threshold
#: (two keys that cannot be promoted), whose boundary loads the configuration that
#: software wrote; that interval's (empty) readout is not published.
START_INTERVAL = 2
START_THRESHOLD = 2

#: Width of the ``offered``, ``dropped`` and ``intervals`` counters (they saturate).
COUNTER_WIDTH = 32


def _multihash(fifo_depth, edges, domain, params):
    """The catalog's multihash top for the peripheral; checks the peripheral's parameters."""
    for name in ("interval_length", "threshold"):
        if name in params:
            raise ValueError(f"{name} is written by software, not a parameter")
    if (not isinstance(fifo_depth, int) or isinstance(fifo_depth, bool) or fifo_depth < 2
            or fifo_depth & (fifo_depth - 1)):  # fmt: skip
        raise ValueError(f"fifo_depth must be a power of two, at least 2, not {fifo_depth!r}")
    if not isinstance(edges, bool):
        raise TypeError(f"edges must be a bool, not {edges!r}")
    if not isinstance(domain, str) or not domain or domain == "sync":
        raise ValueError(f"domain must be a name other than 'sync', not {domain!r}")
    return get_top("multihash").construct(
        params | {"interval_length": START_INTERVAL, "threshold": START_THRESHOLD})


def _start_keys(config):
    """Two keys that differ in at least one counter index: neither can reach threshold 2."""
    hashes = config.hashes()
    first = [h(0) for h in hashes]
    key = 1
    while [h(key) for h in hashes] == first:
        key += 1
    return 0, key


class MultiHashPeripheral(wiring.Component):
    """Multi-hash profiler fed by the core, in its own clock domain.

    Parameters
    ----------
    fifo_depth : int
        Entries of the asynchronous FIFO (a power of two, at least 2).
    edges : bool
        Add the ``branches`` input (taken branches ``<pc, target>``, edge profiling);
        ``source`` chooses which stream is profiled.
    domain : str
        Name of the profiler's clock domain (the core's is ``sync``).
    **params
        Parameters of the catalog's ``multihash`` top (``tables``, ``counters``,
        ``counter_bits``, ``accumulator``, ``pc_bits``, ``value_bits``, ``retain``,
        ``reset``, ``conservative``, ``hash_seed``, ``ways``); not ``interval_length``
        or ``threshold``, which software writes.

    Attributes
    ----------
    loads : In(stream.Signature(tuple_layout(pc_bits, value_bits), always_ready=True))
        ``sync``. Retired loads ``<pc, value>``: one tuple in each cycle ``valid`` is
        high; never refused (a tuple that finds the FIFO full is dropped and counted).
    branches : same as ``loads``
        ``sync``, only with ``edges``: taken branches, ``value`` = the target.
    interval, threshold : In(counter_bits)
        ``sync``. Interval length in tuples and candidate threshold as a count
        (``1 <= threshold <= interval``), taken when a start is carried out.
    source : In(1)
        ``sync``. 0: profile ``loads``; 1: ``branches`` (with ``edges``). Taken at start.
    start : In(1)
        ``sync`` strobe. Reset the profiler and profile from now on with ``interval``,
        ``threshold`` and ``source``; clears ``offered``, ``dropped``, ``intervals``,
        ``done``, ``overrun``. A start while ``starting`` is carried out when the
        previous one completes.
    stop : In(1)
        ``sync`` strobe. Offer no more tuples (those in the FIFO are still profiled).
    ack : In(1)
        ``sync`` strobe. Software has read the interval shown; show the next one (or
        clear ``done``).
    index : In(range(accumulator))
        ``sync``. Candidate shown on ``cand_*`` (one cycle after it is written).
    starting : Out(1)
        A start is being carried out (at most a few ``prof`` cycles plus the FIFO drain).
    running : Out(1)
        Tuples are offered to the FIFO (started, start complete, not stopped).
    done : Out(1)
        An ended interval is shown (``candidates``, ``cand_*``) and not yet acknowledged.
    irq : Out(1)
        Level interrupt: equal to ``done``.
    overrun : Out(1)
        Sticky: an interval ended while two were waiting for ``ack``; the bank of the
        one shown may have been overwritten.
    candidates : Out(range(accumulator + 1))
        Candidates of the interval shown (0 when none is shown).
    cand_pc, cand_value, cand_count : Out(pc_bits), Out(value_bits), Out(counter_bits)
        Candidate ``index`` of the interval shown, in the multihash top's entry order.
    offered, dropped, intervals : Out(32)
        Since the last start: tuples offered while ``running``, of them dropped because
        the FIFO was full, intervals ended; saturating.

    Latency: a tuple offered in ``sync`` cycle ``t`` is readable in ``prof`` two or
    three ``prof`` cycles later (the FIFO's Gray-code pointer synchronizer) and is
    accepted by the multihash top that cycle. An interval's candidates are written
    within ``candidates + 8`` ``prof`` cycles after its last tuple is accepted; ``done``
    rises two or three ``sync`` cycles after that.

    Raises
    ------
    TypeError, ValueError
        On a bad parameter (the catalog's message for the multihash parameters).
    """

    def __init__(self, *, fifo_depth=16, edges=False, domain="prof", **params):
        self.fifo_depth, self.edges, self.domain = fifo_depth, edges, domain
        self.multihash = checked_config(self, lambda: _multihash(fifo_depth, edges, domain,
                                                                 params))
        c = self.config = self.multihash.config
        #: the two tuples of the start interval (keys, in order)
        self.start_keys = _start_keys(c)
        source = stream.Signature(tuple_layout(c.pc_bits, c.value_bits), always_ready=True)
        ports = {
            "loads": In(source),
            "interval": In(c.counter_bits),
            "threshold": In(c.counter_bits),
            "source": In(1),
            "start": In(1),
            "stop": In(1),
            "ack": In(1),
            "index": In(range(c.accumulator)),
            "starting": Out(1),
            "running": Out(1),
            "done": Out(1),
            "irq": Out(1),
            "overrun": Out(1),
            "candidates": Out(range(c.accumulator + 1)),
            "cand_pc": Out(max(c.pc_bits, 1)),
            "cand_value": Out(c.value_bits),
            "cand_count": Out(c.counter_bits),
            "offered": Out(COUNTER_WIDTH),
            "dropped": Out(COUNTER_WIDTH),
            "intervals": Out(COUNTER_WIDTH),
        }
        if edges:
            ports["branches"] = In(source)
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        c, p = self.config, self.domain
        acc, kb, w = c.accumulator, c.key_bits, c.counter_bits

        # --- sync: start handshake --------------------------------------------------------
        req = Signal()  # toggles at each start carried out
        ack_s = Signal()  # the profiler's answer, synchronized
        busy = Signal()
        again = Signal()  # a start arrived while one was being carried out
        armed = Signal()  # started and not stopped
        shadow_interval = Signal(w)  # stable from a start until the next: read in prof
        shadow_threshold = Signal(w)
        source = Signal()
        issue = Signal()
        m.d.comb += [
            busy.eq(req != ack_s),
            issue.eq((self.start & ~busy) | (again & ~busy)),
            self.starting.eq(busy | again),
            self.running.eq(armed & ~busy & ~again),
        ]
        with m.If(issue):
            m.d.sync += [req.eq(~req), shadow_interval.eq(self.interval),
                         shadow_threshold.eq(self.threshold), again.eq(0)]  # fmt: skip
            m.d.sync += source.eq(self.source if self.edges else 0)
        with m.If(self.start & busy):
            m.d.sync += again.eq(1)
        with m.If(self.start):
            m.d.sync += armed.eq(1)
        with m.Elif(self.stop):
            m.d.sync += [armed.eq(0), again.eq(0)]

        # --- sync: tuples into the FIFO, counted ------------------------------------------
        m.submodules.fifo = fifo = AsyncFIFO(width=kb, depth=self.fifo_depth,
                                             r_domain=p, w_domain="sync")  # fmt: skip
        offer = Signal()
        payload = self.loads.payload.as_value()
        if self.edges:
            payload = Mux(source, self.branches.payload.as_value(), payload)
            m.d.comb += offer.eq(Mux(source, self.branches.valid, self.loads.valid) & self.running)
        else:
            m.d.comb += offer.eq(self.loads.valid & self.running)
        m.d.comb += [fifo.w_en.eq(offer), fifo.w_data.eq(payload)]
        top = (1 << COUNTER_WIDTH) - 1
        with m.If(self.start):
            m.d.sync += [self.offered.eq(0), self.dropped.eq(0)]
        with m.Elif(offer):
            m.d.sync += self.offered.eq(Mux(self.offered == top, top, self.offered + 1))
            with m.If(~fifo.w_rdy):
                m.d.sync += self.dropped.eq(Mux(self.dropped == top, top, self.dropped + 1))

        # --- prof: start sequence, then the FIFO into the multihash top ------------------
        req_p = Signal()
        m.submodules.req_cdc = FFSynchronizer(req, req_p, o_domain=p)
        seen = Signal()  # the request being (or last) carried out
        ack_p = Signal()
        m.submodules.ack_cdc = FFSynchronizer(ack_p, ack_s, o_domain="sync")
        restart = Signal()
        mh = self.multihash
        # the top's own domain: the profiler's clock, reset also at each start
        m.domains.multihash = ClockDomain(local=True)
        m.d.comb += [ClockSignal("multihash").eq(ClockSignal(p)),
                     ResetSignal("multihash").eq(ResetSignal(p) | restart)]  # fmt: skip
        m.submodules.multihash = DomainRenamer("multihash")(mh)
        cfg_we = Signal()
        m.d.comb += [mh.cfg_we.eq(cfg_we), mh.cfg_interval.eq(shadow_interval),
                     mh.cfg_threshold.eq(shadow_threshold)]  # fmt: skip
        first_key, second_key = self.start_keys
        with m.FSM(domain=p):
            with m.State("RUN"):
                # FWFT: r_data is valid with r_rdy; one tuple per cycle the top is ready
                m.d.comb += [
                    mh.tuples.valid.eq(fifo.r_rdy),
                    mh.tuples.payload.as_value().eq(fifo.r_data),
                    fifo.r_en.eq(mh.tuples.ready),
                ]
                with m.If(req_p != seen):
                    m.next = "RESTART"
            with m.State("RESTART"):
                # the top and the candidate writer reset; the request is taken
                m.d.comb += restart.eq(1)
                m.d[p] += seen.eq(req_p)
                m.next = "CONFIG"
            with m.State("CONFIG"):
                m.d.comb += cfg_we.eq(1)  # pending until the start interval's boundary
                m.next = "KEY0"
            with m.State("KEY0"):
                m.d.comb += [mh.tuples.valid.eq(1), mh.tuples.payload.as_value().eq(first_key)]
                with m.If(mh.tuples.ready):
                    m.next = "KEY1"
            with m.State("KEY1"):
                m.d.comb += [mh.tuples.valid.eq(1), mh.tuples.payload.as_value().eq(second_key)]
                with m.If(mh.tuples.ready):
                    m.next = "DRAIN"
            with m.State("DRAIN"):
                # Tuples offered before the start are still in the FIFO: discard them.
                # The FIFO's write pointer changed no later than req and crosses in as
                # many flops, so once req is seen, r_rdy covers every one of them, and
                # no new tuple is offered until ack_p answers.
                m.d.comb += fifo.r_en.eq(1)
                with m.If(~fifo.r_rdy):
                    m.d[p] += ack_p.eq(seen)
                    m.next = "RUN"

        # --- prof: records into the candidate memory -------------------------------------
        banks = Memory(shape=kb + w, depth=2 * acc, init=[])
        m.submodules.candidates = banks
        write = banks.write_port(domain=p)
        wbank = Signal()  # bank of the interval being read out
        widx = Signal(range(acc + 1))
        skip = Signal()  # the start interval's end marker is not published
        pub_toggle = Signal()
        pub_bank = Signal()
        pub_n = Signal(range(acc + 1))
        record = mh.records.payload
        m.d.comb += [
            mh.records.ready.eq(1),
            write.addr.eq(Mux(wbank, acc, 0) + widx),
            write.data.eq(Cat(record.key, record.count)),
            write.en.eq(mh.records.valid & ~record.end),
        ]
        with m.If(restart):
            m.d[p] += [wbank.eq(0), widx.eq(0), skip.eq(1)]
        with m.Elif(mh.records.valid & ~record.end):
            m.d[p] += widx.eq(widx + 1)
        with m.Elif(mh.records.valid):
            m.d[p] += widx.eq(0)
            with m.If(skip):
                m.d[p] += skip.eq(0)
            with m.Else():
                m.d[p] += [pub_n.eq(widx), pub_bank.eq(wbank), pub_toggle.eq(~pub_toggle),
                           wbank.eq(~wbank)]  # fmt: skip

        # --- sync: intervals shown to software -------------------------------------------
        # pub_n and pub_bank are stable for an interval after pub_toggle changes; the
        # toggle crosses in two flops and then they are sampled.
        pub_s = Signal()
        pub_seen = Signal()
        m.submodules.pub_cdc = FFSynchronizer(pub_toggle, pub_s, o_domain="sync")
        m.d.sync += pub_seen.eq(pub_s)
        event = Signal()
        m.d.comb += event.eq((pub_s != pub_seen) & ~self.starting & ~self.start)
        view_bank, view_n = Signal(), Signal(range(acc + 1))
        next_valid, next_bank, next_n = Signal(), Signal(), Signal(range(acc + 1))
        m.d.comb += [
            self.irq.eq(self.done),
            self.candidates.eq(Mux(self.done, view_n, 0)),
        ]
        with m.If(self.start):
            m.d.sync += [self.done.eq(0), next_valid.eq(0), self.overrun.eq(0),
                         self.intervals.eq(0)]  # fmt: skip
        with m.Else():
            shown = Signal()  # done after the acknowledgement, before the event
            m.d.comb += shown.eq(self.done & ~(self.ack & ~next_valid))
            with m.If(self.ack & self.done & next_valid):
                m.d.sync += [view_bank.eq(next_bank), view_n.eq(next_n), next_valid.eq(0)]
            with m.Elif(self.ack):
                m.d.sync += self.done.eq(0)
            with m.If(event):
                m.d.sync += self.intervals.eq(
                    Mux(self.intervals == top, top, self.intervals + 1))
                with m.If(~shown):
                    m.d.sync += [self.done.eq(1), view_bank.eq(pub_bank), view_n.eq(pub_n)]
                with m.Else():
                    m.d.sync += [next_valid.eq(1), next_bank.eq(pub_bank), next_n.eq(pub_n)]
                    with m.If(next_valid & ~self.ack):
                        m.d.sync += self.overrun.eq(1)

        read = banks.read_port(domain="sync")
        m.d.comb += read.addr.eq(Mux(view_bank, acc, 0) + self.index)
        m.d.comb += [
            self.cand_value.eq(read.data[: c.value_bits]),
            self.cand_count.eq(read.data[kb:]),
        ]
        if c.pc_bits:
            m.d.comb += self.cand_pc.eq(read.data[c.value_bits : kb])
        return m
