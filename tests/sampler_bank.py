"""Test-only wrapper: several small samplers side by side in one Verilog top, so the
cocotb tier needs one Verilator build for all of them (``sampler_bank``)."""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring

from hwprof.rtl import samplers as rs

#: channel -> (catalog top name, parameters); small rates so messages are frequent.
BANK = {
    "random": ("sampler_random", {"rate": 4, "key_bits": 40, "seed": 77}),
    "countdown": ("sampler_countdown", {"rate": 5, "key_bits": 40, "seed": 5}),
    "periodic": ("sampler_periodic", {"rate": 7, "key_bits": 40}),
    "counter": ("sampler_counter", {"count_bits": 4, "key_bits": 40}),
    "cr": ("sampler_cr", {"rate": 6, "count_bits": 4, "key_bits": 40, "seed": 3}),
    "strat": ("stratified", {"rate": 5, "entries": 16, "key_bits": 40, "pc_bits": 8,
                             "hash_seed": 4}),
    "hcr": ("stratified", {"rate": 4, "entries": 8, "key_bits": 40, "pc_bits": 8,
                           "hash_seed": 2, "sampler": "cr", "seed": 9, "count_bits": 4}),
}  # fmt: skip

_RTL = {
    "sampler_random": rs.RandomSampler,
    "sampler_countdown": rs.CountdownSampler,
    "sampler_periodic": rs.PeriodicSampler,
    "sampler_counter": rs.Counter,
    "sampler_cr": rs.CountingRandomSampler,
    "stratified": rs.Stratified,
}


class SamplerBank(wiring.Component):
    """Ports ``<channel>_tuples`` / ``<channel>_messages`` for every entry of ``BANK``."""

    def __init__(self, bank=None, overrides=None):
        self.bank = bank or BANK
        self.units = {}
        members = {}
        for prefix, (kind, params) in self.bank.items():
            extra = (overrides or {}).get(prefix, {})
            unit = _RTL[kind](**params, **extra)
            self.units[prefix] = unit
            members[f"{prefix}_tuples"] = unit.signature.members["tuples"]
            members[f"{prefix}_messages"] = unit.signature.members["messages"]
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for prefix, unit in self.units.items():
            m.submodules[prefix] = unit
            wiring.connect(m, wiring.flipped(getattr(self, f"{prefix}_tuples")), unit.tuples)
            wiring.connect(m, unit.messages, wiring.flipped(getattr(self, f"{prefix}_messages")))
        return m
