"""Every catalog top generates Verilog and synthesizes; the area flow counts right."""

import pytest
from amaranth.hdl import Fragment, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from hwprof.catalog import TOPS
from hwprof.report import area_record, format_table
from hwprof.synth import synthesize, to_verilog

# The fast tier synthesizes each top once; these tops at a smaller size (their
# defaults take 1-2 minutes of yosys, and `make` synthesizes them in the report).
SMALLER = {
    "multihash": {"tables": 2, "counters": 128, "accumulator": 4, "pc_bits": 16, "value_bits": 16},
}


def check_synthesizes(top, variant):
    component = top.construct(variant)
    assert f"module {top.name}(" in to_verilog(component, top.name)
    record = area_record(top, top.resolve(variant), component)
    assert record["gates"] > 0 and record["transistors"] > 0
    assert f"| {top.name} |" in format_table([record])


@pytest.mark.parametrize("name", sorted(TOPS))
def test_every_top_generates_and_synthesizes(name):
    check_synthesizes(TOPS[name], SMALLER.get(name, TOPS[name].variants[0]))


@pytest.mark.soak
@pytest.mark.parametrize("name", sorted(TOPS))
def test_every_report_variant_synthesizes(name):
    """What `make` (hwprof report) does; soak only, as the fast tier covers each top."""
    for variant in TOPS[name].variants:
        check_synthesizes(TOPS[name], variant)


class RegisteredRam(wiring.Component):
    """64 x 8 memory, one synchronous read port, one write port, and a 3-bit counter."""

    def __init__(self):
        super().__init__({"addr": In(6), "data": In(8), "we": In(1), "q": Out(8)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=8, depth=64, init=[])
        write, read = mem.write_port(), mem.read_port()
        count = Signal(3)
        m.d.sync += count.eq(count + 1)
        m.d.comb += [
            write.addr.eq(self.addr), write.data.eq(self.data), write.en.eq(self.we),
            read.addr.eq(self.addr + count), self.q.eq(read.data),
        ]  # fmt: skip
        return m


def test_memory_counted_as_memory_bits_not_flops():
    area = synthesize(to_verilog(RegisteredRam(), "ram"), "ram")
    assert area["memory_bits"] == 64 * 8
    assert area["flops"] == 3  # the counter; the array is not flops
    assert area["gates"] > 0


def test_brr_area_is_in_the_papers_budget():
    """Paper: ~20 state bits and < 100 gates for a single-issue unit."""
    top = TOPS["brr"]
    for variant in ({}, {"lockup_escape": False}):
        record = area_record(top, top.resolve(variant), top.construct(variant))
        assert record["flops"] == 20 and record["gates"] < 100, record


@pytest.mark.parametrize("name", sorted(n for n, t in TOPS.items() if t.slow_variants))
def test_slow_variants_are_valid_parameter_sets(name):
    """`hwprof report --all` synthesizes them; here only that they elaborate."""
    top = TOPS[name]
    for variant in top.slow_variants:
        assert Fragment.get(top.construct(variant), None) is not None


class _ByteRom(wiring.Component):
    """One hash byte table through :func:`hwprof.rtl.hashing.rom_switch`."""

    def __init__(self, step):
        self.step = step
        super().__init__({"addr": In(8), "q": Out(8)})

    def elaborate(self, platform):
        from hwprof.golden.hashing import make_tables
        from hwprof.rtl.hashing import rom_switch

        m = Module()
        table = make_tables(1, 32, 0)[0][0]
        m.d.comb += self.q.eq(rom_switch(m, table, self.addr, "rom", step=self.step))
        return m


@pytest.mark.parametrize("step", [2, 4])
def test_switch_rom_is_logic_not_memory(step):
    """Nested 4-way switches stay logic in yosys (proc_rom takes a switch of at least 8
    cases without nested switches as a ROM): no memory bits. With 16-way switches the
    inner ones become ROMs, which this check reports."""
    area = synthesize(to_verilog(_ByteRom(step), "rom"), "rom")
    if step == 2:
        assert area["memory_bits"] == 0 and area["gates"] > 0
    else:
        assert area["memory_bits"] > 0
