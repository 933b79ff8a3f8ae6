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

from types import SimpleNamespace

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

from ..catalog import CatalogError, get_top
from ..golden.multihash import PRESETS
from ..rtl import Checked
from ..rtl.multihash import tuple_layout
from ..rtl.multihash_config import multihash_config

__all__ = ["MultiHashPeripheral", "START_INTERVAL", "START_THRESHOLD", "REGISTERS",
           "FIFO_DEPTH_MAX", "BLOCK_OFFSET", "attach", "register_table", "RetiredLoads",
           "check_parameters", "parse_profile_output"]

#: Reset values of the multi-hash top's configuration registers inside the peripheral.
#: Each start resets the top and runs one interval of two tuples at this threshold
#: (two keys that cannot be promoted), whose boundary loads the configuration that
#: software wrote; that interval's (empty) readout is not published.
START_INTERVAL = 2
START_THRESHOLD = 2

#: Largest ``fifo_depth`` (entries of the asynchronous FIFO; a power of two from 2).
FIFO_DEPTH_MAX = 1024

#: Width of the ``offered``, ``dropped`` and ``intervals`` counters (they saturate).
COUNTER_WIDTH = 32


#: Offset of the peripheral's registers in the system's CSR window (block ``multihash``).
BLOCK_OFFSET = 0x200

#: The peripheral's registers in the system's CSR map (default parameters: 24-bit
#: counters, 100 entries, 32-bit pc and value): ``(name, byte offset in the block,
#: access, bits, reset, meaning)``, one 32-bit word and one field from bit 0 each, as
#: the system's register map (``hwprof.system.regmap.Reg``) takes them. ``w``: a write
#: strobes (its data is ignored by START, STOP and ACK); reads give 0.
REGISTERS = (
    ("INTERVAL", 0x00, "rw", 24, "10000", "interval length in tuples (>= 1), taken at START"),
    ("THRESHOLD", 0x04, "rw", 24, "100",
     "candidate threshold as a count (1 .. INTERVAL), taken at START"),
    ("SOURCE", 0x08, "rw", 1, "0", "0: retired loads (pc, value); 1: taken branches "
     "(pc, target), edge profiling (reads 0 if not built); taken at START"),
    ("START", 0x0C, "w", 1, None, "write: reset the profiler, clear the counts, profile "
     "with INTERVAL, THRESHOLD, SOURCE (STATUS.running when under way)"),
    ("STOP", 0x10, "w", 1, None, "write: offer no more tuples"),
    ("STATUS", 0x14, "r", 4, "0", "bit 0 done: an ended interval is shown (also the "
     "interrupt line); 1 running; 2 starting; 3 overrun (sticky until START)"),
    ("ACK", 0x18, "w", 1, None, "write: the interval shown is read: show the next ended "
     "one or clear done"),
    ("CANDIDATES", 0x1C, "r", 7, "0", "candidates of the interval shown (0 if none)"),
    ("INDEX", 0x20, "rw", 7, "0", "candidate read through CAND_* (< CANDIDATES)"),
    ("CAND_PC", 0x24, "r", 32, "-", "pc of candidate INDEX of the interval shown"),
    ("CAND_VALUE", 0x28, "r", 32, "-", "value (or branch target) of candidate INDEX"),
    ("CAND_COUNT", 0x2C, "r", 24, "-", "count of candidate INDEX"),
    ("OFFERED", 0x30, "r", 32, "0", "tuples offered since START (saturating)"),
    ("DROPPED", 0x34, "r", 32, "0", "of them dropped, the FIFO full (saturating)"),
    ("INTERVALS", 0x38, "r", 32, "0", "intervals ended since START (saturating)"),
)  # fmt: skip


def register_table() -> str:
    """The register table of docs/system-profiler.md (Markdown), from :data:`REGISTERS`."""
    lines = ["| offset | register | access | bits | reset | meaning |",
             "| --- | --- | --- | ---: | --- | --- |"]  # fmt: skip
    for name, offset, access, bits, reset, doc in REGISTERS:
        reset = "-" if reset in (None, "-") else f"`{reset}`"
        lines.append(f"| `0x{offset:02x}` | `{name}` | {access} | {bits} | {reset} | {doc} |")
    return "\n".join(lines) + "\n"


def attach(m, peripheral, fields):
    """Wire the register fields of :data:`REGISTERS` to ``peripheral``.

    ``fields[name]`` has the ports of the system's live CSR field: ``r_data`` (in) for
    a readable register, ``w_data`` and ``w_stb`` (out) for a writable one.
    """
    p = peripheral
    for name, _offset, access, _bits, _reset, _doc in REGISTERS:
        field = fields[name]
        port = name.lower()
        if name in ("START", "STOP", "ACK"):
            m.d.comb += getattr(p, port).eq(field.w_stb)
            continue
        if "w" in access:
            m.d.comb += [getattr(p, f"{port}_w_data").eq(field.w_data),
                         getattr(p, f"{port}_w_stb").eq(field.w_stb)]  # fmt: skip
        m.d.comb += field.r_data.eq(p.status if name == "STATUS" else getattr(p, port))


def _multihash_params(params):
    """The catalog multihash top's parameters in the peripheral (the start registers'
    values are the peripheral's own)."""
    return params | {"interval_length": START_INTERVAL, "threshold": START_THRESHOLD}


def _check_parameters(fifo_depth, edges, domain, params):
    """The multihash configuration of the peripheral's parameters; raises on a bad one."""
    for name in ("interval_length", "threshold"):
        if name in params:
            raise ValueError(f"{name} is written by software, not a parameter")
    if (not isinstance(fifo_depth, int) or isinstance(fifo_depth, bool)
            or not 2 <= fifo_depth <= FIFO_DEPTH_MAX or fifo_depth & (fifo_depth - 1)):  # fmt: skip
        raise ValueError(f"fifo_depth must be a power of two from 2 to {FIFO_DEPTH_MAX}, "
                         f"not {fifo_depth!r}")
    if not isinstance(edges, bool):
        raise TypeError(f"edges must be a bool, not {edges!r}")
    if not isinstance(domain, str) or not domain or domain == "sync":
        raise ValueError(f"domain must be a name other than 'sync', not {domain!r}")
    top = get_top("multihash")
    try:  # the catalog's check of the top's parameters (Top.construct's message)
        return multihash_config(**top.resolve(_multihash_params(params)))
    except CatalogError:
        raise
    except (TypeError, ValueError) as exc:
        raise CatalogError(f"{top.name}: {exc}") from None


def _start_keys(config):
    """Two keys that differ in at least one counter index: neither can reach threshold 2."""
    hashes = config.hashes()
    first = [h(0) for h in hashes]
    key = 1
    while [h(key) for h in hashes] == first:
        key += 1
    return 0, key


class MultiHashPeripheral(Checked, wiring.Component):
    """Multi-hash profiler fed by the core, in its own clock domain.

    Parameters
    ----------
    fifo_depth : int
        Entries of the asynchronous FIFO (a power of two, 2 to :data:`FIFO_DEPTH_MAX`).
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
    loads : In(stream.Signature(tuple_layout(pc_bits, value_bits)))
        ``sync``. Retired loads ``<pc, value>``: one tuple in each cycle ``valid`` is
        high; ``ready`` is always 1 (a tuple that finds the FIFO full is dropped and
        counted).
    branches : same as ``loads``
        ``sync``, only with ``edges``: taken branches, ``value`` = the target.
    interval, threshold : Out(counter_bits)
        ``sync`` registers (reset 10,000 and 100). Interval length in tuples and
        candidate threshold as a count (``1 <= threshold <= interval``), taken when a
        start is carried out. Written with ``interval_w_data`` / ``interval_w_stb``
        (``threshold_w_*``): ``In`` of the same shape and ``In(1)``.
    source : Out(1)
        ``sync`` register (``source_w_*``). 0: profile ``loads``; 1: ``branches`` (only
        with ``edges``; otherwise it stays 0). Taken at start.
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
    index : Out(range(accumulator))
        ``sync`` register (``index_w_*``). Candidate shown on ``cand_*``, like the
        register itself from the cycle after the write (a synchronous read of the
        written value).
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
    offer, drop : Out(1)
        Observation (``sync``, combinational): a tuple is offered this cycle (counted in
        ``offered``), and it finds the FIFO full (counted in ``dropped``).
    offer_data : Out(pc_bits + value_bits)
        Observation: the tuple offered (``value`` in the low bits, then ``pc``).
    offer_edge : Out(1)
        Observation: the tuples offered are taken branches (the ``source`` taken at the
        last start; 0 without ``edges``).

    Latency: a tuple offered in ``sync`` cycle ``t`` is readable in ``prof`` two or
    three ``prof`` cycles later (the FIFO's Gray-code pointer synchronizer) and is
    accepted by the multihash top that cycle. An interval's candidates are written
    about ``candidates + 8`` ``prof`` cycles after its last tuple is accepted; ``done``
    rises two or three ``sync`` cycles after that.

    Raises
    ------
    TypeError, ValueError
        On a bad parameter (the catalog's message for the multihash parameters).
    """

    @classmethod
    def check_params(cls, fifo_depth, edges, domain, params):
        """The multihash configuration (``config``); raises before the peripheral exists."""
        return _check_parameters(fifo_depth, edges, domain, params)

    def __init__(self, *, fifo_depth=16, edges=False, domain="prof", **params):
        self.fifo_depth, self.edges, self.domain = fifo_depth, edges, domain
        self.multihash = get_top("multihash").construct(_multihash_params(params))
        c = self.config  # set by Checked from check_params
        #: the two tuples of the start interval (keys, in order)
        self.start_keys = _start_keys(c)
        source = stream.Signature(tuple_layout(c.pc_bits, c.value_bits))
        ports = {"loads": In(source)}
        for name, (shape, init) in self.registers().items():
            ports |= {f"{name}_w_data": In(shape), f"{name}_w_stb": In(1),
                      name: Out(shape, init=init)}  # fmt: skip
        ports |= {
            "start": In(1),
            "stop": In(1),
            "ack": In(1),
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
            "offer": Out(1),
            "drop": Out(1),
            "offer_data": Out(c.key_bits),
            "offer_edge": Out(1),
        }
        if edges:
            ports["branches"] = In(source)
        super().__init__(ports)

    def registers(self):
        """The software-written registers: ``{name: (shape, reset value)}``.

        ``interval`` and ``threshold`` reset to the paper's 10,000-tuple interval at 1%
        (:data:`hwprof.golden.multihash.PRESETS`), held below ``2**counter_bits``.
        """
        c = self.config
        top = (1 << c.counter_bits) - 1
        interval = min(PRESETS["10k"]["interval_length"], top)
        threshold = min(PRESETS["10k"]["threshold"], interval)
        return {"interval": (c.counter_bits, interval), "threshold": (c.counter_bits, threshold),
                "source": (1, 0), "index": (range(c.accumulator), 0)}  # fmt: skip

    @property
    def status(self):
        """``done``, ``running``, ``starting``, ``overrun`` as bits 0-3 (one value)."""
        return Cat(self.done, self.running, self.starting, self.overrun)

    def elaborate(self, platform):
        m = Module()
        self._software_registers(m)
        start = self._start_handshake(m)
        fifo = self._offer_tuples(m, start.source)
        mh, restart = self._profiler_domain(m, fifo, start)
        published = self._candidate_writer(m, mh, restart)
        view_bank = self._intervals_shown(m, published)
        self._candidate_readout(m, published.banks, view_bank)
        return m

    def _software_registers(self, m):
        """sync: the registers software writes."""
        # --- sync: the software-written registers -----------------------------------------
        for name in self.registers():
            if name == "source" and not self.edges:
                continue  # loads only: reads 0
            with m.If(getattr(self, f"{name}_w_stb")):
                m.d.sync += getattr(self, name).eq(getattr(self, f"{name}_w_data"))

    def _start_handshake(self, m):
        """sync: a start (or a start during one) is requested of the profiler's domain;
        returns the request toggle, its acknowledgement, and what it carries."""
        w = self.config.counter_bits
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
            m.d.sync += source.eq(self.source)
        with m.If(self.start & busy):
            m.d.sync += again.eq(1)
        with m.If(self.start):
            m.d.sync += armed.eq(1)
        with m.Elif(self.stop):
            m.d.sync += [armed.eq(0), again.eq(0)]
        return SimpleNamespace(req=req, ack_s=ack_s, source=source,
                               shadow_interval=shadow_interval,
                               shadow_threshold=shadow_threshold)  # fmt: skip

    def _offer_tuples(self, m, source):
        """sync: loads or branches (``source``) into the FIFO, offered and dropped counted."""
        kb, p = self.config.key_bits, self.domain
        # --- sync: tuples into the FIFO, counted ------------------------------------------
        m.submodules.fifo = fifo = AsyncFIFO(width=kb, depth=self.fifo_depth,
                                             r_domain=p, w_domain="sync")  # fmt: skip
        offer = Signal()
        m.d.comb += self.loads.ready.eq(1)
        if self.edges:
            m.d.comb += self.branches.ready.eq(1)
        payload = self.loads.payload.as_value()
        if self.edges:
            payload = Mux(source, self.branches.payload.as_value(), payload)
            m.d.comb += offer.eq(Mux(source, self.branches.valid, self.loads.valid) & self.running)
        else:
            m.d.comb += offer.eq(self.loads.valid & self.running)
        m.d.comb += [fifo.w_en.eq(offer), fifo.w_data.eq(payload), self.offer_data.eq(payload),
                     self.offer.eq(offer), self.drop.eq(offer & ~fifo.w_rdy),
                     self.offer_edge.eq(source)]  # fmt: skip
        top = (1 << COUNTER_WIDTH) - 1
        with m.If(self.start):
            m.d.sync += [self.offered.eq(0), self.dropped.eq(0)]
        with m.Elif(offer):
            m.d.sync += self.offered.eq(Mux(self.offered == top, top, self.offered + 1))
            with m.If(~fifo.w_rdy):
                m.d.sync += self.dropped.eq(Mux(self.dropped == top, top, self.dropped + 1))
        return fifo

    def _profiler_domain(self, m, fifo, start):
        """prof: the start sequence (reset, configure, start keys, drain), then the FIFO
        into the multihash top; returns the top and the restart strobe."""
        p = self.domain
        req, ack_s = start.req, start.ack_s
        shadow_interval, shadow_threshold = start.shadow_interval, start.shadow_threshold
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
        return mh, restart

    def _candidate_writer(self, m, mh, restart):
        """prof: the top's records into two banks of the candidate memory; an interval's
        end publishes its bank and count (a toggle crosses to sync)."""
        c, p = self.config, self.domain
        acc, kb, w = c.accumulator, c.key_bits, c.counter_bits
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
        return SimpleNamespace(banks=banks, toggle=pub_toggle, bank=pub_bank, n=pub_n)

    def _intervals_shown(self, m, published):
        """sync: published intervals shown to software (done, irq, a second one waiting,
        overrun); returns the bank software reads."""
        acc = self.config.accumulator
        top = (1 << COUNTER_WIDTH) - 1
        pub_toggle, pub_bank, pub_n = published.toggle, published.bank, published.n
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
        return view_bank

    def _candidate_readout(self, m, banks, view_bank):
        """sync: candidate ``index`` of the bank shown, one cycle after ``index`` is written."""
        c = self.config
        acc, kb = c.accumulator, c.key_bits
        read = banks.read_port(domain="sync")
        # addressed by index's next state: cand_* follow a write of index by one cycle
        index = Mux(self.index_w_stb, self.index_w_data, self.index)
        m.d.comb += read.addr.eq(Mux(view_bank, acc, 0) + index)
        m.d.comb += [
            self.cand_value.eq(read.data[: c.value_bits]),
            self.cand_count.eq(read.data[kb:]),
        ]
        if c.pc_bits:
            m.d.comb += self.cand_pc.eq(read.data[c.value_bits : kb])


class RetiredLoads(wiring.Component):
    """Retired loads ``<pc, value>`` of a PicoRV32 core, from its native memory interface.

    A load retires when its data transfer completes: ``mem_valid & mem_ready``, not an
    instruction fetch (``mem_instr`` low), no write strobe. ``value`` is what the load
    writes to its register (RISC-V ``lb``/``lh`` sign-extend, ``lbu``/``lhu`` zero-extend
    the addressed byte or half-word of ``mem_rdata``; ``lw`` the word), chosen by the
    instruction word's ``funct3`` and the address's low bits; ``pc`` is the address of
    the executing instruction (the load's).

    Attributes
    ----------
    mem_valid, mem_ready, mem_instr : In(1)
        The core's memory handshake and its instruction-fetch flag (gate ``mem_valid``
        with the address decode to take only loads from memory, not from the CSR
        window).
    mem_wstrb : In(4)
        Write strobes (0 for a read).
    mem_addr, mem_rdata : In(32)
        Byte address and read data of the transfer.
    pc, insn : In(32)
        Address and word of the instruction executing (the core's ``dbg_insn_addr``
        and ``dbg_insn_opcode``).
    loads : Out(stream.Signature(tuple_layout(32, 32)))
        One tuple per retired load; ``ready`` is not used (the profiler always takes).
    addr : Out(32), size : Out(3)
        Observation: the data address and the bytes loaded (1, 2 or 4) of the tuple on
        ``loads``, registered with it.

    Latency: 1 cycle (the tuple is registered; ``valid`` for one cycle).
    """

    def __init__(self):
        super().__init__({
            "mem_valid": In(1),
            "mem_ready": In(1),
            "mem_instr": In(1),
            "mem_wstrb": In(4),
            "mem_addr": In(32),
            "mem_rdata": In(32),
            "pc": In(32),
            "insn": In(32),
            "loads": Out(stream.Signature(tuple_layout(32, 32))),
            "addr": Out(32),
            "size": Out(3),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        funct3 = self.insn[12:15]
        byte = self.mem_rdata.word_select(self.mem_addr[0:2], 8)
        half = self.mem_rdata.word_select(self.mem_addr[1], 16)
        value = Signal(32)
        with m.Switch(funct3):
            with m.Case(0):  # lb
                m.d.comb += value.eq(byte.as_signed())
            with m.Case(1):  # lh
                m.d.comb += value.eq(half.as_signed())
            with m.Case(4):  # lbu
                m.d.comb += value.eq(byte)
            with m.Case(5):  # lhu
                m.d.comb += value.eq(half)
            with m.Default():  # lw
                m.d.comb += value.eq(self.mem_rdata)
        load = self.mem_valid & self.mem_ready & ~self.mem_instr & ~self.mem_wstrb.any()
        m.d.sync += self.loads.valid.eq(load)
        with m.If(load):
            m.d.sync += [self.loads.payload.pc.eq(self.pc), self.loads.payload.value.eq(value),
                         self.addr.eq(self.mem_addr),
                         self.size.eq(Mux(funct3[0:2] == 0, 1, Mux(funct3[0], 2, 4)))]  # fmt: skip
        return m


def check_parameters(params: dict) -> None:
    """Raise ``TypeError``/``ValueError`` if ``MultiHashPeripheral(**params)`` would
    (nothing is built)."""
    MultiHashPeripheral.check(**params)


def parse_profile_output(output: str) -> tuple[list[list[tuple[int, int]]], dict[str, list[int]]]:
    """The profile a program printed with ``hwprof_mh_print`` (``hwprof_mh.h``).

    Each line is a one-letter tag and hexadecimal numbers. ``I <n>`` starts an
    interval; each ``C <pc> <value> <count>`` after it is one of its candidates;
    any other tag is a field (``O`` offered, ``D`` dropped, ``S`` status, ...).

    Parameters
    ----------
    output : str
        The console output (blank lines are ignored).

    Returns
    -------
    profiles : list of list of (int, int)
        One list per interval, in order, of ``(key, count)`` with ``key = pc << 32 |
        value``: the form of :func:`hwprof.golden.multihash.run_plain`'s intervals.
    fields : dict of str to list of int
        The numbers of each other tag's line (the last line of a tag wins).

    Raises
    ------
    ValueError
        On a line that is not a tag and hexadecimal numbers, a ``C`` line before any
        ``I`` or without three numbers, or an interval whose ``C`` lines are not as
        many as its ``I`` says.
    """
    profiles: list[list[tuple[int, int]]] = []
    expected: list[int] = []
    fields: dict[str, list[int]] = {}
    for line in output.splitlines():
        if not line.strip():
            continue
        tag, *hexes = line.split()
        try:
            if len(tag) != 1 or not tag.isalpha():
                raise ValueError
            numbers = [int(h, 16) for h in hexes]
        except ValueError:
            raise ValueError(f"not a profile line: {line!r}") from None
        if tag == "I":
            profiles.append([])
            expected.append(numbers[0] if numbers else -1)
        elif tag == "C":
            if not profiles or len(numbers) != 3:
                raise ValueError(f"a candidate line outside an interval or without pc, "
                                 f"value and count: {line!r}")  # fmt: skip
            profiles[-1].append(((numbers[0] << 32) | numbers[1], numbers[2]))
        else:
            fields[tag] = numbers
    for i, (profile, n) in enumerate(zip(profiles, expected, strict=True)):
        if len(profile) != n:
            raise ValueError(f"interval {i}: {len(profile)} candidate lines, its I line says {n}")
    return profiles, fields
