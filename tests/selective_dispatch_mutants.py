"""Mutants of the selective-dispatch RTL that the pysim and cocotb checks must catch."""

from amaranth.hdl import Cat, Const, Module
from amaranth.lib import wiring

from hwprof.rtl.dispatch_filter import DispatchFilter
from hwprof.rtl.profile_flag_predictor import ProfileFlagPredictor


class NoPopHazard(DispatchFilter):
    """A flag reader after a poppf in the same cycle does not stall."""

    def _hazard(self, reads, popped, onehot):
        return 0


class NoOverflowTrap(DispatchFilter):
    """A pushpf on a full stack raises nothing (and its push is lost)."""

    def _full(self, sp, depth):
        return 0


class LockIgnored(ProfileFlagPredictor):
    """Entries are read (skipped) while still locked."""

    def _readable(self, entry):
        return ~entry.pred


class UntypedLeaderRTL(ProfileFlagPredictor):
    """The leader register ignores the profile type (the bug of issue 12)."""

    def _new_leader(self, leader_valid, leader_k, k):
        return ~leader_valid


class ValidGatedOutputs(ProfileFlagPredictor):
    """skip/not_taken gated by fetch_valid: a combinational path fetch_valid -> skip."""

    def _output_gate(self, lane_valid):
        return lane_valid


class GreaterFault(ProfileFlagPredictor):
    """One ``_greater`` comparison tree of the predictor with one node wrong.

    ``call``: which tree, in the order ``elaborate`` builds them (``gt_new`` of lane i
    against j < i, then ``gt_first`` per lane, then ``gt_way`` per lane and way: at 4
    lanes and 2 ways, call 1 is lane 2 against lane 0, call 15 lane 2's ``nxt``
    against way 1's stored follow). ``span``: the (low, high) word bits of the upper
    half whose equality gates the lower half's compare. ``force``: None (that
    equality is always true), ``"inv"`` (inverted) or ``(bit, value)``: the second
    operand's ``bit`` forced to ``value`` in that equality only (the kind of faults
    yosys ``mutate`` makes).
    ``leaf``: ``(bit, value)``: in the compare of that one bit, ``a & ~b``, the
    ``~b`` forced to ``value`` (0: the compare is 0; 1: it is ``a``).
    """

    def __init__(self, *, call, span=None, force=None, leaf=None, **params):
        super().__init__(**params)
        self._fault = call, span, force, leaf

    def elaborate(self, platform):
        from hwprof.rtl import profile_flag_predictor as module

        call, span, force, leaf = self._fault
        original, calls = module._greater, []

        def tree(a, b, span, low=0, leaf=None):  # module._greater's (its recursion is patched)
            if len(a) == 1:
                if leaf is not None and low == leaf[0]:
                    return a[0] if leaf[1] else Const(0)
                return a[0] & ~b[0]
            half = len(a) // 2
            upper_a, upper_b = a[half:], b[half:]
            same = upper_a == upper_b
            if (low + half, low + len(a)) == span:
                if force is None:
                    same = Const(1)
                elif force == "inv":
                    same = ~same
                else:
                    bit, value = force
                    forced = Cat(Const(value, 1) if low + half + n == bit else upper_b[n]
                                 for n in range(len(upper_b)))  # fmt: skip
                    same = upper_a == forced
            return (tree(upper_a, upper_b, span, low + half, leaf)
                    | (same & tree(a[:half], b[:half], span, low, leaf)))

        def counted(a, b):
            calls.append(None)
            if len(calls) - 1 == call:
                return tree(a, b, span, leaf=leaf)
            return tree(a, b, None)

        module._greater = counted
        try:
            return super().elaborate(platform)
        finally:
            module._greater = original
            self.greater_calls = len(calls)


class PiAlwaysDispatched(DispatchFilter):
    """Every PI is dispatched whatever its flag (decode never takes a word for a PI)."""

    def _decode(self, m, i, n):
        ln = super()._decode(m, i, n)
        ln["is_pi"] = Const(0)
        return ln


class ExceptionsSwapped(wiring.Component):
    """``PiAlwaysDispatched`` whose ``overflow`` and ``underflow`` outputs are swapped:
    in the system, a flag-stack overflow gets ``mcause`` 25 and an underflow 24."""

    def __init__(self, **params):
        self.inner = PiAlwaysDispatched(**params)
        super().__init__(self.inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self.inner
        swap = {"overflow": "underflow", "underflow": "overflow"}
        ours = {path: value for path, _, value in self.signature.flatten(self)}
        for path, member, value in inner.signature.flatten(inner):
            if member.flow == wiring.In:
                m.d.comb += value.eq(ours[path])
            else:
                m.d.comb += ours[(swap.get(path[0], path[0]), *path[1:])].eq(value)
        return m
