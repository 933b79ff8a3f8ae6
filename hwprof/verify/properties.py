"""The properties of each block, as SystemVerilog over its generated Verilog.

Each ``props_<block>(params)`` returns the :class:`~hwprof.verify.formal.Property`
list of one catalog top for its resolved parameters. A property reads the ports
of the module it is inserted into and, where the ports do not show the state,
the internal signals Amaranth names after the RTL's Python variables (``sp``,
``position``, ``counter``...); a renamed signal makes yosys fail with a clear
error, never a silent pass. Past values are explicit registers (``f_*``); every
check after the first cycle is guarded by ``f_ok`` (there was a previous cycle
and it was not a reset).

:data:`FORMAL_PARAMS` holds the small parameter sets used where the default
configuration is too large to prove (memories become flops for yosys' ``sat``).
"""

from __future__ import annotations

from ..golden.brr import BrrConfig
from ..golden.dispatch import DispatchConfig
from ..golden.isa_profile import CTI_OPS, CUSTOM1, CUSTOM2, PCI_MASK, PI_OPS
from ..golden.lfsr import LfsrConfig
from ..golden.multihash import MultiHashConfig
from ..golden.samplers import LFSR_WIDTH, RAND_BITS
from ..rtl.multihash_bram import flag_bit
from .formal import Property

__all__ = ["FORMAL_PARAMS", "PROPERTIES", "properties_for"]

_MULTIHASH = {"tables": 2, "counters": 16, "counter_bits": 8, "accumulator": 8,
              "interval_length": 8, "threshold": 3, "pc_bits": 2, "value_bits": 2}

#: Parameter sets proved instead of the defaults (the defaults' memories, 2048
#: counters and more, are tens of thousands of flops for ``sat``). A list is
#: several sets, each proved (``hwprof prove`` applies ``-p`` to each and proves
#: sets that become equal once: ``-p ways=0`` proves the CAM design only).
FORMAL_PARAMS = {
    # 2 tables x 8 counters, 8 accumulator entries, intervals of 8 tuples, threshold 3
    # (stalls and full FIFOs are reachable), for both designs, each with its own
    # properties (props_multihash chooses by ``ways``): the default block RAM design,
    # 4 sets of 2 ways (hwprof/rtl/multihash_bram.py; its memories become flops for
    # sat), and the fully associative CAM (``ways=0``)
    "multihash": [{**_MULTIHASH, "ways": 2}, {**_MULTIHASH, "ways": 0}],
    # the stream compressors' properties are stated on the latency-1 form (one update
    # per accepted tuple, in the accept cycle); the pipelined forms are checked against
    # the golden models by simulation (docs/samplers.md)
    "stratified": {"rate": 4, "entries": 4, "key_bits": 4, "pc_bits": 2, "latency": 1},
    "tagged_compressor": {"entries": 4, "ways": 2, "tag_bits": 2, "hit_bits": 4,
                          "miss_bits": 2, "evict_hits": 4, "replace_misses": 3,
                          "key_bits": 4, "pc_bits": 2, "latency": 1},
    "assoc_table": {"entries": 3, "key_bits": 4, "in_count_bits": 3, "count_bits": 5,
                    "latency": 1},
    "sampler_periodic": {"rate": 5, "key_bits": 8},
    "sampler_counter": {"count_bits": 4, "key_bits": 8},
    "sampler_cr": {"rate": 4, "count_bits": 4, "key_bits": 8},
    "sampler_random": {"rate": 4, "key_bits": 8},
    "sampler_countdown": {"rate": 4, "key_bits": 8},
}  # fmt: skip


def _past(signals: dict[str, tuple[str, int]]) -> str:
    """Registers ``f_<name>`` holding last cycle's value of each expression, and ``f_ok``."""
    lines = ["reg f_past = 1'b0;", "reg f_rst;"]
    updates = ["f_past <= 1'b1;", "f_rst <= rst;"]
    for name, (expr, width) in signals.items():
        lines.append(f"reg [{width - 1}:0] f_{name};")
        updates.append(f"f_{name} <= {expr};")
    lines.append("wire f_ok = f_past && !f_rst;")
    lines.append("always @(posedge clk) begin " + " ".join(updates) + " end")
    return "\n".join(lines) + "\n"


# --- LFSR (brr, lfsr) ---------------------------------------------------------------------


def _lfsr_props(module: str, reg: str, width: int, escape: bool,
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
    past = _past(signals)
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
    return next(p for p in _lfsr_props(module, reg, width, True) if p.name == "lfsr_escape")


def props_lfsr(p: dict) -> list[Property]:
    cfg = LfsrConfig(width=p["width"], seed=p["seed"], steps=p["steps"], form=p["form"],
                     taps=p["taps"], lockup_escape=p["lockup_escape"])  # fmt: skip
    return _lfsr_props("lfsr", "state", cfg.width, cfg.lockup_escape, cfg)


def props_brr(p: dict) -> list[Property]:
    cfg = BrrConfig(width=p["width"], seed=p["seed"], pipelined=p["pipelined"],
                    lockup_escape=p["lockup_escape"], positions=p["positions"],
                    taps=p["taps"], lfsr_steps=p["lfsr_steps"])  # fmt: skip
    chain = []
    for f in range(16):
        bits = ", ".join(f"state[{q}]" for q in cfg.positions[: f + 1])
        chain.append(f"always @* if (freq == 4'd{f}) assert (taken == &{{{bits}}});")
    return [
        Property("redirect_needs_decode_valid", "redirect only when decode_valid is set",
                 {"brr": "always @* assert (!redirect || decode_valid);"}),
        Property("taken_is_and_chain",
                 "taken is the AND of the freq + 1 outcome stages of the state (all freq)",
                 {"brr": "\n".join(chain)}),
        *_lfsr_props("brr.lfsr", "register", cfg.width, cfg.lockup_escape, cfg.lfsr),
    ]


def props_brr_lanes(top: str, p: dict) -> list[Property]:
    """brr at decode (one lane) and the superscalar variants (``lanes`` lanes)."""
    lanes = p.get("lanes", 1)
    checks = "\n".join(
        f"always @* assert (!redirect_valid[{i}] || (valid[{i}] && is_brr[{i}]));"
        for i in range(lanes))  # fmt: skip
    return [Property("redirect_needs_decoded_brr",
                     "a lane redirects only when it is valid and decodes a brr",
                     {top: checks})]


def props_brr_deterministic(p: dict) -> list[Property]:
    text = ("always @* assert (!redirect || (decode_valid && accept));\n"
            f"always @* assert (inflight <= {p['max_inflight']});\n"
            f"always @* assert (full == (inflight == {p['max_inflight']}));")  # fmt: skip
    return [Property("redirect_and_inflight",
                     "redirect only for an accepted brr in decode; the brr in flight stay in "
                     "0..max_inflight and full says the maximum", {"brr_deterministic": text})]


# --- selective dispatch -------------------------------------------------------------------


def props_dispatch_filter(p: dict) -> list[Property]:
    cfg = DispatchConfig(lanes=p["lanes"], n_flags=p["n_flags"], stack_depth=p["stack_depth"],
                         addr_width=p["addr_width"])  # fmt: skip
    n, depth, cw = cfg.n_flags, cfg.stack_depth, cfg.ckpt_width
    decode, dispatch, sp = [], [], []
    for i in range(cfg.lanes):
        w = f"insn[{32 * i + 31}:{32 * i}]"
        flags_in = "flags" if i == 0 else f"ckpt[{cw * (i - 1) + n - 1}:{cw * (i - 1)}]"
        decode.append(
            f"wire [31:0] f_w{i} = {w};\n"
            f"wire f_pi{i} = f_w{i}[6:0] == 7'd{CUSTOM2} && "
            f"!(f_w{i}[14:12] == 3'd0 && f_w{i}[28:25] != 4'd0);\n"
            f"wire f_pci{i} = (f_w{i} & 32'h{PCI_MASK:08x}) == 32'h{CUSTOM1:08x};\n"
            f"wire [2:0] f_k{i} = f_w{i}[31:29];\n"
            f"wire [7:0] f_fl{i} = {flags_in};\n"
            f"wire f_on{i} = f_k{i} < {n} && f_fl{i}[f_k{i}];\n"
        )  # fmt: skip
        if p.get("predecoded"):
            # the integrator's constraint: the fetch queue's bits are the word's predecode
            cti = " || ".join(f"f_w{i}[14:12] == 3'd{PI_OPS.index(op)}" for op in CTI_OPS)
            decode.append(
                f"wire f_cti{i} = f_pi{i} && ({cti});\n"
                f"always @* assume (insn_pre[{3 * i + 2}:{3 * i}] == "
                f"{{f_cti{i}, f_pi{i}, f_pci{i}}});\n"
            )  # fmt: skip
        dispatch.append(
            f"always @* begin\n"
            f"  assert (!dispatch[{i}] || take[{i}]); assert (!drop[{i}] || take[{i}]);\n"
            f"  if (take[{i}] && f_pi{i}) assert (dispatch[{i}] == f_on{i});\n"
            f"  if (take[{i}] && f_pi{i}) assert (drop[{i}] == !f_on{i});\n"
            f"  if (take[{i}] && !f_pi{i} && !f_pci{i}) assert (dispatch[{i}]);\n"
            f"  if (f_pci{i}) assert (!drop[{i}] && "
            f"dispatch[{i}] == (overflow[{i}] || underflow[{i}]));\n"
            f"end"
        )  # fmt: skip
        sp.append(f"always @* assert (ckpt[{cw * i + cw - 1}:{cw * i + n + depth}] <= {depth});")
    return [
        Property("pi_dispatch_by_flag",
                 "a taken PI is dispatched iff its flag (as left by the older lanes) is set, "
                 "else dropped; every taken non-PI, non-PCI instruction is dispatched; "
                 "a PCI only to carry its flag-stack overflow/underflow exception to commit",
                 {"dispatch_filter": "".join(decode) + "\n".join(dispatch)}),
        Property("flag_sp_in_range",
                 f"the flag stack pointer stays in 0..{depth} (register and every checkpoint)",
                 {"dispatch_filter": f"always @* assert (sp <= {depth});\n" + "\n".join(sp)}),
    ]


# --- multi-hash profiler ------------------------------------------------------------------


def props_multihash(p: dict) -> list[Property]:
    """The properties of the design ``ways`` selects (0: the CAM, > 0: block RAM)."""
    return props_multihash_bram(p) if p["ways"] else props_multihash_cam(p)


def props_multihash_cam(p: dict) -> list[Property]:
    """The fully associative (CAM) design's properties (``ways = 0``)."""
    cfg = MultiHashConfig(**p)
    n, acc, w, kb, z = cfg.tables, cfg.accumulator, cfg.counter_bits, cfg.key_bits, cfg.table_size
    assume = ("always @* assume (!cfg_we);\n"  # so these registers keep their reset values:
              f"always @* assert (!pend && interval == {cfg.interval_length} && "
              f"threshold == {cfg.threshold});\n")
    counts = []
    for a in range(acc):
        counts.append(f"always @* if (valid[{a}]) assert (count{a} <= position);")
        counts.append(f"always @* if (valid[{a}] && !repl[{a}]) assert (count{a} >= threshold);")
        counts.append(f"always @* if (pending[{a}]) assert (readout_count{a} >= threshold && "
                      f"readout_count{a} <= interval);")  # fmt: skip
    for a in range(acc):  # no tuple in two valid entries (the CAM hits one at most)
        for b in range(a + 1, acc):
            counts.append(f"always @* assert (!(valid[{a}] && valid[{b}] && tag{a} == tag{b}));")
    tables = []
    for i in range(n):
        tables.append(f"always @* if (s1_valid) assert (counter{i} <= position);")
        tables.append(f"always @* if (bypass_valid{i}) assert (bypass_value{i} <= position);")
        for j in range(z):
            tables.append(f"always @* if (counter_valid{i}[{j}]) "
                          f"assert (table{i}[{j}] <= position);")  # fmt: skip
    rec = f"records__payload[{kb + w - 1}:{kb}]"
    end = f"records__payload[{kb + w}]"
    records = (f"always @* if (records__valid && !{end}) "
               f"assert ({rec} >= threshold && {rec} <= interval);")  # fmt: skip
    past = _past({"rv": ("records__valid", 1), "rr": ("records__ready", 1),
                  "rp": ("records__payload", kb + w + 1)})  # fmt: skip
    handshake = ("always @* if (f_ok && f_rv && !f_rr) "
                 "assert (records__valid && records__payload == f_rp);")  # fmt: skip
    books = (
        "reg [15:0] f_accepted = 0, f_committed = 0;\n"
        "always @(posedge clk) if (rst) begin f_accepted <= 0; f_committed <= 0; end else begin\n"
        "  f_accepted <= f_accepted + (tuples__valid && tuples__ready);\n"
        "  f_committed <= f_committed + commit; end\n"
        "always @* assert (f_accepted == f_committed + s1_valid);\n"
    )  # fmt: skip
    return [
        Property("counts_within_interval",
                 "position < interval; every valid accumulator count and every valid table "
                 "counter <= position (tuples of this interval); every promoted (valid, not "
                 "replaceable) entry and every pending record >= threshold; no key in two valid "
                 "entries; records carry "
                 "threshold <= count <= interval (configuration fixed: cfg_we = 0)",
                 {"multihash": assume + "always @* assert (position < interval);\n"
                  + "\n".join(counts + tables) + "\n" + records}, maxsteps=6),
        Property("records_handshake",
                 "records: payload and valid held while valid and not ready",
                 {"multihash": past + handshake}),
        Property("tuples_committed_once",
                 "every accepted tuple is committed exactly once (accepted = committed + "
                 "the one in S1), across stalls", {"multihash": books}, maxsteps=4),
    ]


def _bram_chain(cfg) -> tuple[str, list[str]]:
    """Wires ``f_n`` / ``f_nep`` and the pipeline's consistency with ``position`` and ``epoch``.

    Walking back from ``position`` (the next accepted tuple's place in its interval)
    through the stages a, b, c, d (youngest first), each valid stage holds the
    tuple one place earlier (wrapping at the interval), ``last`` iff that place is
    ``interval - 1``, and its interval number (mod 4) is the younger one's minus
    its ``last``. What is left after d: ``f_n``, the tuples of the current
    interval that have left stage d (the flops and, with the write in e, the
    memories hold exactly their updates), and ``f_nep``, that interval's number.
    """
    w, last = cfg.counter_bits, cfg.interval_length - 1
    lines = [f"wire [{w - 1}:0] f_x_a = position;", "wire [1:0] f_ep_a = epoch;"]
    asserts = []
    order = ["a", "b", "c", "d"]
    for k, s in enumerate(order):
        nxt = order[k + 1] if k + 1 < len(order) else "n"
        here, ep = f"f_x_{s}", f"f_ep_{s}"
        lines.append(f"wire [{w - 1}:0] f_p_{s} = ({here} == 0) ? {w}'d{last} : {here} - 1;")
        asserts.append(f"always @* if ({s}_valid) assert ({s}_last == (f_p_{s} == {last}) && "
                       f"{s}_epoch == {ep} - {s}_last);")  # fmt: skip
        name = "f_n" if nxt == "n" else f"f_x_{nxt}"
        epn = "f_nep" if nxt == "n" else f"f_ep_{nxt}"
        lines.append(f"wire [{w - 1}:0] {name} = {s}_valid ? f_p_{s} : {here};")
        lines.append(f"wire [1:0] {epn} = {s}_valid ? {s}_epoch : {ep};")
    return "\n".join(lines) + "\n", asserts


def _bram_effective(cfg) -> str:
    """Wires ``f_tab<i>_<j>``, ``f_tag<w>_<s>``, ``f_cnt<p>_<w>_<s>``: each memory word
    with the write of stage e (at the end of this cycle) applied. The flag flops
    (valid, replaceable, fresh, the counters' valid bits) are updated at the end of
    stage e too; the properties read their next state (the RTL's ``*_n`` wires:
    the flops with stage e's update applied), so both describe the tuples that
    left stage d."""
    n, z, w, kb = cfg.tables, cfg.table_size, cfg.counter_bits, cfg.key_bits
    lines = []
    for i in range(n):
        for j in range(z):
            lines.append(f"wire [{w - 1}:0] f_tab{i}_{j} = (e_valid && e_cwrite && e_idx{i} == {j})"
                         f" ? e_cval{i} : table{i}[{j}];")  # fmt: skip
    for s in range(cfg.sets):
        for wy in range(cfg.ways):
            mine = f"e_valid && e_way == {wy} && e_set == {s}"
            lines.append(f"wire [{kb - 1}:0] f_tag{wy}_{s} = ({mine} && e_alloc) ? e_key : "
                         f"tags{wy}[{s}];")  # fmt: skip
            for p in (0, 1):
                lines.append(f"wire [{w - 1}:0] f_cnt{p}_{wy}_{s} = ({mine} && e_awrite && "
                             f"e_epoch[0] == {p}) ? e_acount : counts{p}_{wy}[{s}];")
    return "\n".join(lines) + "\n"


def _bram_fifo(cfg, records: bool) -> str:
    """The readout FIFO's pointers agree with its level; with ``records``, every
    occupied slot holds the end marker or a count in ``threshold..interval``."""
    kb, w = cfg.key_bits, cfg.counter_bits
    text = ("wire [1:0] f_used = produce - consume;\n"
            "always @* assert (level <= 4 && f_used == level[1:0]);\n")  # fmt: skip
    if records:
        for i in range(4):
            occupied = f"((2'd{i} - consume) & 2'd3) < level"
            word = f"storage[{i}]"
            text += (f"always @* if ({occupied}) assert ({word}[{kb + w}] || "
                     f"({word}[{kb + w - 1}:{kb}] >= {cfg.threshold} && "
                     f"{word}[{kb + w - 1}:{kb}] <= {cfg.interval_length}));\n")
    return text


def props_multihash_bram(p: dict) -> list[Property]:
    """The block RAM design's properties (``ways > 0``, hwprof/rtl/multihash_bram.py)."""
    cfg = MultiHashConfig(**p)
    n, z, w, kb = cfg.tables, cfg.table_size, cfg.counter_bits, cfg.key_bits
    ways, sets, T, L = cfg.ways, cfg.sets, cfg.threshold, cfg.interval_length
    mod = 1 << w  # stage A's registered flags and constants agree with position
    fixed = ("always @* assume (!cfg_we);\n"
             f"always @* assert (!pend && interval == {L} && threshold == {T});\n"
             f"always @* assert (position < {L});\n"
             f"always @* assert (interval_m2 == {(L - 2) % mod} && "
             f"threshold_m2 == {(T - 2) % mod});\n"
             f"always @* assert (at_last == (position == {L - 1}) && "
             f"past_thr == (position >= {(T - 1) % mod}));\n")  # fmt: skip
    chain, chain_asserts = _bram_chain(cfg)
    inv = list(chain_asserts)
    for i in range(n):  # counters: at most the tuples of this interval that left d
        for j in range(z):
            inv.append(f"always @* if (counter_valid_n{i}[{j}]) assert (f_tab{i}_{j} <= f_n);")
    for s in range(sets):
        for wy in range(ways):
            k = flag_bit(sets, s, wy)  # the entry's bit in the RTL's flag vectors
            cur = f"(f_nep[0] ? f_cnt1_{wy}_{s} : f_cnt0_{wy}_{s})"
            old = f"(ro_parity ? f_cnt1_{wy}_{s} : f_cnt0_{wy}_{s})"
            inv += [
                f"always @* if (fresh_n[{k}]) assert ({cur} <= f_n);",
                f"always @* if (valid_n[{k}] && !repl_n[{k}]) "
                f"assert (fresh_n[{k}] && {cur} >= {T});",
                f"always @* if (pending[{k}]) assert ({old} >= {T} && {old} <= {L});",
            ]  # fmt: skip
            for wb in range(wy + 1, ways):  # no key in two valid ways of a set
                inv.append(f"always @* assert (!(valid_n[{k}] && "
                           f"valid_n[{flag_bit(sets, s, wb)}] && "
                           f"f_tag{wy}_{s} == f_tag{wb}_{s}));")  # fmt: skip
    inv.append("always @* if (pending != 0 || ro_end) assert (ro_parity != f_nep[0]);")
    # The readout's set address is a register (``ro_set``, computed the cycle before
    # from pending's next state): while an entry is pending it holds the first set with
    # a pending way, the set whose words the pick reads (its way is ``first_way``, from
    # the pending flops). It holds because pending changes only at a boundary (ro_set
    # takes the first set of the new pending bits) or by a pick's clear (ro_set stays if
    # the picked set has another pending way, else takes the first pending set above
    # it); otherwise both hold. Without it the induction step never closes: from a state
    # with ro_set at a set that is not pending, a full FIFO can wait any number of
    # cycles, then the pick reads a word no invariant bounds and queues it as a record.
    pset = [" | ".join(f"pending[{flag_bit(sets, s, wy)}]" for wy in range(ways))
            for s in range(sets)]  # fmt: skip
    first = str(sets - 1)
    for s in reversed(range(sets - 1)):
        first = f"({pset[s]}) ? {s} : {first}"
    inv.append(f"always @* if (pending != 0) assert (ro_set == ({first}));")
    cnt = f"w_data[{kb + w - 1}:{kb}]"
    inv.append(f"always @* if (w_en && !w_data[{kb + w}]) "
               f"assert ({cnt} >= {T} && {cnt} <= {L});")  # fmt: skip
    rec = f"records__payload[{kb + w - 1}:{kb}]"
    inv.append(f"always @* if (records__valid && !records__payload[{kb + w}]) "
               f"assert ({rec} >= {T} && {rec} <= {L});")  # fmt: skip
    past = _past({"rv": ("records__valid", 1), "rr": ("records__ready", 1),
                  "rp": ("records__payload", kb + w + 1)})  # fmt: skip
    handshake = ("always @* if (f_ok && f_rv && !f_rr) "
                 "assert (records__valid && records__payload == f_rp);")  # fmt: skip
    inflight = " + ".join(f"{s}_valid" for s in ("a", "b", "c", "d", "e"))
    books = (
        "reg [15:0] f_accepted = 0, f_written = 0;\n"
        "always @(posedge clk) if (rst) begin f_accepted <= 0; f_written <= 0; end else begin\n"
        "  f_accepted <= f_accepted + (tuples__valid && tuples__ready);\n"
        "  f_written <= f_written + e_valid; end\n"
        f"always @* assert (f_accepted == f_written + {inflight});\n"
    )  # fmt: skip
    fifo = "multihash.fifo"
    return [
        Property("counts_within_interval",
                 "configuration fixed (cfg_we = 0 assumed); position < interval, and "
                 "stage a's registered flags (at_last, past_thr) and constants "
                 "(interval - 2, threshold - 2) agree with it and the configuration; the "
                 "pipeline a-d agrees with position and the interval number; every valid "
                 "table counter and every fresh accumulator count (the memory word with "
                 "stage e's write applied) <= f_n, the tuples of the current interval "
                 "that left stage d (so < interval); every promoted entry (valid, not "
                 "replaceable) fresh with a count >= threshold; every pending entry's "
                 "count (bank of the interval read out) and every record written to the "
                 "FIFO, held in it or presented on records: threshold <= count <= "
                 "interval; no key in two valid ways of a set; while an entry is pending "
                 "the readout's set address (the register ro_set) is the first set with a "
                 "pending way",
                 {"multihash": fixed + chain + _bram_effective(cfg) + "\n".join(inv) + "\n",
                  fifo: _bram_fifo(cfg, True)}, maxsteps=24),
        Property("records_handshake",
                 "records: payload and valid held while valid and not ready",
                 {"multihash": past + handshake, fifo: _bram_fifo(cfg, False)}),
        Property("tuples_committed_once",
                 "every accepted tuple is written exactly once (accepted = written in "
                 "stage e + valid in stages a-e), across stalls",
                 {"multihash": books}, maxsteps=4),
    ]


# --- stream compressors -------------------------------------------------------------------


def _message_handshake(top: str, payload_bits: int, single_register: bool) -> list[Property]:
    past = _past({"mv": ("messages__valid", 1), "mr": ("messages__ready", 1),
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


def _conservation(top: str, key_bits: int, count_bits: int, held: str, in_count: str = "1",
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


def _message_count_bits(top: str, p: dict) -> int:
    if top in ("sampler_counter", "sampler_cr"):
        return p["count_bits"]
    if top == "tagged_compressor":
        return p["hit_bits"] + 1
    if top == "assoc_table":
        return p["count_bits"]
    if top == "stratified" and p["sampler"] == "cr":
        return p["count_bits"]
    return p["rate"].bit_length()


def props_sampler(top: str, p: dict) -> list[Property]:
    kb, cb = p["key_bits"], _message_count_bits(top, p)
    props = _message_handshake(top, kb + cb, True)
    if top in ("sampler_random", "sampler_countdown"):
        # the sampler's LFSR (no load port, escape on): the golden model's generator
        props += _lfsr_props(f"{top}.lfsr", "register", LFSR_WIDTH, True,
                             LfsrConfig(width=LFSR_WIDTH, seed=p["seed"], steps=RAND_BITS),
                             load=False)  # fmt: skip
    if top in ("sampler_periodic", "sampler_counter", "sampler_cr"):
        bound = f"always @* assert (counter < {p['rate']});\n" if top == "sampler_periodic" \
            else ""
        props.append(_conservation(top, kb, cb, "counter", what="the counter",
                                   invariants=bound))  # fmt: skip
    return props


def props_stratified(p: dict) -> list[Property]:
    kb, cb = p["key_bits"], _message_count_bits("stratified", p)
    props = _message_handshake("stratified", kb + cb, True)
    if p["sampler"] != "random":
        total = " + ".join(f"counters[{j}]" for j in range(p["entries"]))
        bound = "" if p["sampler"] == "cr" else "\n".join(
            f"always @* assert (counters[{j}] < {p['rate']});" for j in range(p["entries"]))
        props.append(_conservation("stratified", kb, cb, total, what="the n counters",
                                   invariants=bound + "\n", sram=True))  # fmt: skip
    return props


def props_tagged(p: dict) -> list[Property]:
    kb, cb = p["key_bits"], p["hit_bits"] + 1
    tb, hb, mb = p["tag_bits"], p["hit_bits"], p["miss_bits"]
    hit = f"[{tb + hb}:{tb + 1}]"
    miss = f"[{tb + hb + mb}:{tb + hb + 1}]"
    sets = p["entries"] // p["ways"]
    words = [f"way{w}[{s}]" for w in range(p["ways"]) for s in range(sets)]
    stored = " + ".join(f"{x}{hit} + {x}{miss}" for x in words)
    hit_max = (1 << hb) - 1
    invariants = []
    for x in words:  # the states Figure 6 can reach: what makes the step inductive
        invariants += [f"always @* if (!{x}[0]) assert ({x}{miss} == 0);",
                       f"always @* if (!{x}[0]) assert ({x}{hit} < {p['replace_misses']});",
                       f"always @* assert ({x}{hit} < {hit_max});",
                       f"always @* assert ({x}{miss} < {p['replace_misses']});"]  # fmt: skip
    for s in range(sets):  # no two valid ways of a set hold the same tag
        for a in range(p["ways"]):
            for b in range(a + 1, p["ways"]):
                x, y = f"way{a}[{s}]", f"way{b}[{s}]"
                invariants.append(f"always @* assert (!({x}[0] && {y}[0] && "
                                  f"{x}[{tb}:1] == {y}[{tb}:1]));")  # fmt: skip
    invalid_miss = "\n".join(invariants)
    step = (
        f"always @* if (tuples__valid && tuples__ready) assert ("
        f"{{4'd0, \\new {hit}}} + \\new {miss} + (emit ? count : 0) "
        f"== {{4'd0, cur{hit}}} + cur{miss} + 1);\n"
    )  # fmt: skip
    return [
        *_message_handshake("tagged_compressor", kb + cb, True),
        Property("transition_preserves_count",
                 "on every accepted tuple: hit + miss of the written entry + the count sent "
                 "= hit + miss of the entry read + 1 (E1-E6); an invalid entry holds no "
                 "misses and fewer than replace_misses hits (E6 leaves the misses there); "
                 "hit < 2^hit_bits - 1, miss < replace_misses; no two valid ways of "
                 "a set share a tag", {"tagged_compressor": step + invalid_miss}),
        _conservation("tagged_compressor", kb, cb, stored,
                      what="hit + miss of every table entry", invariants=invalid_miss + "\n",
                      sram=True),
    ]


def props_assoc(p: dict) -> list[Property]:
    kb, cb, ib = p["key_bits"], p["count_bits"], p["in_count_bits"]
    k = p["entries"]
    held = " + ".join(f"(valid[{i}] ? count{i} : 0)" for i in range(k))
    unique = "".join(f"always @* assert (!(valid[{i}] && valid[{j}] && key{i} == key{j}));\n"
                     for i in range(k) for j in range(i + 1, k))  # fmt: skip
    unique += f"always @* assert (pointer < {k});\n"
    return [
        *_message_handshake("assoc_table", kb + cb, True),
        _conservation("assoc_table", kb, cb, held, in_count=f"tuples__payload[{kb + ib - 1}:{kb}]",
                      what="the counts of the valid entries (no key in two valid entries)",
                      invariants=unique),
    ]


PROPERTIES = {
    "brr": props_brr,
    "lfsr": props_lfsr,
    **{name: (lambda p, name=name: props_brr_lanes(name, p))
       for name in ("brr_decode", "brr_replicated", "brr_shared")},
    "brr_deterministic": props_brr_deterministic,
    "dispatch_filter": props_dispatch_filter,
    "multihash": props_multihash,
    "stratified": props_stratified,
    "tagged_compressor": props_tagged,
    "assoc_table": props_assoc,
    **{name: (lambda p, name=name: props_sampler(name, p))
       for name in ("sampler_random", "sampler_countdown", "sampler_periodic",
                    "sampler_counter", "sampler_cr")},
}  # fmt: skip


def properties_for(top: str, params: dict) -> list[Property]:
    """The properties of ``top`` at the resolved ``params``."""
    return PROPERTIES[top](params)
