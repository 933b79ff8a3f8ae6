"""A test-only top holding one LFSR of every brr width (16..32) in both forms.

One Verilator build checks the LFSR library at every width the brr uses.
Ports: ``enable``, ``load``, ``load_data[31:0]`` (each LFSR takes its low bits),
and ``state_<form>_<width>`` per LFSR.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hwprof.golden.brr import MAX_WIDTH, MIN_WIDTH
from hwprof.golden.lfsr import FORMS
from hwprof.rtl.lfsr import Lfsr

BANK = [(form, width) for form in FORMS for width in range(MIN_WIDTH, MAX_WIDTH + 1)]


def bank_params(form, width):
    """Galois LFSRs make 2 steps per cycle, so the multi-step path is covered too."""
    return {"width": width, "form": form, "steps": 2 if form == "galois" else 1,
            "seed": (0x9E3779B9 % (2**width - 1)) + 1}  # fmt: skip


class LfsrBank(wiring.Component):
    def __init__(self):
        members = {"enable": In(1), "load": In(1), "load_data": In(MAX_WIDTH)}
        for form, width in BANK:
            members[f"state_{form}_{width}"] = Out(width)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for form, width in BANK:
            lfsr = Lfsr(**bank_params(form, width))
            m.submodules[f"{form}_{width}"] = lfsr
            m.d.comb += [
                lfsr.enable.eq(self.enable),
                lfsr.load.eq(self.load),
                lfsr.load_data.eq(self.load_data[:width]),
                getattr(self, f"state_{form}_{width}").eq(lfsr.state),
            ]
        return m
