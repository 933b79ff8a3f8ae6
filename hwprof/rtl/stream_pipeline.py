"""Pieces shared by the pipelined stream compressors (stratified sampler, tagged
compressor, ``A_k``): the three-stage read-modify-write of a table in block RAM
with forwarding, a registered output handshake (skid buffer), and the output
register that loads on every update.

Timing closure on an FPGA (docs/fpga.md): a memory read asynchronously becomes
LUT-RAM with deep read muxes, and the read -> update -> write path of one cycle
sets the clock. :class:`ReadModifyWrite` reads synchronously (block RAM), puts the
read data in flops and updates a cycle later, forwarding the two writes that a
read issued in the accept cycle cannot see.
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["SkidBuffer", "ReadModifyWrite", "message_output", "load_message"]


class SkidBuffer(wiring.Component):
    """Two-entry skid buffer: a stream stage whose handshake outputs are flops.

    Parameters
    ----------
    layout : shape
        The payload shape.
    keep_spare : bool
        ``True``. ``False`` builds the mutant that loses the payload it should hold
        in the skid register, for the handshake test's own check.

    Attributes
    ----------
    tuples : In(stream.Signature(layout))
        ``ready = ~skid_valid`` (a register).
    messages : Out(stream.Signature(layout))
        ``valid`` and ``payload`` are registers.

    Latency: 1 cycle (a payload taken in cycle c is shown from c + 1); one payload
    per cycle. No combinational path from ``messages.ready`` to ``tuples.ready``
    or from ``tuples.valid`` to ``messages.valid``. A payload that arrives while
    the output is held waits in the skid register; ``tuples.ready`` is low while
    it is full. Golden model: :class:`hwprof.golden.samplers.SkidBuffer`.
    """

    def __init__(self, layout, *, keep_spare=True):
        self.keep_spare = keep_spare  # False: the mutant that loses the skid register
        super().__init__({
            "tuples": In(stream.Signature(layout)),
            "messages": Out(stream.Signature(layout)),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        spare_valid = Signal()
        spare = Signal.like(self.tuples.payload)
        accept = Signal()
        m.d.comb += [
            self.tuples.ready.eq(~spare_valid),
            accept.eq(self.tuples.valid & ~spare_valid),
        ]
        with m.If(~self.messages.valid | self.messages.ready):  # main register free
            with m.If(spare_valid):
                m.d.sync += [self.messages.payload.eq(spare), self.messages.valid.eq(1),
                             spare_valid.eq(0)]  # fmt: skip
            with m.Elif(accept):
                m.d.sync += [self.messages.payload.eq(self.tuples.payload),
                             self.messages.valid.eq(1)]  # fmt: skip
            with m.Else():
                m.d.sync += self.messages.valid.eq(0)
        with m.Elif(accept):
            m.d.sync += [spare.eq(self.tuples.payload), spare_valid.eq(int(self.keep_spare))]
        return m


def message_output(m, component):
    """The message stream ``component``'s logic drives: ``component.messages`` itself,
    or, with ``component.skid``, the input of a :class:`SkidBuffer` in front of it."""
    if not component.skid:
        return component.messages
    m.submodules.skid = skid = SkidBuffer(component.messages.payload.shape())
    wiring.connect(m, skid.messages, wiring.flipped(component.messages))
    return skid.tuples


def load_message(m, source, update, emit, key, count):
    """The output register of a pipelined stage: loads on every ``update`` (the
    register is then free: the message it held, if any, is being taken), so its
    enable does not wait for ``emit``; ``valid`` says whether it holds a message."""
    with m.If(source.ready):
        m.d.sync += source.valid.eq(0)
    with m.If(update):
        m.d.sync += [
            source.valid.eq(emit),
            source.payload.key.eq(key),
            source.payload.count.eq(count),
        ]


class ReadModifyWrite:
    """Three stages around synchronous reads of ``memories`` (one word per memory
    at one index), advancing together on ``advance``.

    S0 (the accept cycle): the read of ``index`` is issued; ``carry`` (a dict of
    values, ``"valid"`` among them) is taken along. S1: the read data into flops
    (nothing else after the block RAM's clock-to-output). S2: the caller computes
    the update from :attr:`entries` and calls :meth:`write`. A read misses the
    writes of the two tuples ahead of it; the older one's is forwarded at the S1 ->
    S2 capture, the newer one's at the S2 input, both from the previous S2 write
    held in registers (``last``), so the forwarding muxes select on flops.

    Attributes
    ----------
    s2 : dict of Signal
        The carried values and ``index`` of the tuple in S2.
    entries : list of Signal
        The word of each memory at ``s2["index"]`` as the writes of every earlier
        tuple left it: the previous S2 write where S2 reads the word it wrote (a
        select from flops), else the word captured at S1 -> S2.
    words : list of Signal
        The word of each memory captured at S1 -> S2 (flops; the older write
        forwarded, not the newer one).
    last_new : Signal
        The previous S2 write (a flop).
    forwarded : Signal
        One bit per memory: S2's entry of that memory is ``last_new``, not its word
        (one-hot or zero; flops of their own, set by :meth:`write`): ``entries[w] =
        last_new if forwarded[w] else words[w]``. A caller may compute from ``words``
        and ``last_new`` in parallel and select late instead of reading ``entries``.
    """

    def __init__(self, m, memories, index, advance, carry, *, bypass=True):
        self._m = m
        shape = memories[0].shape
        fields = {**carry, "index": index}
        self.s1 = {k: Signal.like(v, name=f"s1_{k}") if isinstance(v, Signal)
                   else Signal(len(v), name=f"s1_{k}") for k, v in fields.items()}  # fmt: skip
        self.s2 = {k: Signal.like(v, name=f"s2_{k}") for k, v in self.s1.items()}
        ways = len(memories)
        self._words = [Signal(shape, name=f"s2_word{w}") for w in range(ways)]
        self._last_valid, self._last_index = Signal(), Signal.like(self.s1["index"])
        self._last_way, self._last_new = Signal(ways), Signal(shape)
        self._after_last = Signal()  # S2 reads the word ``last`` wrote (compared a cycle early)
        self._forward = Const(int(bypass))  # 0: the mutant without forwarding
        self._advance = advance
        self._write_ports = [mem.write_port() for mem in memories]
        self._read_ports = [mem.read_port() for mem in memories]  # not transparent: old data
        for rp, wp in zip(self._read_ports, self._write_ports, strict=True):
            m.d.comb += [rp.addr.eq(index), rp.en.eq(advance), wp.addr.eq(self.s2["index"])]
        self.words, self.last_new = self._words, self._last_new
        self.forwarded = Signal(ways)  # registered by :meth:`write`
        self.entries = []
        for w in range(ways):
            entry = Signal(shape, name=f"entry{w}")
            # S2's entry is the previous S2 write (a flop), not the word read
            with m.If(self._after_last & self._last_way[w]):
                m.d.comb += entry.eq(self._last_new)
            with m.Else():
                m.d.comb += entry.eq(self._words[w])
            self.entries.append(entry)
        with m.If(advance):
            m.d.sync += [self.s1[k].eq(v) for k, v in fields.items()]
            m.d.sync += [self.s2[k].eq(self.s1[k]) for k in self.s1]

    def write(self, onehot, new):
        """S2 writes ``new`` into the memories selected by ``onehot`` when it advances."""
        m, s1, s2 = self._m, self.s1, self.s2
        update = Signal()
        m.d.comb += update.eq(s2["valid"] & self._advance)
        for w, wp in enumerate(self._write_ports):
            m.d.comb += [wp.en.eq(update & onehot[w]), wp.data.eq(new)]
        forward = self._forward
        # the tuple in S2 now is ``last`` when S1's reaches S2
        same = Signal()
        m.d.comb += same.eq(forward & s2["valid"] & (s2["index"] == s1["index"]))
        with m.If(self._advance):
            m.d.sync += [self._last_valid.eq(s2["valid"]), self._last_index.eq(s2["index"]),
                         self._last_way.eq(onehot), self._last_new.eq(new)]  # fmt: skip
            m.d.sync += [self._after_last.eq(same),
                         self.forwarded.eq(onehot & same.replicate(len(onehot)))]
            for w, rp in enumerate(self._read_ports):
                with m.If(forward & self._last_valid & (self._last_index == s1["index"])
                          & self._last_way[w]):  # fmt: skip
                    m.d.sync += self._words[w].eq(self._last_new)
                with m.Else():
                    m.d.sync += self._words[w].eq(rp.data)
        return update
