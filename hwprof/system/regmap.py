"""The system's register map: written once, here.

:data:`BLOCKS` lists every block of the CSR window and its registers. From it come
the hardware (:func:`build_registers`, amaranth-soc CSR registers whose fields the
system wires to its blocks, :mod:`hwprof.system.soc`), the register table of
docs/system.md (:func:`markdown_table`) and the C header's defines
(:func:`c_defines`).

Adding a block: append a :class:`Block` to :data:`BLOCKS` (its ``offset`` a
multiple of :data:`BLOCK_SPAN`) and give :mod:`hwprof.system.soc` a function that
wires its fields (``ATTACH[name]``). Every register is one 32-bit word holding one
field, read from and written to the block's own logic (:class:`LiveField`): the
CSR map keeps no copy of block state.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.lib.wiring import In, Out

from ..golden.brr import BrrConfig
from .dispatch import BLOCK_OFFSET as DISPATCH_OFFSET
from .dispatch import REGISTERS as DISPATCH_REGISTERS
from .profiler import BLOCK_OFFSET as PROFILER_OFFSET
from .profiler import REGISTERS as PROFILER_REGISTERS

__all__ = ["Reg", "Block", "BLOCKS", "CSR_BASE", "CSR_ADDR_WIDTH", "BLOCK_SPAN", "RAM_BASE",
           "LiveField", "build_registers", "address", "markdown_table", "c_defines",
           "brr_state_reset", "PROFILER_BLOCK"]  # fmt: skip

#: Byte address of RAM (code, data, stack).
RAM_BASE = 0x0000_0000
#: Byte address of the CSR window (Wishbone -> amaranth-soc CSR bridge).
CSR_BASE = 0x1000_0000
#: Word-address bits of the CSR window (1024 registers, 4 KiB).
CSR_ADDR_WIDTH = 10
#: Bytes between block bases.
BLOCK_SPAN = 0x100


def brr_state_reset(brr_params: dict | None = None) -> int:
    """Reset value of ``BRR_STATE``: the brr unit's ``seed``."""
    return BrrConfig(**{k: v for k, v in (brr_params or {}).items()
                        if k in ("width", "seed")}).seed  # fmt: skip


@dataclass(frozen=True)
class Reg:
    """One 32-bit register.

    ``access``: ``"r"`` (reads the block), ``"w"`` (a write strobes the block; reads
    give 0), ``"rw"`` (both). ``width``: the field's bits (from bit 0; the rest read
    0, writes ignore them). ``reset``: the value read after reset (``None`` for
    write-only), as text for the table.
    """

    name: str
    offset: int
    access: str
    width: int
    reset: str | None
    doc: str


@dataclass(frozen=True)
class Block:
    """A block of the CSR window: its registers at ``CSR_BASE + offset + reg.offset``."""

    name: str
    offset: int
    doc: str
    registers: tuple[Reg, ...]


#: Every block of the CSR window (the one place that lists registers).
BLOCKS: list[Block] = [
    Block("console", 0x000, "simulation console: character output and program exit", (
        Reg("PUTC", 0x0, "w", 8, None, "write: send the low byte to the console"),
        Reg("EXIT", 0x4, "w", 32, None, "write: end the program with this exit code"),
    )),
    Block("brr", 0x100, "branch-on-random unit (Lee & Zilles; catalog top `brr`)", (
        Reg("STATE", 0x0, "rw", 32, "seed",
            "LFSR state (width bits); write: load it (save/restore, sec. 3.4)"),
        Reg("RETIRED", 0x4, "rw", 32, "0", "brr retired; write: set the count"),
        Reg("TAKEN", 0x8, "rw", 32, "0", "brr retired taken; write: set the count"),
    )),
    Block("dispatch", DISPATCH_OFFSET, "selective dispatch: PI counts (Vaswani et al.; "
          "catalog top `dispatch_filter`; its flag state and exceptions are CSRs)",
          tuple(Reg(*row) for row in DISPATCH_REGISTERS)),
]  # fmt: skip


#: The multi-hash profiler's block (hwprof.system.profiler), in the map only of a system
#: built with the profiler (``Peripherals(profiler=...)``): ``BLOCKS + [PROFILER_BLOCK]``.
PROFILER_BLOCK = Block("multihash", PROFILER_OFFSET, "multi-hash profiler (Narayanasamy et al.; "
                       "catalog top `multihash` in its own clock domain)",
                       tuple(Reg(*row) for row in PROFILER_REGISTERS))  # fmt: skip


def address(block: str, reg: str) -> int:
    """Byte address of ``block``'s register ``reg``."""
    for b in BLOCKS:
        if b.name == block:
            for r in b.registers:
                if r.name == reg:
                    return CSR_BASE + b.offset + r.offset
    raise KeyError(f"no register {block}.{reg}")


def _check():
    seen = {}
    for b in [*BLOCKS, PROFILER_BLOCK]:
        if b.offset % BLOCK_SPAN:
            raise ValueError(f"block {b.name}: offset {b.offset:#x} not a multiple of "
                             f"{BLOCK_SPAN:#x}")  # fmt: skip
        for r in b.registers:
            if r.offset % 4 or r.offset >= BLOCK_SPAN or r.access not in ("r", "w", "rw"):
                raise ValueError(f"register {b.name}.{r.name}: bad offset or access")
            addr = b.offset + r.offset
            if addr in seen:
                raise ValueError(f"{b.name}.{r.name} overlaps {seen[addr]}")
            seen[addr] = f"{b.name}.{r.name}"


_check()


def _live_field_class():
    from luna_soc.gateware.vendor.amaranth_soc.csr.reg import FieldAction

    class _LiveField(FieldAction):
        """A field whose value lives in the block: ``r_data`` in, ``w_data``/``w_stb`` out."""

        def __init__(self, shape, access):
            members = {}
            if "r" in access:
                members["r_data"] = In(shape)
            if "w" in access:
                members["w_data"] = Out(shape)
                members["w_stb"] = Out(1)
            super().__init__(shape, access=access, members=members)
            self._access = access

        def elaborate(self, platform):
            from amaranth.hdl import Module

            m = Module()
            if "r" in self._access:
                m.d.comb += self.port.r_data.eq(self.r_data)
            if "w" in self._access:
                m.d.comb += [self.w_data.eq(self.port.w_data), self.w_stb.eq(self.port.w_stb)]
            return m

    return _LiveField


def LiveField(shape, access):  # noqa: N802 (a class factory: amaranth-soc is imported lazily)
    """A CSR field action (amaranth-soc ``FieldAction``) backed by block logic."""
    return _live_field_class()(shape, access)


def build_registers(blocks=None):
    """amaranth-soc registers of ``blocks`` (default :data:`BLOCKS`): ``(memory_map,
    {(block, reg): Register})``.

    The memory map is in 32-bit words (CSR data width 32, granularity 32).
    """
    from luna_soc.gateware.vendor.amaranth_soc import csr

    builder = csr.Builder(addr_width=CSR_ADDR_WIDTH, data_width=32, granularity=32)
    regs = {}
    for b in BLOCKS if blocks is None else blocks:
        for r in b.registers:
            reg = csr.Register(csr.Field(_live_field_class(), r.width, r.access), access=r.access)
            builder.add(f"{b.name}_{r.name}", reg, offset=(b.offset + r.offset) // 4)
            regs[b.name, r.name] = reg
    return builder.as_memory_map(), regs


def markdown_table() -> str:
    """The register table of docs/system.md."""
    lines = ["| address | block | register | access | bits | reset | meaning |",
             "| --- | --- | --- | --- | ---: | --- | --- |"]  # fmt: skip
    for b in BLOCKS:
        for r in b.registers:
            reset = "-" if r.reset is None else f"`{r.reset}`"
            lines.append(f"| `0x{CSR_BASE + b.offset + r.offset:08x}` | {b.name} | "
                         f"`{b.name.upper()}_{r.name}` | {r.access} | {r.width} | {reset} | "
                         f"{r.doc} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def c_defines() -> str:
    """``#define HWPROF_<BLOCK>_<REG> <address>`` for every register."""
    lines = []
    for b in BLOCKS:
        lines.append(f"/* {b.name}: {b.doc} */")
        for r in b.registers:
            addr = CSR_BASE + b.offset + r.offset
            lines.append(f"#define HWPROF_{b.name.upper()}_{r.name} 0x{addr:08x}  "
                         f"/* {r.access}: {r.doc} */")  # fmt: skip
    return "\n".join(lines) + "\n"


BEGIN, END = "<!-- register table: begin -->", "<!-- register table: end -->"


def update_page(path) -> bool:
    """Write :func:`markdown_table` between the markers of ``path``; whether it changed."""
    from pathlib import Path

    path = Path(path)
    text = path.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{markdown_table()}{END}{tail}"
    if new != text:
        path.write_text(new)
    return new != text


if __name__ == "__main__":  # python -m hwprof.system.regmap: refresh docs/system.md
    import sys
    from pathlib import Path

    page = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/system.md")
    print(f"{page}: {'updated' if update_page(page) else 'up to date'}")
