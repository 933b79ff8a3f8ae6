"""An ISA-level reference of selective dispatch, written from the paper alone.

Vaswani, Srikant & Thazhuthaveetil, sec. III-A, III-B.1 and V, read as
sequential semantics, one instruction at a time, with no pipeline, no decode
lanes, no hardware stack bound and no predictor:

* there are ``n_flags`` profile flags, all 0 at the start (a flag operand
  ``k >= n_flags`` names no flag: it reads 0 and PCIs on it do nothing);
* ``setpf k`` / ``resetpf k`` set / reset flag ``k``;
* ``pushpf k`` pushes flag ``k`` onto the runtime stack, which has no bound;
  ``poppf k`` pops the top into flag ``k`` (a pop of an empty stack, which a
  balanced program never does, leaves flag ``k`` reset: profiling off);
* a profile instruction of type ``k`` executes iff flag ``k`` is set; an
  ordinary instruction always executes. PCIs act on the flags and are not
  executed by the back end.

It shares nothing with :mod:`hwprof.golden.dispatch` (no ``DispatchFilter``,
no checkpoints); only the instruction encoding (:mod:`hwprof.golden.isa_profile`)
and the program's branch outcomes, which are data the ISA does not define, come
from outside: ``outcomes[pc]`` lists the direction (1 taken) of each executed
instance of the control transfer at ``pc``, in order.
"""

from __future__ import annotations

from .isa_profile import decode

__all__ = ["reference_stream"]


def reference_stream(program, n_flags: int, outcomes: dict[int, list[int]],
                     count: int) -> list[int]:
    """Addresses of the first ``count`` executed non-PCI instructions, in order.

    ``program`` has ``entry``, ``word(pc)`` and ``targets`` (the target of every
    control transfer). Stops early if a transfer's outcomes run out (the caller
    compares lengths too).
    """
    flags = [0] * n_flags
    stack: list[int] = []
    seen: dict[int, int] = {}
    executed: list[int] = []
    pc = program.entry
    while len(executed) < count:
        insn = decode(program.word(pc))
        nxt = pc + 4
        if insn.kind == "pci":
            k = insn.k
            if k < n_flags:
                if insn.op == "setpf":
                    flags[k] = 1
                elif insn.op == "resetpf":
                    flags[k] = 0
                elif insn.op == "pushpf":
                    stack.append(flags[k])
                else:
                    flags[k] = stack.pop() if stack else 0
        elif insn.kind != "pi" or (insn.k < n_flags and flags[insn.k]):
            executed.append(pc)
            if pc in program.targets:
                n = seen.get(pc, 0)
                directions = outcomes.get(pc, [])
                if n >= len(directions):
                    break
                seen[pc] = n + 1
                if directions[n]:
                    nxt = program.targets[pc]
        pc = nxt
    return executed
