"""Catalog entry of the multi-hash profiler (Narayanasamy et al., sections 5-7)."""

from ..block import Param, Property, Top, TraceCheck
from ..golden.multihash import MultiHashConfig
from ..rtl.multihash import MultiHash
from ..rtl.multihash_bram import flag_bit
from .multihash_bench import MultihashBench
from .sva import past_registers

PAPER = "Narayanasamy et al."
#: The proved configuration (``hwprof prove``): 2 tables x 8 counters, 8 accumulator
#: entries, intervals of 8 tuples, threshold 3 (stalls and full FIFOs are reachable),
#: for both designs, each with its own properties (:func:`props_multihash` chooses by
#: ``ways``): the block RAM design with 4 sets of 2 ways (its memories become flops for
#: yosys' ``sat``), and the fully associative CAM (``ways=0``). The defaults' 2048
#: counters are tens of thousands of flops for ``sat``.
FORMAL = {"tables": 2, "counters": 16, "counter_bits": 8, "accumulator": 8,
          "interval_length": 8, "threshold": 3, "pc_bits": 2, "value_bits": 2}


def budget(params):
    """Sec. 7: 2K 3-byte counters (6 KB); accumulator 1 KB per 100 entries (1%: 100, 0.1%: 1000).

    The fully associative accumulator (``ways=0``) is a CAM in flops: its 1 KB is a
    flop budget. The set-associative one is in block RAM: the 1 KB joins the
    memory bits (the counters' valid bits and the entries' flag bits are flops the
    paper does not count).
    """
    accumulator_bits = params["accumulator"] * 8192 // 100
    if not params.get("ways"):
        return {"memory_bits": 2048 * 24, "flops": accumulator_bits,
                "source": f"{PAPER}, sec. 7: 6 KB of counters; 1 KB accumulator at 1%, 10 KB "
                "at 0.1% (our accumulator is a CAM in flops)"}  # fmt: skip
    return {"memory_bits": 2048 * 24 + accumulator_bits,
            "source": f"{PAPER}, sec. 7: 6 KB of counters + 1 KB accumulator at 1%, 10 KB at "
            "0.1% (ours: set-associative in block RAM, two count banks)"}  # fmt: skip


def props_multihash(p: dict) -> list[Property]:
    """The properties of the design ``ways`` selects (0: the CAM, > 0: block RAM)."""
    return props_multihash_bram(p) if p["ways"] else props_multihash_cam(p)


def props_multihash_cam(p: dict) -> list[Property]:
    """The fully associative (CAM) design's properties (``ways = 0``)."""
    cfg = MultiHashConfig(**p)
    n, acc, w, kb, z = cfg.tables, cfg.accumulator, cfg.counter_bits, cfg.key_bits, cfg.table_size
    assume = ("always @* assume (!cfg_we);\n"  # so these registers keep their reset values:
              f"always @* assert (!config.pend && config.interval == {cfg.interval_length} && "
              f"config.threshold == {cfg.threshold});\n")
    # the stages' signals (hwprof/rtl/multihash_cam.py) by their hierarchical names
    ac, ct, pos = "accumulator.", "counters.", "accumulator.position"
    counts = []
    for a in range(acc):
        counts.append(f"always @* if ({ac}valid[{a}]) "
                      f"assert ({ac}count{a} <= {pos});")
        counts.append(f"always @* if ({ac}valid[{a}] && !{ac}repl[{a}]) "
                      f"assert ({ac}count{a} >= config.threshold);")
        counts.append(f"always @* if (readout.pending[{a}]) assert ({ac}readout_count{a} >= "
                      f"config.threshold && {ac}readout_count{a} <= config.interval);")  # fmt: skip
    for a in range(acc):  # no tuple in two valid entries (the CAM hits one at most)
        for b in range(a + 1, acc):
            counts.append(f"always @* assert (!({ac}valid[{a}] && {ac}valid[{b}] && "
                          f"{ac}tag{a} == {ac}tag{b}));")
    tables = []
    for i in range(n):
        tables.append(f"always @* if (hash.s1_valid) assert ({ct}counter{i} <= {pos});")
        tables.append(f"always @* if ({ct}bypass_valid{i}) "
                      f"assert ({ct}bypass_value{i} <= {pos});")
        for j in range(z):
            tables.append(f"always @* if ({ct}counter_valid{i}[{j}]) "
                          f"assert (table{i}[{j}] <= {pos});")  # fmt: skip
    rec = f"records__payload[{kb + w - 1}:{kb}]"
    end = f"records__payload[{kb + w}]"
    records = (f"always @* if (records__valid && !{end}) "
               f"assert ({rec} >= config.threshold && {rec} <= config.interval);")  # fmt: skip
    past = past_registers({"rv": ("records__valid", 1), "rr": ("records__ready", 1),
                  "rp": ("records__payload", kb + w + 1)})  # fmt: skip
    handshake = ("always @* if (f_ok && f_rv && !f_rr) "
                 "assert (records__valid && records__payload == f_rp);")  # fmt: skip
    books = (
        "reg [15:0] f_accepted = 0, f_committed = 0;\n"
        "always @(posedge clk) if (rst) begin f_accepted <= 0; f_committed <= 0; end else begin\n"
        "  f_accepted <= f_accepted + (tuples__valid && tuples__ready);\n"
        "  f_committed <= f_committed + accumulator.commit; end\n"
        "always @* assert (f_accepted == f_committed + hash.s1_valid);\n"
    )  # fmt: skip
    return [
        Property("counts_within_interval",
                 "position < interval; every valid accumulator count and every valid table "
                 "counter <= position (tuples of this interval); every promoted (valid, not "
                 "replaceable) entry and every pending record >= threshold; no key in two valid "
                 "entries; records carry "
                 "threshold <= count <= interval (configuration fixed: cfg_we = 0)",
                 {"multihash": assume + f"always @* assert ({pos} < config.interval);\n"
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
    lines = [f"wire [{w - 1}:0] f_x_a = stage_a.position;", "wire [1:0] f_ep_a = stage_a.epoch;"]
    asserts = []
    order = ["a", "b", "c", "d"]
    for k, s in enumerate(order):
        nxt = order[k + 1] if k + 1 < len(order) else "n"
        here, ep = f"f_x_{s}", f"f_ep_{s}"
        lines.append(f"wire [{w - 1}:0] f_p_{s} = ({here} == 0) ? {w}'d{last} : {here} - 1;")
        r = f"stage_{s}.{s}"  # the stage's registers
        asserts.append(f"always @* if ({r}_valid) assert ({r}_last == (f_p_{s} == {last}) && "
                       f"{r}_epoch == {ep} - {r}_last);")  # fmt: skip
        name = "f_n" if nxt == "n" else f"f_x_{nxt}"
        epn = "f_nep" if nxt == "n" else f"f_ep_{nxt}"
        lines.append(f"wire [{w - 1}:0] {name} = {r}_valid ? f_p_{s} : {here};")
        lines.append(f"wire [1:0] {epn} = {r}_valid ? {r}_epoch : {ep};")
    return "\n".join(lines) + "\n", asserts


def _bram_effective(cfg) -> str:
    """Wires ``f_tab<i>_<j>``, ``f_tag<w>_<s>``, ``f_cnt<p>_<w>_<s>``: each memory word
    with the write of stage e (at the end of this cycle) applied. The flag flops
    (valid, replaceable, fresh, the counters' valid bits) are updated at the end of
    stage e too; the properties read their next state (the RTL's ``*_n`` wires:
    the flops with stage e's update applied), so both describe the tuples that
    left stage d."""
    n, z, w, kb = cfg.tables, cfg.table_size, cfg.counter_bits, cfg.key_bits
    e = "stage_d.e_"  # the E registers (written at the end of stage D)
    lines = []
    for i in range(n):
        for j in range(z):
            lines.append(f"wire [{w - 1}:0] f_tab{i}_{j} = ({e}valid && {e}cwrite && "
                         f"{e}idx{i} == {j}) ? {e}cval{i} : table{i}[{j}];")  # fmt: skip
    for s in range(cfg.sets):
        for wy in range(cfg.ways):
            mine = f"{e}valid && {e}way == {wy} && {e}set == {s}"
            lines.append(f"wire [{kb - 1}:0] f_tag{wy}_{s} = ({mine} && {e}alloc) ? {e}key : "
                         f"tags{wy}[{s}];")  # fmt: skip
            for p in (0, 1):
                lines.append(f"wire [{w - 1}:0] f_cnt{p}_{wy}_{s} = ({mine} && {e}awrite && "
                             f"{e}epoch[0] == {p}) ? {e}acount : counts{p}_{wy}[{s}];")
    return "\n".join(lines) + "\n"


def _bram_fifo(cfg, records: bool) -> str:
    """The readout FIFO's pointers agree with its level; with ``records``, every
    occupied slot holds the end marker or a count in ``threshold..interval``."""
    kb, w = cfg.key_bits, cfg.counter_bits
    fifo = "readout.fifo"
    text = (f"wire [1:0] f_used = {fifo}.produce - {fifo}.consume;\n"
            f"always @* assert ({fifo}.level <= 4 && f_used == {fifo}.level[1:0]);\n")  # fmt: skip
    if records:
        for i in range(4):
            occupied = f"((2'd{i} - {fifo}.consume) & 2'd3) < {fifo}.level"
            word = f"{fifo}.storage[{i}]"
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
    a = "stage_a"
    fixed = ("always @* assume (!cfg_we);\n"
             f"always @* assert (!config.pend && config.interval == {L} && "
             f"config.threshold == {T});\n"
             f"always @* assert ({a}.position < {L});\n"
             f"always @* assert ({a}.interval_m2 == {(L - 2) % mod} && "
             f"{a}.threshold_m2 == {(T - 2) % mod});\n"
             f"always @* assert ({a}.at_last == ({a}.position == {L - 1}) && "
             f"{a}.past_thr == ({a}.position >= {(T - 1) % mod}));\n")  # fmt: skip
    chain, chain_asserts = _bram_chain(cfg)
    inv = list(chain_asserts)
    for i in range(n):  # counters: at most the tuples of this interval that left d
        for j in range(z):
            inv.append(f"always @* if (stage_e.counter_valid_n{i}[{j}]) "
                       f"assert (f_tab{i}_{j} <= f_n);")
    for s in range(sets):
        for wy in range(ways):
            k = flag_bit(sets, s, wy)  # the entry's bit in the RTL's flag vectors
            cur = f"(f_nep[0] ? f_cnt1_{wy}_{s} : f_cnt0_{wy}_{s})"
            old = f"(readout.ro_parity ? f_cnt1_{wy}_{s} : f_cnt0_{wy}_{s})"
            inv += [
                f"always @* if (stage_e.fresh_n[{k}]) assert ({cur} <= f_n);",
                f"always @* if (stage_e.valid_n[{k}] && !stage_e.repl_n[{k}]) "
                f"assert (stage_e.fresh_n[{k}] && {cur} >= {T});",
                f"always @* if (stage_e.pending[{k}]) assert ({old} >= {T} && {old} <= {L});",
            ]  # fmt: skip
            for wb in range(wy + 1, ways):  # no key in two valid ways of a set
                inv.append(f"always @* assert (!(stage_e.valid_n[{k}] && "
                           f"stage_e.valid_n[{flag_bit(sets, s, wb)}] && "
                           f"f_tag{wy}_{s} == f_tag{wb}_{s}));")  # fmt: skip
    inv.append("always @* if (stage_e.pending != 0 || readout.ro_end) "
               "assert (readout.ro_parity != f_nep[0]);")
    # The readout's set address is a register (``ro_set``, computed the cycle before
    # from pending's next state): while an entry is pending it holds the first set with
    # a pending way, the set whose words the pick reads (its way is ``first_way``, from
    # the pending flops). It holds because pending changes only at a boundary (ro_set
    # takes the first set of the new pending bits) or by a pick's clear (ro_set stays if
    # the picked set has another pending way, else takes the first pending set above
    # it); otherwise both hold. Without it the induction step never closes: from a state
    # with ro_set at a set that is not pending, a full FIFO can wait any number of
    # cycles, then the pick reads a word no invariant bounds and queues it as a record.
    pset = [" | ".join(f"stage_e.pending[{flag_bit(sets, s, wy)}]" for wy in range(ways))
            for s in range(sets)]  # fmt: skip
    first = str(sets - 1)
    for s in reversed(range(sets - 1)):
        first = f"({pset[s]}) ? {s} : {first}"
    inv.append(f"always @* if (stage_e.pending != 0) assert (readout.ro_set == ({first}));")
    cnt = f"readout.fifo.w_data[{kb + w - 1}:{kb}]"
    inv.append(f"always @* if (readout.fifo.w_en && !readout.fifo.w_data[{kb + w}]) "
               f"assert ({cnt} >= {T} && {cnt} <= {L});")  # fmt: skip
    rec = f"records__payload[{kb + w - 1}:{kb}]"
    inv.append(f"always @* if (records__valid && !records__payload[{kb + w}]) "
               f"assert ({rec} >= {T} && {rec} <= {L});")  # fmt: skip
    past = past_registers({"rv": ("records__valid", 1), "rr": ("records__ready", 1),
                  "rp": ("records__payload", kb + w + 1)})  # fmt: skip
    handshake = ("always @* if (f_ok && f_rv && !f_rr) "
                 "assert (records__valid && records__payload == f_rp);")  # fmt: skip
    inflight = " + ".join(f"stage_{s}.{s}_valid" for s in "abcd") + " + stage_d.e_valid"
    books = (
        "reg [15:0] f_accepted = 0, f_written = 0;\n"
        "always @(posedge clk) if (rst) begin f_accepted <= 0; f_written <= 0; end else begin\n"
        "  f_accepted <= f_accepted + (tuples__valid && tuples__ready);\n"
        "  f_written <= f_written + stage_d.e_valid; end\n"
        f"always @* assert (f_accepted == f_written + {inflight});\n"
    )  # fmt: skip
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
                 {"multihash": fixed + chain + _bram_effective(cfg) + "\n".join(inv) + "\n"
                  + _bram_fifo(cfg, True)}, maxsteps=24),
        Property("records_handshake",
                 "records: payload and valid held while valid and not ready",
                 {"multihash": past + handshake + "\n" + _bram_fifo(cfg, False)}),
        Property("tuples_committed_once",
                 "every accepted tuple is written exactly once (accepted = written in "
                 "stage e + valid in stages a-e), across stalls",
                 {"multihash": books}, maxsteps=4),
    ]



def golden_model(params):
    from ..golden.multihash import MultiHashProfiler

    return MultiHashProfiler(**params)


def golden_profiles(params, keys):
    """The interval profiles of ``keys`` (the golden bulk path)."""
    from ..golden.multihash import run_fast

    return run_fast(keys, **params)


def readout_profiles(run) -> list[list[tuple[int, int]]]:
    """The records of a stream-harness run (:class:`hwprof.sim.native.StreamRun`) as
    interval profiles: ``(key, count)`` lists split at the ``end`` markers (what follows
    the last marker is dropped)."""
    profiles, current = [], []
    for key, count, end in zip(run.fields["key"].tolist(), run.fields["count"].tolist(),
                               run.fields["end"].tolist(), strict=True):  # fmt: skip
        if end:
            profiles.append(current)
            current = []
        else:
            current.append((key, count))
    return profiles


def readout_cycles(params) -> int:
    """Cycles after the last tuple that cover the last interval's readout."""
    return 4 * params["accumulator"] + 64


TOPS = [
    Top(
        name="multihash",
        native_bench=MultihashBench,
        trace_check=TraceCheck(golden_model, profiles=golden_profiles, readout=readout_profiles,
                               drain=readout_cycles),  # fmt: skip
        properties=props_multihash,
        formal_params=({**FORMAL, "ways": 2}, {**FORMAL, "ways": 0}),
        description="multi-hash interval profiler, conservative update, 1 tuple/cycle "
        "(Narayanasamy et al.)",
        build=MultiHash,
        params=(
            Param.golden(MultiHashConfig, "tables", "hash tables n (1 = single hash)"),
            Param.golden(MultiHashConfig, "counters",
                         "total counters (counters/tables a power of two)"),
            Param.golden(MultiHashConfig, "counter_bits", "counter width, 8..32"),
            Param.golden(MultiHashConfig, "accumulator", "accumulator (CAM) entries"),
            Param.golden(MultiHashConfig, "interval_length",
                         "reset value of the interval register"),
            Param.golden(MultiHashConfig, "threshold", "reset value of the threshold register"),
            Param.golden(MultiHashConfig, "pc_bits", "pc field width"),
            Param.golden(MultiHashConfig, "value_bits", "value field width"),
            Param.golden(MultiHashConfig, "retain", "P1: retain candidates into the next interval"),
            Param.golden(MultiHashConfig, "reset", "R1: reset the counters of a promoted tuple"),
            Param.golden(MultiHashConfig, "conservative", "C1: conservative update"),
            Param.golden(MultiHashConfig, "hash_seed", "table seed of hash function 0"),
            Param("ways", 4, "int", "accumulator: W-way set-associative in block RAM, "
                  "pipelined (0 = the paper's fully associative CAM in flops)"),
        ),
        budget=budget,
        variants=({},),
        # The fully associative CAM (ways=0) of 100 entries is the paper's design; its
        # 1000-entry form and the 1M / 0.1% configuration take long in yosys/ABC
        # (docs/multihash.md), so only `hwprof report --all`.
        slow_variants=({"accumulator": 1000, "interval_length": 1_000_000, "threshold": 1000},
                       {"ways": 0},
                       {"ways": 0, "accumulator": 1000, "interval_length": 1_000_000,
                        "threshold": 1000}),
        cocotb_module="test_multihash",
    ),
]
