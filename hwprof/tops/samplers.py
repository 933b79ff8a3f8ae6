"""Catalog entries of the stratified-sampling compressors (Sastry, Bodik & Smith)."""

from functools import partial

from ..block import Param, Property, Top, TraceCheck
from ..golden.lfsr import LfsrConfig
from ..golden.samplers import LFSR_WIDTH, RAND_BITS
from ..rtl.samplers import (
    SKID_DEFAULT,
    AssocTable,
    CountdownSampler,
    Counter,
    CountingRandomSampler,
    PeriodicSampler,
    RandomSampler,
    Stratified,
    StratifiedPipeline,
)
from ..rtl.tagged import TaggedCompressor
from .sva import conservation, lfsr_props, message_handshake

PAPER = "Sastry, Bodik & Smith"
RATE = Param("rate", 256, "int", "sampling rate r, 2..65536")
KEY = Param("key_bits", 64, "int", "tuple width (pc and value)")
PC = Param("pc_bits", 32, "int", "pc field width (top bits of the tuple)")
SEED = Param("seed", 1, "int", "32-bit LFSR reset state, non-zero")
HASH = Param("hash_seed", 1, "int", "table seed of the shared profiler hash")
COUNT = Param("count_bits", 16, "int", "counter / message count width")
#: The parameters of H[X_r]_n's rate, table and hash (both stratified tops).
HASHED = (RATE, Param("entries", 2048, "int", "n counters, a power of two"), KEY, PC, HASH)
SKID = Param("skid", False, "bool", "register tuples.ready and messages.valid (a skid buffer "
             "after the output register; one more cycle of latency)")


def stratified_budget(params):
    if params["sampler"] != "periodic":
        return None
    counter_bits = (params["rate"] - 1).bit_length()
    return {
        "memory_bits": params["entries"] * counter_bits,
        "source": f"{PAPER}, sec. 3.5/4.2: n counters of log2(r) bits (2048 x 8 at r = 256)",
    }


def tagged_budget(params):
    bits = 1 + params["tag_bits"] + params["hit_bits"] + params["miss_bits"]
    return {
        "memory_bits": params["entries"] * bits,
        "source": f"{PAPER}, sec. 4.2: hit counter + tag + 3-bit miss counter + 1 state bit "
        "per entry (1-bit tag: 13 bits, +62% over the stratified table)",
    }


def assoc_budget(params):
    return {
        "flops": params["entries"] * (params["key_bits"] + 8),
        "source": f"{PAPER}, sec. 3.4: two 32-bit words and a 1-byte counter per entry",
    }


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
    props = message_handshake(top, kb + cb, True)
    if top in ("sampler_random", "sampler_countdown"):
        # the sampler's LFSR (no load port, escape on): the golden model's generator
        props += lfsr_props(f"{top}.lfsr", "register", LFSR_WIDTH, True,
                             LfsrConfig(width=LFSR_WIDTH, seed=p["seed"], steps=RAND_BITS),
                             load=False)  # fmt: skip
    if top in ("sampler_periodic", "sampler_counter", "sampler_cr"):
        bound = f"always @* assert (counter < {p['rate']});\n" if top == "sampler_periodic" \
            else ""
        props.append(conservation(top, kb, cb, "counter", what="the counter",
                                   invariants=bound))  # fmt: skip
    return props


def props_stratified(p: dict) -> list[Property]:
    kb, cb = p["key_bits"], _message_count_bits("stratified", p)
    props = message_handshake("stratified", kb + cb, True)
    if p["sampler"] != "random":
        total = " + ".join(f"counters[{j}]" for j in range(p["entries"]))
        bound = "" if p["sampler"] == "cr" else "\n".join(
            f"always @* assert (counters[{j}] < {p['rate']});" for j in range(p["entries"]))
        props.append(conservation("stratified", kb, cb, total, what="the n counters",
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
        *message_handshake("tagged_compressor", kb + cb, True),
        Property("transition_preserves_count",
                 "on every accepted tuple: hit + miss of the written entry + the count sent "
                 "= hit + miss of the entry read + 1 (E1-E6); an invalid entry holds no "
                 "misses and fewer than replace_misses hits (E6 leaves the misses there); "
                 "hit < 2^hit_bits - 1, miss < replace_misses; no two valid ways of "
                 "a set share a tag", {"tagged_compressor": step + invalid_miss}),
        conservation("tagged_compressor", kb, cb, stored,
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
        *message_handshake("assoc_table", kb + cb, True),
        conservation("assoc_table", kb, cb, held, in_count=f"tuples__payload[{kb + ib - 1}:{kb}]",
                      what="the counts of the valid entries (no key in two valid entries)",
                      invariants=unique),
    ]



#: The golden Stratified's parameters among the top's.
STRATIFIED_GOLDEN = ("rate", "entries", "key_bits", "pc_bits", "hash_seed", "sampler", "seed",
                     "count_bits", "latency", "skid")  # fmt: skip
#: Cycle-model parameters (when messages leave), not what the bulk paths count.
TIMING = ("latency", "skid")


def stratified_model(params):
    from ..golden.samplers import Stratified as Golden

    return Golden(**{k: params[k] for k in STRATIFIED_GOLDEN if k in params})


def stratified_counts(params, keys):
    """Counts of the bulk path (64-bit tuples, 32-bit pc, periodic sampler only)."""
    from ..golden.compressors_fast import stratified_counts as counts

    if (params["key_bits"], params["pc_bits"]) != (64, 32) or params["sampler"] != "periodic":
        return None
    return counts(keys, params["rate"], params["entries"], params["hash_seed"])


def tagged_model(params):
    from ..golden.tagged import TaggedCompressor as Golden

    return Golden(**params)


def tagged_counts(params, keys):
    """Counts of the bulk path (64-bit tuples, 32-bit pc only)."""
    from ..golden.compressors_fast import tagged_counts as counts

    if (params["key_bits"], params["pc_bits"]) != (64, 32):
        return None
    return counts(keys, **{k: v for k, v in params.items() if k not in TIMING})[0]


def _sampler(name, build, params, formal, description, **options) -> Top:
    """A single sampler's entry (its properties, cocotb module and formal form alike)."""
    return Top(name=name, properties=partial(props_sampler, name), formal_params=(formal,),
               description=description, build=build, params=params,
               cocotb_module="test_samplers", **options)  # fmt: skip


TOPS = [
    _sampler("sampler_random", RandomSampler, (RATE, KEY, SEED), {"rate": 4, "key_bits": 8},
             "R_r random sampler: probability ~1/r from a 32-bit LFSR (Sastry et al.)",
             variants=({}, {"rate": 10})),
    _sampler("sampler_countdown", CountdownSampler, (RATE, KEY, SEED),
             {"rate": 4, "key_bits": 8},
             "countdown sampler, reload <1, 2r>, 2r folded to r (mean gap r; Sastry et al.)"),
    _sampler("sampler_periodic", PeriodicSampler, (RATE, KEY), {"rate": 5, "key_bits": 8},
             "P_r periodic sampler: every r-th tuple (Sastry et al.)"),
    _sampler("sampler_counter", Counter, (COUNT, KEY), {"count_bits": 4, "key_bits": 8},
             "C counter: reports the tuple that saturates it (Sastry et al.)"),
    _sampler("sampler_cr", CountingRandomSampler, (RATE, COUNT, KEY, SEED),
             {"rate": 4, "count_bits": 4, "key_bits": 8},
             "CR_r random sampler with a counter (Sastry et al.)"),
    Top(
        name="stratified",
        trace_check=TraceCheck(stratified_model, counts=stratified_counts),
        # the stream compressors' properties are stated on the latency-1 form (one update
        # per accepted tuple, in the accept cycle); the pipelined forms are checked
        # against the golden models by simulation (docs/samplers.md)
        properties=props_stratified,
        formal_params=({"rate": 4, "entries": 4, "key_bits": 4, "pc_bits": 2, "latency": 1},),
        description="H[X_r]_n stratified sampler, default H[P_256]_2048, shared hash (Sastry)",
        build=Stratified,
        params=(
            *HASHED,
            Param("sampler", "periodic", "str", "X of H[X]_n: periodic, cr or random"),
            SEED,
            COUNT,
            Param("latency", 3, "int", "1: counter read/update in the accept cycle (async "
                  "read); 3: block RAM pipeline with bypass (docs/fpga.md)"),
            SKID,
        ),
        budget=stratified_budget,
        variants=({}, {"rate": 512}, {"sampler": "cr"}),
        cocotb_module="test_samplers",
    ),
    Top(
        name="stratified_pipeline",
        description="H[P_r]_n A_k + message buffer with interrupt (Sastry et al., sec. 3.4)",
        build=StratifiedPipeline,
        params=(
            *HASHED,
            Param("assoc_entries", 16, "int", "k entries of A_k"),
            COUNT,
            Param("depth", 100, "int", "message buffer depth (interrupt when full)"),
            Param("skid", SKID_DEFAULT, "bool", "a skid buffer after H[P] and after A_k "
                  "(registered ready between the stages; one more cycle in each)"),
        ),
        cocotb_module="test_samplers",
    ),
    Top(
        name="tagged_compressor",
        trace_check=TraceCheck(tagged_model, counts=tagged_counts),
        properties=props_tagged,
        formal_params=({"entries": 4, "ways": 2, "tag_bits": 2, "hit_bits": 4, "miss_bits": 2,
                        "evict_hits": 4, "replace_misses": 3, "key_bits": 4, "pc_bits": 2,
                        "latency": 1},),
        description="tagged compressor: partial tags, hit/miss counters, Fig. 6 FSM",
        build=TaggedCompressor,
        params=(
            Param("entries", 2048, "int", "table entries, a power of two"),
            Param("ways", 2, "int", "associativity"),
            Param("tag_bits", 2, "int", "partial tag width"),
            Param("hit_bits", 8, "int", "hit counter width"),
            Param("miss_bits", 3, "int", "miss counter width"),
            Param("evict_hits", 8, "int", "ShouldEvict: hits to report an Evict entry"),
            Param("replace_misses", 7, "int", "ShouldReplace: misses to give up"),
            KEY,
            PC,
            HASH,
            Param("latency", 3, "int", "1: table read/update in the accept cycle (async "
                  "reads); 3: block RAM pipeline with bypass (docs/fpga.md)"),
            SKID,
        ),
        budget=tagged_budget,
        variants=({}, {"tag_bits": 1}),
        cocotb_module="test_samplers",
    ),
    Top(
        name="assoc_table",
        properties=props_assoc,
        formal_params=({"entries": 3, "key_bits": 4, "in_count_bits": 3, "count_bits": 5,
                        "latency": 1},),
        description="A_k associative counter table, lossless second level (Sastry et al.)",
        build=AssocTable,
        params=(
            Param("entries", 16, "int", "k entries"),
            KEY,
            Param("in_count_bits", 9, "int", "input message count width"),
            COUNT,
            Param("latency", 2, "int", "1: compare and update in the accept cycle; 2: the "
                  "key compares registered, with forwarding (docs/fpga.md)"),
            SKID,
        ),
        budget=assoc_budget,
        cocotb_module="test_samplers",
    ),
]
