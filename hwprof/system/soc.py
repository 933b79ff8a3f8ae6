"""The RISC-V system: patched PicoRV32, Wishbone bus, RAM, and the CSR window.

::

    PicoRV32 (hwprof_picorv32) --native mem--> Wishbone B4 classic master
       |  brr_valid/freq ^ taken            |-- 0x0000_0000 RAM (Ram)
       v                 |                  |-- 0x1000_0000 CSR window (Peripherals):
      brr unit (catalog top `brr`) <--------'     amaranth-soc WishboneCSRBridge -> csr.Bridge
                                                  console (PUTC, EXIT), brr (STATE, RETIRED, TAKEN)
                                                  any other address: bus error

The register map is :data:`hwprof.system.regmap.BLOCKS`; each block's fields are
wired by its function in :data:`ATTACH`.
"""

from __future__ import annotations

import re

from amaranth.hdl import ClockDomain, ClockSignal, Const, Instance, Module, Mux, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..catalog import get_top
from .core import CORE_MODULE, CORE_PARAMETERS
from .dispatch import TrapCsrs, base_word, build_filter
from .dispatch import attach as attach_dispatch
from .profiler import MultiHashPeripheral, RetiredLoads
from .profiler import attach as attach_profiler
from .regmap import BLOCKS, CSR_ADDR_WIDTH, CSR_BASE, PROFILER_BLOCK, RAM_BASE, build_registers

__all__ = ["Ram", "Peripherals", "System", "ATTACH", "DEFAULT_RAM_SIZE"]

#: RAM bytes of the default system.
DEFAULT_RAM_SIZE = 128 * 1024
#: The console's strobes: outputs of the CSR window and of the system, the same.
_CONSOLE_PORTS = {"console_valid": Out(1), "console_data": Out(8), "exit_valid": Out(1),
                  "exit_code": Out(32)}  # fmt: skip
#: Ports of both the system and its CSR window: the LFSR load (the run's seed), the console.
_PASSED_PORTS = {"lfsr_load_valid": In(1), "lfsr_load_data": In(32), **_CONSOLE_PORTS}


def _wishbone(addr_width, granularity):
    from luna_soc.gateware.vendor.amaranth_soc import wishbone

    return wishbone.Signature(addr_width=addr_width, data_width=32, granularity=granularity)


class Ram(wiring.Component):
    """Wishbone RAM (32-bit, byte select) with a boot write port.

    Parameters
    ----------
    size : int
        Bytes, a power of two, at least 4.

    Attributes
    ----------
    bus : In(wishbone.Signature(addr_width=log2(size/4), data_width=32, granularity=8))
        Wishbone B4 classic subordinate; ``ack`` one cycle after ``cyc & stb``.
    boot_valid, boot_addr, boot_data : In
        Write ``boot_data`` to word ``boot_addr`` (used while the core is held in reset).
    init : list of int
        Contents at power-up, one 32-bit word per entry from address 0 (default empty:
        all zero); a board's system sets it to the program's image.

    Latency: 1 cycle (registered read data and ``ack``).
    """

    def __init__(self, size):
        if not isinstance(size, int) or size < 4 or size & (size - 1):
            raise ValueError(f"ram size must be a power of two of at least 4 bytes, not {size!r}")
        self.size = size
        self.init = []
        abits = (size // 4 - 1).bit_length()
        super().__init__({
            "bus": In(_wishbone(abits, 8)),
            "boot_valid": In(1),
            "boot_addr": In(abits),
            "boot_data": In(32),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=32, depth=self.size // 4, init=self.init)
        rd = mem.read_port()
        wr = mem.write_port(granularity=8)
        active = self.bus.cyc & self.bus.stb & ~self.bus.ack
        m.d.sync += self.bus.ack.eq(active)
        m.d.comb += [rd.addr.eq(self.bus.adr), self.bus.dat_r.eq(rd.data)]
        with m.If(self.boot_valid):
            m.d.comb += [wr.addr.eq(self.boot_addr), wr.data.eq(self.boot_data), wr.en.eq(0b1111)]
        with m.Elif(active & self.bus.we):
            m.d.comb += [wr.addr.eq(self.bus.adr), wr.data.eq(self.bus.dat_w),
                         wr.en.eq(self.bus.sel)]  # fmt: skip
        return m


def _attach_console(m, regs, p):
    putc, code = regs["console", "PUTC"].f, regs["console", "EXIT"].f
    m.d.comb += [
        p.console_valid.eq(putc.w_stb), p.console_data.eq(putc.w_data),
        p.exit_valid.eq(code.w_stb), p.exit_code.eq(code.w_data),
    ]  # fmt: skip


def _attach_brr(m, regs, p):
    brr = p.brr
    m.submodules.brr = brr
    state, retired, taken = (regs["brr", n].f for n in ("STATE", "RETIRED", "TAKEN"))
    width = len(brr.state)
    m.d.comb += [
        brr.decode_valid.eq(p.brr_valid),
        brr.freq.eq(p.brr_freq),
        p.brr_taken.eq(brr.taken),
        state.r_data.eq(brr.state),
        brr.load_valid.eq(state.w_stb | p.lfsr_load_valid),
        brr.load_data.eq(Mux(state.w_stb, state.w_data[:width], p.lfsr_load_data[:width])),
        p.lfsr_state.eq(brr.state),
        p.lfsr_load.eq(brr.load_valid),
        p.lfsr_load_data_out.eq(brr.load_data),
    ]
    for reg, event in ((retired, p.brr_valid), (taken, p.brr_valid & brr.taken)):
        count = Signal(32)
        m.d.comb += reg.r_data.eq(count)
        with m.If(reg.w_stb):
            m.d.sync += count.eq(reg.w_data)
        with m.Elif(event):
            m.d.sync += count.eq(count + 1)


def _attach_multihash(m, regs, p):
    # the profiler's clock domain: the system clock, the input prof_clk (own_clock), or
    # one the design above defines (``prof_clock_external``)
    if not p.prof_clock_external:
        m.domains.prof = prof = ClockDomain("prof", local=True)
        m.d.comb += [prof.clk.eq(p.prof_clk if p.own_clock else ClockSignal()),
                     prof.rst.eq(ResetSignal())]  # fmt: skip
    m.submodules.profiler = p.profiler
    attach_profiler(m, p.profiler, {r.name: regs["multihash", r.name].f
                                    for r in PROFILER_BLOCK.registers})  # fmt: skip
    loads = p.profiler.loads
    m.d.comb += [loads.valid.eq(p.load_valid), loads.payload.pc.eq(p.load_pc),
                 loads.payload.value.eq(p.load_value),
                 p.profiler_irq.eq(p.profiler.irq)]  # fmt: skip
    if p.profiler.edges:
        branches = p.profiler.branches
        m.d.comb += [branches.valid.eq(p.branch_valid), branches.payload.pc.eq(p.branch_pc),
                     branches.payload.value.eq(p.branch_target)]  # fmt: skip


#: How each block of the register map is wired: ``ATTACH[name](m, regs, peripherals)``.
ATTACH = {"console": _attach_console, "brr": _attach_brr, "multihash": _attach_multihash,
          "dispatch": attach_dispatch}


class Peripherals(wiring.Component):
    """The CSR window: amaranth-soc's Wishbone-to-CSR bridge and every block of the map.

    Parameters
    ----------
    brr_params : dict, optional
        Parameters of the catalog top ``brr`` (default: its defaults).
    profiler : dict, optional
        Build the multi-hash profiler (:class:`hwprof.system.profiler.MultiHashPeripheral`
        with these parameters, block ``multihash`` of the map); ``None``: without it.
        The key ``own_clock`` (not a peripheral parameter): ``True`` clocks the
        profiler's domain from the input ``prof_clk`` instead of the system clock.
        ``edges`` defaults to ``True`` here (the core offers its taken branches too;
        software chooses with ``SOURCE``).
    dispatch_filter : callable, optional
        Builds the selective-dispatch filter (default
        :func:`hwprof.system.dispatch.build_filter`, the catalog's ``dispatch_filter``);
        tests pass a faulty one to show that their checks fail.
    trap_csrs : callable, optional
        Builds the core's CSRs (default :class:`hwprof.system.dispatch.TrapCsrs`).
    brr_unit : callable, optional
        Builds the brr unit from ``brr_params`` (default: the catalog top ``brr``'s
        ``construct``); the FPGA figures pass a stub.

    Attributes
    ----------
    bus : In(wishbone.Signature(addr_width=10, data_width=32, granularity=32))
        Word-addressed Wishbone B4 classic subordinate (a 4 KiB window); ``ack`` 2
        cycles after ``cyc & stb`` (amaranth-soc's bridge: CSR access, then data).
    brr_valid, brr_freq : In
        A brr retires with this freq (the LFSR steps at the clock edge).
    brr_taken : Out(1)
        The brr unit's outcome for ``brr_freq`` (combinational).
    lfsr_load_valid, lfsr_load_data : In
        Load the LFSR from outside the bus (the simulation's ``--seed``).
    console_valid, console_data, exit_valid, exit_code : Out
        A write to ``CONSOLE_PUTC`` / ``CONSOLE_EXIT`` this cycle.
    lfsr_state, lfsr_load, lfsr_load_data_out : Out
        Observation: the LFSR state and loads (by software or ``lfsr_load_valid``).
    load_valid, load_pc, load_value : In
        With the profiler: a retired load ``<pc, value>`` this cycle.
    branch_valid, branch_pc, branch_target : In
        With the profiler (built with ``edges``, the default here): a taken branch
        ``<pc, target>`` this cycle.
    profiler_irq : Out(1)
        With the profiler: its interrupt line (an interval ended).
    prof_clk : In(1)
        With the profiler and ``own_clock``: the profiler's clock (reset with the system).
    pf_launch, pf_word, pf_pc : In
        The core launches an instruction fetched as ``pf_word`` at ``pf_pc``.
    pf_nop, pf_trap : Out(1)
        Selective dispatch: it retires without effect / takes a flag-stack exception
        (combinational from ``pf_launch``, :mod:`hwprof.system.dispatch`).
    pf_vector, pf_mepc : Out(32)
        The exception handler's address (``mtvec``); where ``mret`` returns (``mepc``).
    csr_valid, csr_addr, csr_op, csr_src, csr_write : In
        The core executes a CSR instruction (:class:`hwprof.system.dispatch.TrapCsrs`).
    csr_rdata : Out(32)
        The value of CSR ``csr_addr`` (combinational).
    """

    def __init__(self, brr_params=None, profiler=None, dispatch_filter=None, trap_csrs=None,
                 brr_unit=None):  # fmt: skip
        self.dispatch_filter = (dispatch_filter or build_filter)()
        self.trap_csrs = (trap_csrs or TrapCsrs)()
        self.brr = (brr_unit or get_top("brr").construct)(dict(brr_params or {}))
        profiler = None if profiler is None else dict(profiler)
        self.own_clock = bool(profiler and profiler.pop("own_clock", False))
        self.profiler = None if profiler is None else MultiHashPeripheral(
            **({"edges": True} | profiler))
        #: with the profiler: ``False``, its ``prof`` domain is the system clock; ``True``,
        #: the design that contains the system defines a ``prof`` domain (its own clock)
        self.prof_clock_external = False
        self.blocks = BLOCKS if profiler is None else [*BLOCKS, PROFILER_BLOCK]
        extra = {} if profiler is None else {
            "load_valid": In(1), "load_pc": In(32), "load_value": In(32),
            "profiler_irq": Out(1)}  # fmt: skip
        if self.profiler is not None and self.profiler.edges:
            extra |= {"branch_valid": In(1), "branch_pc": In(32), "branch_target": In(32)}
        if self.own_clock:
            extra["prof_clk"] = In(1)
        super().__init__(extra | {
            "bus": In(_wishbone(CSR_ADDR_WIDTH, 32)),
            "brr_valid": In(1),
            "brr_freq": In(4),
            "brr_taken": Out(1),
            **_PASSED_PORTS,
            "lfsr_state": Out(32),
            "lfsr_load": Out(1),
            "lfsr_load_data_out": Out(32),
            "pf_launch": In(1),
            "pf_word": In(32),
            "pf_pc": In(32),
            "pf_nop": Out(1),
            "pf_trap": Out(1),
            "pf_vector": Out(32),
            "pf_mepc": Out(32),
            "csr_valid": In(1),
            "csr_addr": In(12),
            "csr_op": In(2),
            "csr_src": In(32),
            "csr_write": In(1),
            "csr_rdata": Out(32),
        })  # fmt: skip

    def elaborate(self, platform):
        from luna_soc.gateware.vendor.amaranth_soc import csr
        from luna_soc.gateware.vendor.amaranth_soc.csr.wishbone import WishboneCSRBridge

        m = Module()
        memory_map, regs = build_registers(self.blocks)
        m.submodules.csr = bridge = csr.Bridge(memory_map)
        m.submodules.wb_csr = wb_csr = WishboneCSRBridge(bridge.bus, data_width=32)
        wiring.connect(m, wiring.flipped(self.bus), wb_csr.wb_bus)
        for block in self.blocks:
            ATTACH[block.name](m, regs, self)
        return m


class System(wiring.Component):
    """PicoRV32 with brr, RAM and the CSR window on one Wishbone bus (module docstring).

    Parameters
    ----------
    ram_size : int
        RAM bytes at address 0 (a power of two; default 128 KiB).
    brr_params : dict, optional
        Parameters of the catalog top ``brr``.
    profiler : dict, optional
        Build the multi-hash profiler with these parameters, fed by the core's retired
        loads from RAM (:class:`hwprof.system.profiler.RetiredLoads`) or, as software
        chooses, its taken branches (``edges``, default ``True``); ``None``: without.
    dispatch_filter, trap_csrs, brr_unit : callable, optional
        Build the selective-dispatch filter, the core's CSRs and the brr unit
        (:class:`Peripherals`).

    Attributes
    ----------
    hold : In(1)
        Hold the core in reset (RAM and LFSR may be loaded meanwhile).
    boot_valid, boot_addr, boot_data : In
        RAM word write (while ``hold``).
    lfsr_load_valid, lfsr_load_data : In
        LFSR load (while ``hold``: the run's seed).
    console_valid, console_data, exit_valid, exit_code : Out
        Console writes and program exit.
    trap : Out(1)
        The core stopped on a trap (illegal instruction, misaligned access, ebreak,
        ecall).
    bus_error, bus_error_addr : Out
        The core accessed an unmapped address (sticky; the access completes with 0).
    obs_pc, obs_insn, obs_instret : Out
        Address and word of the instruction executing; instructions retired.
    obs_brr_valid, obs_brr_freq, obs_brr_taken, obs_lfsr_state : Out
        A brr retires this cycle with this freq and outcome, from this LFSR state.
    obs_lfsr_load, obs_lfsr_load_data : Out
        The LFSR is loaded at this clock edge.
    obs_load_valid, obs_load_dropped : Out(1)
        With the profiler: a retired load is offered to it this cycle (counted in its
        ``OFFERED``), and it is dropped (the FIFO full, counted in ``DROPPED``).
    obs_load_pc, obs_load_value, obs_load_addr, obs_load_size : Out
        With the profiler: that tuple, its data address and bytes loaded (1, 2, 4); for
        a taken branch (``SOURCE`` = 1) ``<pc, target>``, the target as address, size 0.
    prof_clk : In(1)
        With the profiler's ``own_clock``: the profiler's clock.
    """

    def __init__(self, ram_size=DEFAULT_RAM_SIZE, brr_params=None, profiler=None,
                 dispatch_filter=None, trap_csrs=None, brr_unit=None):  # fmt: skip
        self.ram = Ram(ram_size)
        self.peripherals = Peripherals(brr_params, profiler, dispatch_filter, trap_csrs,
                                       brr_unit)
        abits = len(self.ram.boot_addr)
        extra = {} if profiler is None else {
            "obs_load_valid": Out(1), "obs_load_dropped": Out(1), "obs_load_pc": Out(32),
            "obs_load_value": Out(32), "obs_load_addr": Out(32), "obs_load_size": Out(3)}
        if self.peripherals.own_clock:
            extra["prof_clk"] = In(1)
        super().__init__(extra | {
            "hold": In(1),
            "boot_valid": In(1),
            "boot_addr": In(abits),
            "boot_data": In(32),
            **_PASSED_PORTS,
            "trap": Out(1),
            "bus_error": Out(1),
            "bus_error_addr": Out(32),
            "obs_pc": Out(32),
            "obs_insn": Out(32),
            "obs_instret": Out(64),
            "obs_brr_valid": Out(1),
            "obs_brr_freq": Out(4),
            "obs_brr_taken": Out(1),
            "obs_lfsr_state": Out(32),
            "obs_lfsr_load": Out(1),
            "obs_lfsr_load_data": Out(32),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        m.submodules.ram = ram = self.ram
        m.submodules.peripherals = per = self.peripherals
        mem_valid, mem_addr = Signal(), Signal(32)
        mem_wdata, mem_wstrb = Signal(32), Signal(4)
        mem_ready, mem_rdata = Signal(), Signal(32)
        brr_valid, brr_freq = Signal(), Signal(4)
        trap = Signal()
        taken_valid, taken_target = Signal(), Signal(32)
        mem_instr = Signal(name="mem_instr")
        # selective dispatch: an instruction word enters the core as the base operation
        # of a PI (hwprof.system.dispatch.base_word); the core keeps the word as fetched
        core_rdata = Signal(32)
        m.d.comb += core_rdata.eq(Mux(mem_instr, base_word(m, mem_rdata), mem_rdata))
        params = {f"p_{k}": Const(v, 32) for k, v in CORE_PARAMETERS.items()}
        m.submodules.core = Instance(
            CORE_MODULE, **params,
            i_clk=ClockSignal(), i_resetn=~(ResetSignal() | self.hold),
            o_trap=trap, o_mem_valid=mem_valid, o_mem_addr=mem_addr, o_mem_wdata=mem_wdata,
            o_mem_wstrb=mem_wstrb, i_mem_ready=mem_ready, i_mem_rdata=core_rdata,
            o_mem_instr=mem_instr, i_hwprof_raw_rdata=mem_rdata,
            o_hwprof_launch=per.pf_launch, o_hwprof_word=per.pf_word,
            o_hwprof_launch_pc=per.pf_pc, i_hwprof_pf_nop=per.pf_nop,
            i_hwprof_pf_trap=per.pf_trap, i_hwprof_pf_vector=per.pf_vector,
            i_hwprof_pf_mepc=per.pf_mepc,
            o_hwprof_csr_valid=per.csr_valid, o_hwprof_csr_addr=per.csr_addr,
            o_hwprof_csr_op=per.csr_op, o_hwprof_csr_src=per.csr_src,
            o_hwprof_csr_write=per.csr_write, i_hwprof_csr_rdata=per.csr_rdata,
            i_pcpi_wr=0, i_pcpi_rd=0, i_pcpi_wait=0, i_pcpi_ready=0, i_irq=0,
            o_hwprof_brr_valid=brr_valid, o_hwprof_brr_freq=brr_freq,
            i_hwprof_brr_taken=per.brr_taken,
            o_hwprof_pc=self.obs_pc, o_hwprof_insn=self.obs_insn,
            o_hwprof_instret=self.obs_instret,
            o_hwprof_taken_valid=taken_valid, o_hwprof_taken_target=taken_target,
        )  # fmt: skip

        # Wishbone B4 classic master from PicoRV32's native interface (valid/ready):
        # cyc = stb = mem_valid, held until ack (= mem_ready); we = any write strobe.
        write = mem_wstrb.any()
        ram_words = self.ram.size // 4
        word = mem_addr[2:]
        in_ram = (mem_addr >> 2) - (RAM_BASE >> 2) < ram_words
        in_csr = mem_addr[2 + CSR_ADDR_WIDTH:] == CSR_BASE >> (2 + CSR_ADDR_WIDTH)
        error_ack = Signal()
        m.d.comb += [
            ram.bus.adr.eq(word - (RAM_BASE >> 2)), ram.bus.dat_w.eq(mem_wdata),
            ram.bus.sel.eq(mem_wstrb), ram.bus.we.eq(write),
            ram.bus.cyc.eq(mem_valid & in_ram), ram.bus.stb.eq(mem_valid & in_ram),
            per.bus.adr.eq(word), per.bus.dat_w.eq(mem_wdata), per.bus.sel.eq(1),
            per.bus.we.eq(write),
            per.bus.cyc.eq(mem_valid & in_csr), per.bus.stb.eq(mem_valid & in_csr),
            mem_ready.eq(ram.bus.ack | per.bus.ack | error_ack),
        ]  # fmt: skip
        # Read data: each subordinate's dat_r gated by its ack (one acks at a time).
        m.d.comb += mem_rdata.eq((ram.bus.dat_r & ram.bus.ack.replicate(32))
                                 | (per.bus.dat_r & per.bus.ack.replicate(32)))  # fmt: skip
        unmapped = mem_valid & ~in_ram & ~in_csr
        m.d.sync += error_ack.eq(unmapped & ~error_ack)
        with m.If(unmapped & ~self.bus_error):
            m.d.sync += [self.bus_error.eq(1), self.bus_error_addr.eq(mem_addr)]

        m.d.comb += [
            ram.boot_valid.eq(self.boot_valid & self.hold), ram.boot_addr.eq(self.boot_addr),
            ram.boot_data.eq(self.boot_data),
            per.brr_valid.eq(brr_valid), per.brr_freq.eq(brr_freq),
            per.lfsr_load_valid.eq(self.lfsr_load_valid & self.hold),
            per.lfsr_load_data.eq(self.lfsr_load_data),
            *(getattr(self, name).eq(getattr(per, name)) for name in _CONSOLE_PORTS),
            self.trap.eq(trap),
            self.obs_brr_valid.eq(brr_valid), self.obs_brr_freq.eq(brr_freq),
            self.obs_brr_taken.eq(per.brr_taken), self.obs_lfsr_state.eq(per.lfsr_state),
            self.obs_lfsr_load.eq(per.lfsr_load),
            self.obs_lfsr_load_data.eq(per.lfsr_load_data_out),
        ]  # fmt: skip
        if per.profiler is not None:
            self._attach_sources(m, per, mem_valid & in_ram, ram.bus, mem_instr, mem_wstrb,
                                 mem_addr, taken_valid, taken_target)
        return m

    def _attach_sources(self, m, per, mem_valid, ram_bus, mem_instr, mem_wstrb, mem_addr,
                        taken_valid, taken_target):
        """The profiler's tuple sources (retired loads from RAM, taken branches) and the
        observation of the tuple offered to it."""
        prof = per.profiler
        m.submodules.retired_loads = loads = RetiredLoads()
        if prof.edges:
            # a taken branch <pc, target>, registered like a retired load
            m.d.sync += [per.branch_valid.eq(taken_valid), per.branch_pc.eq(self.obs_pc),
                         per.branch_target.eq(taken_target)]  # fmt: skip
        offered = prof.offer_data
        edge = prof.offer_edge
        m.d.comb += [
            self.obs_load_valid.eq(prof.offer), self.obs_load_dropped.eq(prof.drop),
            self.obs_load_pc.eq(offered[prof.config.value_bits:]),
            self.obs_load_value.eq(offered[:prof.config.value_bits]),
            self.obs_load_addr.eq(Mux(edge, offered[:prof.config.value_bits], loads.addr)),
            self.obs_load_size.eq(Mux(edge, 0, loads.size)),
        ]  # fmt: skip
        m.d.comb += [
            loads.mem_valid.eq(mem_valid), loads.mem_ready.eq(ram_bus.ack),
            loads.mem_instr.eq(mem_instr), loads.mem_wstrb.eq(mem_wstrb),
            loads.mem_addr.eq(mem_addr), loads.mem_rdata.eq(ram_bus.dat_r),
            loads.pc.eq(self.obs_pc), loads.insn.eq(self.obs_insn),
            per.load_valid.eq(loads.loads.valid), per.load_pc.eq(loads.loads.payload.pc),
            per.load_value.eq(loads.loads.payload.value),
        ]  # fmt: skip
        if per.own_clock:
            m.d.comb += per.prof_clk.eq(self.prof_clk)


def system_verilog(ram_size=DEFAULT_RAM_SIZE, brr_params=None, profiler=None,
                   dispatch_filter=None) -> str:  # fmt: skip
    """The whole system's Verilog: module ``hwprof_system`` and the patched core."""
    from amaranth.back import verilog

    from .core import core_verilog

    text = verilog.convert(System(ram_size, brr_params, profiler, dispatch_filter),
                           name="hwprof_system",
                           emit_src=False)
    # Amaranth writes the RAM's all-zero initial contents as one assignment per word
    # (tens of thousands of lines that Verilator compiles slowly); RAM contents at
    # power-up are not part of the design (the program is loaded through the boot port).
    text = _ZERO_INIT.sub("", text)
    return text + "\n" + core_verilog()


_ZERO_INIT = re.compile(r"  initial begin\n(?:    mem\[\d+\] = 32'd0;\n)+  end\n")
