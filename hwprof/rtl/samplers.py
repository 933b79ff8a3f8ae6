"""Sampling stream compressors of Sastry et al. (sec. 3): ``R_r``, countdown, ``P_r``,
``C``, ``CR_r``, ``H[P_r]_n``, and the ``H[P_r]_n A_k`` + message buffer pipeline.

Every component is a ``wiring.Component`` with a tuple stream in
(``amaranth.lib.stream``, payload = the ``key_bits`` key) and a message stream
out (payload :func:`message_layout`: ``key``, ``count``). The rules are those of
:mod:`hwprof.golden.samplers` (which the RTL does not import, apart from its
configs and constants).

Timing, common to every stage (:func:`output_register`): one tuple per cycle;
``tuples.ready = ~messages.valid | messages.ready``; an accepted tuple updates
the sampler at the clock edge and its message (if any) is valid from the next
cycle (latency 1) until the consumer takes it. The only stall: a message waits
in the output register and the consumer holds ``ready`` low.

``H[P_r]_n`` keeps its ``n`` counters in an ``amaranth.lib.memory.Memory`` with
an asynchronous (``comb``) read port and a write port: read-modify-write of one
counter per cycle, as ``amaranth.lib.fifo.SyncFIFO`` does. (An SRAM macro with a
registered read would need a second pipeline stage with a bypass for
back-to-back tuples on the same counter.)
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..golden.gf2 import gf2_apply
from ..golden.lfsr import TAPS
from ..golden.samplers import (
    COUNTDOWN_WARMUP,
    LFSR_WIDTH,
    RAND_BITS,
    SamplerConfig,
    StratifiedConfig,
    check_int,
    check_latency,
    random_threshold,
)
from ..golden.tagged import AssocConfig
from ._params import Checked
from .hashing import Hash
from .lfsr import Lfsr, step_masks
from .select import lowest_one
from .stream_pipeline import ReadModifyWrite, load_message, message_output

__all__ = [
    "message_layout",
    "output_register",
    "RandomSampler",
    "CountdownSampler",
    "PeriodicSampler",
    "Counter",
    "CountingRandomSampler",
    "Stratified",
    "AssocTable",
    "MessageBuffer",
    "StratifiedPipeline",
]


def message_layout(key_bits, count_bits):
    """A message ``(key, count)``: ``count`` occurrences of ``key``."""
    return data.StructLayout({"key": key_bits, "count": count_bits})


def output_register(m, sink, source, emit, key, count):
    """The one-message output register shared by every stage.

    ``sink`` is the input stream, ``source`` the message stream; ``emit`` says the
    tuple being accepted produces the message ``(key, count)``. Returns ``accept``.
    """
    accept = Signal()
    m.d.comb += [
        sink.ready.eq(~source.valid | source.ready),
        accept.eq(sink.valid & sink.ready),
    ]
    with m.If(source.ready):
        m.d.sync += source.valid.eq(0)
    with m.If(accept & emit):
        m.d.sync += [
            source.valid.eq(1),
            source.payload.key.eq(key),
            source.payload.count.eq(count),
        ]
    return accept


class _Sampler(Checked, wiring.Component):
    """Common ports: ``tuples`` (In stream of keys), ``messages`` (Out stream)."""

    def __init__(self, key_bits, count_bits, in_layout=None, extra=None):
        members = {
            "tuples": In(stream.Signature(in_layout if in_layout is not None else key_bits)),
            "messages": Out(stream.Signature(message_layout(key_bits, count_bits))),
        }
        members.update(extra or {})
        super().__init__(members)

    def _random(self, m, seed):
        """The 32-bit LFSR, 16 steps per advance, and its 16 fresh random bits."""
        m.submodules.lfsr = lfsr = Lfsr(width=LFSR_WIDTH, seed=seed, steps=RAND_BITS)
        return lfsr, lfsr.state[:RAND_BITS]


_STREAM_DOC = """
    Attributes
    ----------
    tuples : In(stream.Signature(key_bits))
        Input tuples; ``ready = ~messages.valid | messages.ready``.
    messages : Out(stream.Signature(message_layout(key_bits, count_bits)))
        Messages ``(key, count)``, valid the cycle after the tuple is accepted.

    Latency: 1 cycle. Raises ``TypeError``/``ValueError`` on bad parameters.
"""


class RandomSampler(_Sampler):
    __doc__ = (
        """``R_r``: each tuple selected with probability ``round(2**16 / r) / 2**16``.

    Parameters
    ----------
    rate : int
        ``r``, 2..65536; messages carry ``count = r``.
    key_bits : int
        Tuple width.
    seed : int
        Reset state of the 32-bit LFSR (16 steps per accepted tuple).
    """
        + _STREAM_DOC
    )

    config_class = SamplerConfig

    def __init__(self, rate=256, key_bits=64, seed=1):
        super().__init__(key_bits, self.config.rate_bits)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        lfsr, u = self._random(m, c.seed)
        selected = u < random_threshold(c.rate)
        accept = output_register(m, self.tuples, self.messages, selected, self.tuples.payload,
                                 c.rate)  # fmt: skip
        m.d.comb += lfsr.enable.eq(accept)
        return m


def _countdown_gap(u, rate):
    """``1 + ((u 2r) >> 16)``, before the fold: a Value in hardware, an int at elaboration."""
    return 1 + ((u * (2 * rate)) >> RAND_BITS)


def _countdown_fold(gap, rate, select=Mux):
    """The top gap ``2r`` folded to ``r``: ``Mux`` in hardware, a conditional for an int."""
    return select(gap == 2 * rate, rate, gap)


def _if(condition, then, otherwise):
    return then if condition else otherwise


class CountdownSampler(_Sampler):
    __doc__ = (
        """Countdown random sampler: load ``g = 1 + ((u * 2r) >> 16)``, ``2r`` folded to ``r``.

    The countdown is loaded at reset and on every selection with the gap to the
    next selection, in ``1..2r - 1``; its mean is ``r`` (exactly for a
    power-of-two ``r``), so the implied count ``r`` of a message is unbiased
    (:func:`hwprof.golden.samplers.countdown_reload`).

    Parameters
    ----------
    rate : int
        ``r``, 2..65536.
    key_bits, seed : int
        Tuple width; LFSR seed. The seed is fixed at elaboration, so the draw at
        reset is too: the golden model's (the LFSR advanced ``COUNTDOWN_WARMUP`` =
        2 times past the seed, 16 bits drawn through the same reload, one more
        advance), computed here with the LFSR's own step masks. The countdown's
        reset value is that gap and the LFSR's reset state the advanced state; the
        LFSR then advances on a reload only.
    """
        + _STREAM_DOC
    )

    config_class = SamplerConfig

    def __init__(self, rate=256, key_bits=64, seed=1):
        super().__init__(key_bits, self.config.rate_bits)

    def reset_values(self) -> tuple[int, int]:
        """``(countdown, LFSR state)`` after reset: the draw at reset, done at elaboration."""
        c = self.config
        masks = step_masks(LFSR_WIDTH, TAPS[LFSR_WIDTH], "fibonacci", RAND_BITS)
        state = c.seed
        for _ in range(COUNTDOWN_WARMUP):
            state = gf2_apply(masks, state)
        u = state & ((1 << RAND_BITS) - 1)
        first = _countdown_fold(_countdown_gap(u, c.rate), c.rate, _if)
        return first, gf2_apply(masks, state)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        first, lfsr_reset = self.reset_values()
        lfsr, u = self._random(m, lfsr_reset)
        countdown = Signal(range(2 * c.rate), init=first)
        fire = countdown == 1
        accept = output_register(m, self.tuples, self.messages, fire, self.tuples.payload,
                                 c.rate)  # fmt: skip
        gap = Signal(range(2 * c.rate + 1))
        m.d.comb += gap.eq(_countdown_gap(u, c.rate))
        reload = Signal.like(countdown)
        m.d.comb += reload.eq(_countdown_fold(gap, c.rate))
        m.d.comb += lfsr.enable.eq(accept & fire)
        with m.If(accept):
            m.d.sync += countdown.eq(Mux(fire, reload, countdown - 1))
        return m


class PeriodicSampler(_Sampler):
    __doc__ = (
        """``P_r``: every ``r``-th tuple, message ``(key, r)``.

    Parameters
    ----------
    rate : int
        ``r``, 2..65536.
    key_bits : int
        Tuple width.
    """
        + _STREAM_DOC
    )

    config_class = SamplerConfig

    def __init__(self, rate=256, key_bits=64):
        super().__init__(key_bits, self.config.rate_bits)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        counter = Signal(range(c.rate))
        fire = counter == c.rate - 1
        accept = output_register(m, self.tuples, self.messages, fire, self.tuples.payload,
                                 c.rate)  # fmt: skip
        with m.If(accept):
            m.d.sync += counter.eq(Mux(fire, 0, counter + 1))
        return m


class Counter(_Sampler):
    __doc__ = (
        """``C``: counts tuples; reports ``(key, 2**count_bits - 1)`` on saturation.

    Parameters
    ----------
    count_bits : int
        Counter width, 2..32.
    key_bits : int
        Tuple width.
    """
        + _STREAM_DOC
    )

    config_class = SamplerConfig

    def __init__(self, count_bits=16, key_bits=64):
        super().__init__(key_bits, count_bits)

    def elaborate(self, platform):
        m = Module()
        top = (1 << self.config.count_bits) - 1
        counter = Signal(self.config.count_bits)
        fire = counter == top - 1
        accept = output_register(m, self.tuples, self.messages, fire, self.tuples.payload, top)
        with m.If(accept):
            m.d.sync += counter.eq(Mux(fire, 0, counter + 1))
        return m


class CountingRandomSampler(_Sampler):
    __doc__ = (
        """``CR_r``: ``R_r`` with a counter; messages carry the count since the last one.

    Parameters
    ----------
    rate : int
        ``r``, 2..65536.
    count_bits : int
        Counter width; a saturating counter also sends a message.
    key_bits, seed : int
        Tuple width, LFSR reset state.
    """
        + _STREAM_DOC
    )

    @classmethod
    def check_params(cls, rate, count_bits, key_bits, seed):
        config = SamplerConfig(rate, key_bits, seed, count_bits)
        if (1 << count_bits) - 1 < rate:
            raise ValueError(f"count_bits must hold the rate {rate}, not {count_bits}")
        return config

    def __init__(self, rate=256, count_bits=16, key_bits=64, seed=1):
        super().__init__(key_bits, count_bits)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        lfsr, u = self._random(m, c.seed)
        counter = Signal(c.count_bits)
        plus = Signal(c.count_bits)
        m.d.comb += plus.eq(counter + 1)
        fire = (u < random_threshold(c.rate)) | (plus == (1 << c.count_bits) - 1)
        accept = output_register(m, self.tuples, self.messages, fire, self.tuples.payload, plus)
        m.d.comb += lfsr.enable.eq(accept)
        with m.If(accept):
            m.d.sync += counter.eq(Mux(fire, 0, plus))
        return m


class Stratified(_Sampler):
    """``H[X_r]_n``: hash-split into ``n`` substreams, one sampler ``X`` each.

    ``X = P_r`` (default, ``H[P_r]_n``, sec. 3.5): a table of ``n`` counters; the
    tuple that brings its counter to ``r`` is sent as ``(key, r)`` and the counter
    resets. ``X = CR_r``: one LFSR (as in ``CR_r``) and ``n`` counters of
    ``count_bits``; a selected (or saturating) tuple is sent with its substream's
    count. ``X = R_r``: stateless, so one ``R_r`` serves every substream (no table,
    no hash: the paper's ``H[R_r]_n = R_r``).

    Parameters
    ----------
    rate : int
        ``r``, 2..65536.
    entries : int
        ``n`` counters (a power of two), in an ``amaranth.lib.memory.Memory`` of
        ``n x ceil(log2 r)`` bits (``n x count_bits`` for ``cr``).
    key_bits, pc_bits, hash_seed : int
        Tuple width, its pc field, table seed of the shared hash
        (:class:`hwprof.rtl.hashing.Hash`).
    sampler : str
        ``"periodic"`` (default), ``"cr"`` or ``"random"``.
    seed, count_bits : int
        LFSR reset state (``cr``, ``random``), counter width (``cr``).
    latency : int
        3 (default): the table in block RAM, read synchronously in the accept
        cycle, the counter in flops a cycle later, compare, increment and write
        back in the third cycle, the writes of the two tuples ahead forwarded
        (:class:`~hwprof.rtl.stream_pipeline.ReadModifyWrite`); for timing closure
        (docs/fpga.md). 1: read (asynchronously, LUT-RAM), updated and written in
        the accept cycle. ``H[R_r]_n`` has no table: latency 1 either way.
    skid : bool
        ``True``: a :class:`~hwprof.rtl.stream_pipeline.SkidBuffer` after the output
        register (``tuples.ready``, ``messages.valid`` registered; one more cycle).
    wrap_at : int, optional
        Mutant hook for the checker's own test: a periodic counter reports when it
        reaches ``wrap_at`` instead of ``r`` (default ``r``).
    bypass : bool
        ``False`` builds the mutant of ``latency=3`` without forwarding.

    Attributes
    ----------
    tuples : In(stream.Signature(key_bits))
    messages : Out(stream.Signature(message_layout(key_bits, count)))
        ``count`` is ``bits(r)`` wide (``count_bits`` for ``cr``).

    Latency: ``latency`` cycles (3 or 1; one more with ``skid``) from the tuple's
    acceptance to its message; one tuple per cycle. ``tuples.ready =
    ~messages.valid | messages.ready`` (combinational; with ``skid`` the skid
    buffer's registered ready stands for ``messages.ready``): every stage stalls
    only while a message waits.

    Raises
    ------
    TypeError, ValueError
        See :class:`hwprof.golden.samplers.StratifiedConfig`.
    """

    @classmethod
    def check_params(cls, rate, entries, key_bits, pc_bits, hash_seed, sampler, seed,
                     count_bits, latency, **options):  # fmt: skip
        check_latency(latency, (1, 3))
        return StratifiedConfig(rate, entries, key_bits, pc_bits, hash_seed, sampler, seed,
                                count_bits)  # fmt: skip

    def __init__(self, rate=256, entries=2048, key_bits=64, pc_bits=32, hash_seed=1,
                 sampler="periodic", seed=1, count_bits=16, latency=3, skid=False, *,
                 wrap_at=None, bypass=True):  # fmt: skip
        self.latency = latency
        self.skid = bool(skid)
        self.wrap_at = rate if wrap_at is None else wrap_at
        self.bypass = bypass
        width = count_bits if sampler == "cr" else self.config.rate.bit_length()
        super().__init__(key_bits, width)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        key = self.tuples.payload
        messages = message_output(m, self)
        if c.sampler != "periodic":
            lfsr, u = self._random(m, c.seed)
            selected = u < random_threshold(c.rate)
        if c.sampler == "random":
            accept = output_register(m, self.tuples, messages, selected, key, c.rate)
            m.d.comb += lfsr.enable.eq(accept)
            return m
        m.submodules.hash = h = Hash(c.index_bits, c.key_bits, c.hash_seed, c.pc_bits)
        m.d.comb += h.key.eq(key)
        width = c.count_bits if c.sampler == "cr" else max(1, c.counter_bits)
        m.submodules.counters = mem = Memory(shape=width, depth=c.entries, init=[])

        def update(counter, chosen):
            """``(emit, new counter, count)`` for a tuple that finds ``counter``."""
            if c.sampler == "periodic":
                fire = counter == self.wrap_at - 1
                return fire, Mux(fire, 0, counter + 1), c.rate
            plus = Signal(c.count_bits)
            m.d.comb += plus.eq(counter + 1)
            fire = chosen | (counter == (1 << c.count_bits) - 2)  # plus saturates
            return fire, Mux(fire, 0, plus), plus

        if self.latency == 1:
            rp = mem.read_port(domain="comb")
            wp = mem.write_port()
            fire, new, count = update(rp.data, selected if c.sampler == "cr" else 0)
            accept = output_register(m, self.tuples, messages, fire, key, count)
            m.d.comb += [rp.addr.eq(h.index), wp.addr.eq(h.index), wp.en.eq(accept),
                         wp.data.eq(new)]  # fmt: skip
            if c.sampler == "cr":
                m.d.comb += lfsr.enable.eq(accept)
            return m

        # latency 3: hash and synchronous (block RAM) read in the accept cycle, the
        # counter into flops, then compare, increment, write back and the message
        advance = Signal()
        m.d.comb += [advance.eq(~messages.valid | messages.ready),
                     self.tuples.ready.eq(advance)]  # fmt: skip
        carry = {"valid": self.tuples.valid, "key": key}
        if c.sampler == "cr":  # the LFSR decides at acceptance, in order
            m.d.comb += lfsr.enable.eq(advance & self.tuples.valid)
            carry["selected"] = selected
        rmw = ReadModifyWrite(m, [mem], h.index, advance, carry, bypass=self.bypass)
        fire, new, count = update(rmw.entries[0], rmw.s2.get("selected", 0))
        written = Signal(width)
        m.d.comb += written.eq(new)
        done = rmw.write(Const(1, 1), written)
        load_message(m, messages, done, fire, rmw.s2["key"], count)
        return m


class AssocTable(_Sampler):
    """``A_k``: associative table of ``k`` counters, a lossless second level (sec. 3.4).

    Parameters
    ----------
    entries : int
        ``k``, 1..64 (flops: ``k * (1 + key_bits + count_bits)``).
    key_bits, in_count_bits, count_bits : int
        Key width, input message count width, entry/output count width.

    Attributes
    ----------
    tuples : In(stream.Signature(message_layout(key_bits, in_count_bits)))
        Messages from the first-level compressor.
    messages : Out(stream.Signature(message_layout(key_bits, count_bits)))

    latency : int
        2 (default): the input key is compared with the ``k`` entries in the accept
        cycle and the match registered (with the entry the tuple ahead writes at
        the same edge forwarded); count update, entry write and message the cycle
        after. 1: all in the accept cycle.
    skid : bool
        ``True``: a :class:`~hwprof.rtl.stream_pipeline.SkidBuffer` after the output
        register (``tuples.ready``, ``messages.valid`` registered; one more cycle).
    forward : bool
        ``False`` builds the mutant of ``latency=2`` without forwarding.

    Rules: :class:`hwprof.golden.tagged.AssocTable` (hit accumulates, or reports
    the old count when it would overflow; miss fills the lowest free entry, else
    reports and replaces the round-robin victim). Latency ``latency`` cycles (one
    more with ``skid``), one message per cycle; ``tuples.ready = ~messages.valid |
    messages.ready`` (the skid buffer's registered ready with ``skid``).

    Raises
    ------
    TypeError, ValueError
        See :class:`hwprof.golden.tagged.AssocConfig`.
    """

    @classmethod
    def check_params(cls, entries, key_bits, in_count_bits, count_bits, latency, **options):
        check_latency(latency, (1, 2))
        return AssocConfig(entries, key_bits, in_count_bits, count_bits)

    def __init__(self, entries=16, key_bits=64, in_count_bits=9, count_bits=16, latency=2,
                 skid=False, *, forward=True):  # fmt: skip
        self.latency = latency
        self.skid = bool(skid)
        self.forward = forward
        super().__init__(key_bits, count_bits,
                         in_layout=message_layout(key_bits, in_count_bits))  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        c = self.config
        k = c.entries
        messages = message_output(m, self)
        valid = Signal(k)
        keys = [Signal(c.key_bits, name=f"key{i}") for i in range(k)]
        counts = [Signal(c.count_bits, name=f"count{i}") for i in range(k)]
        pointer = Signal(range(k))
        in_key = self.tuples.payload.key
        match_now = Signal(k)  # the input against the entries as they are now
        m.d.comb += match_now.eq(Cat(*[(keys[i] == in_key) & valid[i] for i in range(k)]))
        if self.latency == 1:
            key, inc, match = in_key, self.tuples.payload.count, match_now
        else:
            # latency 2: the key compares in the accept cycle, registered; the update a
            # cycle later. The update of the tuple ahead (same edge) is forwarded into
            # the registered match: the entry it writes (``target``) holds its key.
            advance = Signal()
            m.d.comb += [advance.eq(~messages.valid | messages.ready),
                         self.tuples.ready.eq(advance)]  # fmt: skip
            u_valid, key = Signal(), Signal(c.key_bits, name="u_key")
            inc, match = Signal(c.in_count_bits, name="u_inc"), Signal(k, name="u_match")
        hit_count = Signal(c.count_bits)
        # every entry's sum computed in parallel from the flops (no mux before the
        # adders); the hit entry's is used
        totals = [Signal(c.count_bits + 1, name=f"total{i}") for i in range(k)]
        overflow = Signal()  # the hit entry's total > 2**count_bits - 1
        for i in range(k):
            m.d.comb += totals[i].eq(counts[i] + inc)
            with m.If(match[i]):
                m.d.comb += [hit_count.eq(counts[i]), overflow.eq(totals[i][-1])]
        victim_key = Signal(c.key_bits)
        victim_count = Signal(c.count_bits)
        for i in range(k):
            with m.If(pointer == i):
                m.d.comb += [victim_key.eq(keys[i]), victim_count.eq(counts[i])]
        hit = match.any()
        full = valid.all()
        free = Signal(k)
        m.d.comb += free.eq(lowest_one(~valid))
        target = Signal(k)  # the entry this update writes
        m.d.comb += target.eq(Mux(hit, match, Mux(full, (Const(1, k) << pointer)[:k], free)))
        emit = Mux(hit, overflow, full)
        out_key = Mux(hit, key, victim_key)
        out_count = Mux(hit, hit_count, victim_count)
        if self.latency == 1:
            update = output_register(m, self.tuples, messages, emit, out_key, out_count)
        else:
            update = Signal()
            m.d.comb += update.eq(u_valid & advance)
            load_message(m, messages, update, emit, out_key, out_count)
            same = Signal()
            m.d.comb += same.eq(u_valid & (in_key == key) & self.forward)
            with m.If(advance):
                m.d.sync += [u_valid.eq(self.tuples.valid), key.eq(in_key),
                             inc.eq(self.tuples.payload.count)]  # fmt: skip
                with m.If(same):
                    m.d.sync += match.eq(target)
                with m.Elif(u_valid & self.forward):
                    m.d.sync += match.eq(match_now & ~target)
                with m.Else():
                    m.d.sync += match.eq(match_now)
        with m.If(update):
            for i in range(k):
                with m.If(target[i]):
                    with m.If(hit):
                        m.d.sync += counts[i].eq(Mux(totals[i][-1], inc, totals[i]))
                    with m.Else():
                        m.d.sync += [valid[i].eq(1), keys[i].eq(key), counts[i].eq(inc)]
            with m.If(~hit & full):
                m.d.sync += pointer.eq(Mux(pointer == k - 1, 0, pointer + 1))
        return m


class MessageBuffer(Checked, wiring.Component):
    """Interrupt message buffer (sec. 2.2): a FIFO of ``depth`` messages.

    Parameters
    ----------
    depth : int
        Messages, 1..4096 (default 100), an ``amaranth.lib.fifo.SyncFIFO``.
    key_bits, count_bits : int
        Message layout.

    Attributes
    ----------
    tuples : In(stream.Signature(message_layout(key_bits, count_bits)))
        Messages in; ``ready = level < depth``.
    messages : Out(stream.Signature(message_layout(key_bits, count_bits)))
        The head message for software (``valid = level > 0``; combinational).
    irq : Out(1)
        Interrupt line (``irq``; "interrupt" is reserved in Verilator's C++): ``level ==
        depth``, the buffer is full and software must drain it.

    Raises
    ------
    TypeError, ValueError
        On a bad ``depth``.
    """

    @classmethod
    def check_params(cls, depth, key_bits, count_bits):
        check_int("depth", depth, 1, 4096)
        check_int("key_bits", key_bits, 1, 128)
        check_int("count_bits", count_bits, 1, 32)
        return depth

    def __init__(self, depth=100, key_bits=64, count_bits=16):
        self.depth = depth
        layout = message_layout(key_bits, count_bits)
        super().__init__({
            "tuples": In(stream.Signature(layout)),
            "messages": Out(stream.Signature(layout)),
            "irq": Out(1),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = SyncFIFO(width=len(self.tuples.payload.as_value()),
                                            depth=self.depth)  # fmt: skip
        m.d.comb += [
            fifo.w_data.eq(self.tuples.payload.as_value()),
            fifo.w_en.eq(self.tuples.valid),
            self.tuples.ready.eq(fifo.w_rdy),
            self.messages.valid.eq(fifo.r_rdy),
            self.messages.payload.as_value().eq(fifo.r_data),
            fifo.r_en.eq(self.messages.ready),
            self.irq.eq(fifo.level == self.depth),
        ]
        return m


#: ``StratifiedPipeline``'s default ``skid``.
SKID_DEFAULT = False


class StratifiedPipeline(Checked, wiring.Component):
    """``H[P_r]_n A_k`` followed by the message buffer: three chained components.

    Parameters
    ----------
    rate, entries, key_bits, pc_bits, hash_seed : int
        Of the stratified sampler (:class:`Stratified`).
    assoc_entries, count_bits : int
        ``k`` and the count width of ``A_k`` (its input count is ``bits(r)``).
    depth : int
        Message buffer depth (default 100).
    skid : bool
        ``True``: ``H[P]`` and ``A_k`` each end in a skid buffer (their ``skid``
        option), so the ``ready`` chain from the buffer stops at each stage's
        registered ready; one more cycle in each.

    Attributes
    ----------
    tuples : In(stream.Signature(key_bits))
    messages : Out(stream.Signature(message_layout(key_bits, count_bits)))
        Software's side of the buffer.
    irq : Out(1)
        The buffer is full.

    Latency: a message leaves ``H[P]`` three cycles after its tuple (its default
    ``latency=3``), ``A_k`` two cycles later (``latency=2``), and is at the buffer
    head the cycle after that: 6 cycles. ``ready`` is combinational from the
    buffer back to ``tuples`` (from the buffer's level, a register; no path from
    ``messages.ready``): the input stalls when a stage's output register holds a
    message that the next stage cannot take, i.e. only once the buffer is full
    (interrupt pending) and the registers behind it have filled.
    """

    @classmethod
    def check_params(cls, rate, entries, key_bits, pc_bits, hash_seed, assoc_entries,
                     count_bits, depth, skid):  # fmt: skip
        return (StratifiedConfig(rate, entries, key_bits, pc_bits, hash_seed),
                AssocConfig(assoc_entries, key_bits, rate.bit_length(), count_bits),
                MessageBuffer.check(depth, key_bits, count_bits))  # fmt: skip

    def __init__(self, rate=256, entries=2048, key_bits=64, pc_bits=32, hash_seed=1,
                 assoc_entries=16, count_bits=16, depth=100, skid=SKID_DEFAULT):  # fmt: skip
        self.stratified = Stratified(rate, entries, key_bits, pc_bits, hash_seed, skid=skid)
        self.assoc = AssocTable(assoc_entries, key_bits, rate.bit_length(), count_bits,
                                skid=skid)  # fmt: skip
        self.buffer = MessageBuffer(depth, key_bits, count_bits)
        super().__init__({
            "tuples": In(stream.Signature(key_bits)),
            "messages": Out(stream.Signature(message_layout(key_bits, count_bits))),
            "irq": Out(1),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        m.submodules.stratified = s = self.stratified
        m.submodules.assoc = a = self.assoc
        m.submodules.buffer = b = self.buffer
        wiring.connect(m, wiring.flipped(self.tuples), s.tuples)
        wiring.connect(m, s.messages, a.tuples)
        wiring.connect(m, a.messages, b.tuples)
        wiring.connect(m, b.messages, wiring.flipped(self.messages))
        m.d.comb += self.irq.eq(b.irq)
        return m
