"""Random fetch-queue heads for the dispatch filter (the Amaranth and cocotb checks).

Unlike the front-end programs, these reach every lane position of every event:
a flag-stack overflow or underflow in lane 0 (random restored checkpoints put the
stack pointer anywhere, full and empty included), addresses of the full width
(``redirect_pc``'s high bits), any mix of PCIs and PIs of every flag.
"""

from __future__ import annotations

from hwprof.golden.dispatch import Lane
from hwprof.golden.isa_profile import PCI_OPS, PI_OPS, Insn, encode


def random_steps(rng, config, cycles, pci_share=0.35, stack_only=False):
    """``cycles`` of ``(lanes, squash, restore)``: random heads, each word a PCI with
    probability ``pci_share``, else a PI of any k (60 %) or an ordinary word; squashes
    with random checkpoints on 5 % of cycles. ``stack_only``: the PCIs are pushpf and
    poppf of existing flags only (the stack moves by up to W entries every cycle)."""
    ks = config.n_flags if stack_only else min(config.n_flags + 1, 8)  # beyond n_flags too
    ops = ("pushpf", "poppf") if stack_only else PCI_OPS
    pi_share = pci_share + (1 - pci_share) * 0.6

    def word():
        r = rng.random()
        if r < pci_share:
            return encode(Insn("pci", rng.choice(ops), k=rng.randrange(ks)))
        if r < pi_share:
            return encode(Insn("pi", rng.choice(PI_OPS), k=rng.randrange(ks)))
        return 0x13

    for _ in range(cycles):
        valid = rng.randrange(config.lanes + 1)
        lanes = [Lane(1, word(), rng.getrandbits(config.addr_width), rng.getrandbits(1),
                      int(rng.random() < 0.2)) for _ in range(valid)]  # fmt: skip
        squash = int(rng.random() < 0.05)
        yield lanes, squash, rng.getrandbits(config.ckpt_width) if squash else 0
