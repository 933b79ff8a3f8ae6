"""SystemVerilog property text shared by the blocks' catalog modules (``hwprof prove``).

Each block's ``props_<block>(params)`` (in its module of :mod:`hwprof.tops`) returns
the :class:`~hwprof.block.Property` list of one top for its resolved parameters. A
property reads the ports of the module it is inserted into and, where the ports do
not show the state, the internal signals Amaranth names after the RTL's Python
variables (``sp``, ``position``, ``counter``...); a renamed signal makes yosys fail
with a clear error, never a silent pass. Past values are explicit registers
(``f_*``, :func:`past_registers`); every check after the first cycle is guarded by ``f_ok``
(there was a previous cycle and it was not a reset).
"""

from __future__ import annotations

from ..block import Property

__all__ = ["past_registers", "lfsr_props", "lfsr_escape_property", "message_handshake",
           "conservation"]


def past_registers(signals: dict[str, tuple[str, int]]) -> str:
    """Registers ``f_<name>`` holding last cycle's value of each expression, and ``f_ok``."""
    lines = ["reg f_past = 1'b0;", "reg f_rst;"]
    updates = ["f_past <= 1'b1;", "f_rst <= rst;"]
    for name, (expr, width) in signals.items():
        lines.append(f"reg [{width - 1}:0] f_{name};")
        updates.append(f"f_{name} <= {expr};")
    lines.append("wire f_ok = f_past && !f_rst;")
    lines.append("always @(posedge clk) begin " + " ".join(updates) + " end")
    return "\n".join(lines) + "\n"


def lfsr_props(module: str, reg: str, width: int, escape: bool,
                lfsr=None, load: bool = True) -> list[Property]:  # fmt: skip
    """``lfsr``: an :class:`~hwprof.golden.lfsr.LfsrConfig` whose advance (``steps``
    single steps of its form and taps) every enabled cycle must take (``lfsr_step``).

    ``load=False``: the module has no ``load``/``load_data`` ports (the samplers' LFSR
    only advances); the properties then read ``load`` as 0.
    """
    free = () if load else (f"w:{module.partition('.')[2]}.{reg}",)
    signals = {"state": (reg, width), "en": ("enable", 1)}
    if load:
        signals.update({"load": ("load", 1), "data": ("load_data", width)})
    past = past_registers(signals)
    if not load:
        past += (f"wire f_load = 1'b0;\nwire load = 1'b0;\nwire [{width - 1}:0] f_data = 0;\n"
                 f"wire [{width - 1}:0] load_data = 0;\n")
    props = []
    if lfsr is not None:
        # The advance is linear over GF(2): bit j of the next state is the XOR of the
        # stages i whose unit state e_i reaches a state with bit j set.
        images = [lfsr.advance(1 << i) for i in range(width)]
        bits = [" ^ ".join(f"f_state[{i}]" for i in range(width) if images[i] >> j & 1)
                for j in reversed(range(width))]  # fmt: skip
        props.append(Property(
            "lfsr_step", f"from a non-zero state an enabled cycle takes {lfsr.steps} "
            f"{lfsr.form} step(s) of the configured taps; a load takes the data; "
            "otherwise the state holds",
            {module: past + "always @* if (f_ok) begin\n"
             f"  if (f_load) assert ({reg} == f_data);\n"
             f"  else if (f_en && f_state != 0) "
             f"assert ({reg} == {{{', '.join(f'({b})' for b in bits)}}});\n"
             f"  else if (!f_en) assert ({reg} == f_state);\nend"}, free_init=free))  # fmt: skip
    if escape:
        props.append(Property(
            "lfsr_escape", "from all-zero, an enabled cycle without a load leaves zero",
            {module: past + f"always @* if (f_ok && f_state == 0 && f_en && !f_load) "
                            f"assert ({reg} != 0);"}, free_init=free))  # fmt: skip
        props.append(Property(
            "lfsr_never_zero", "loads of non-zero values only: the state is never all-zero",
            {module: "always @* if (load) assume (load_data != 0);\n"
                     f"always @* assert ({reg} != 0);"}))  # fmt: skip
    else:
        props.append(Property(
            "lfsr_zero_only_by_load", "without the escape, all-zero is left only by a load",
            {module: past + f"always @* if (f_ok && f_state == 0 && !f_load) "
                            f"assert ({reg} == 0);"}))  # fmt: skip
    return props


def lfsr_escape_property(module: str, reg: str, width: int) -> Property:
    """The escape property alone (true with the escape on; false without it)."""
    return next(p for p in lfsr_props(module, reg, width, True) if p.name == "lfsr_escape")


def message_handshake(top: str, payload_bits: int, single_register: bool) -> list[Property]:
    past = past_registers({"mv": ("messages__valid", 1), "mr": ("messages__ready", 1),
                  "mp": ("messages__payload", payload_bits),
                  "acc": ("tuples__valid && tuples__ready", 1)})  # fmt: skip
    text = past + ("always @* if (f_ok && f_mv && !f_mr) "
                   "assert (messages__valid && messages__payload == f_mp);\n")  # fmt: skip
    description = "messages: payload and valid held while valid and not ready"
    if single_register:
        text += ("always @* if (messages__valid && !messages__ready) assert (!tuples__ready);\n"
                 "always @* if (f_ok && !f_acc && !(f_mv && !f_mr)) assert (!messages__valid);")
        description += ("; no tuple accepted while a message waits (none lost); a message only "
                        "after an accepted tuple (none duplicated)")
    return [Property("messages_handshake", description, {top: text})]


def conservation(top: str, key_bits: int, count_bits: int, held: str, in_count: str = "1",
                  what: str = "", invariants: str = "",
                  sram: bool = False) -> Property:  # fmt: skip
    """Tuples in = counts sent + the count waiting in the output register + ``held``.

    ``invariants``: state invariants proved together (they make the step inductive).
    ``sram``: the block keeps state in a memory, which reset does not clear (an
    SRAM): assume no reset after the initial state.
    """
    count = f"messages__payload[{key_bits + count_bits - 1}:{key_bits}]"
    text = ("always @* assume (!rst);\n" if sram else "") + invariants + (
        "reg [31:0] f_in = 0, f_out = 0;\n"
        "always @(posedge clk) if (rst) begin f_in <= 0; f_out <= 0; end else begin\n"
        f"  if (tuples__valid && tuples__ready) f_in <= f_in + {in_count};\n"
        f"  if (messages__valid && messages__ready) f_out <= f_out + {count}; end\n"
        f"always @* assert (f_in == f_out + (messages__valid ? {count} : 0) + ({held}));\n"
    )  # fmt: skip
    description = ("every tuple is accounted for: tuples in = message counts sent + the "
                   f"waiting message's count + {what}")
    if sram:
        description += " (no reset after the start: reset does not clear the memory)"
    return Property("count_conservation", description, {top: text}, maxsteps=4)

