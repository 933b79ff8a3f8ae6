"""Catalog entries of the stratified-sampling compressors (Sastry, Bodik & Smith)."""

from ..catalog import Param, Top
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

PAPER = "Sastry, Bodik & Smith"
RATE = Param("rate", 256, "int", "sampling rate r, 2..65536")
KEY = Param("key_bits", 64, "int", "tuple width (pc and value)")
PC = Param("pc_bits", 32, "int", "pc field width (top bits of the tuple)")
SEED = Param("seed", 1, "int", "32-bit LFSR reset state, non-zero")
HASH = Param("hash_seed", 1, "int", "table seed of the shared profiler hash")
COUNT = Param("count_bits", 16, "int", "counter / message count width")
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


TOPS = [
    Top(
        name="sampler_random",
        description="R_r random sampler: probability ~1/r from a 32-bit LFSR (Sastry et al.)",
        build=RandomSampler,
        params=(RATE, KEY, SEED),
        variants=({}, {"rate": 10}),
        cocotb_module="test_samplers",
    ),
    Top(
        name="sampler_countdown",
        description="countdown sampler, reload <1, 2r>, 2r folded to r (mean gap r; Sastry et al.)",
        build=CountdownSampler,
        params=(RATE, KEY, SEED),
        cocotb_module="test_samplers",
    ),
    Top(
        name="sampler_periodic",
        description="P_r periodic sampler: every r-th tuple (Sastry et al.)",
        build=PeriodicSampler,
        params=(RATE, KEY),
        cocotb_module="test_samplers",
    ),
    Top(
        name="sampler_counter",
        description="C counter: reports the tuple that saturates it (Sastry et al.)",
        build=Counter,
        params=(COUNT, KEY),
        cocotb_module="test_samplers",
    ),
    Top(
        name="sampler_cr",
        description="CR_r random sampler with a counter (Sastry et al.)",
        build=CountingRandomSampler,
        params=(RATE, COUNT, KEY, SEED),
        cocotb_module="test_samplers",
    ),
    Top(
        name="stratified",
        description="H[X_r]_n stratified sampler, default H[P_256]_2048, shared hash (Sastry)",
        build=Stratified,
        params=(
            RATE,
            Param("entries", 2048, "int", "n counters, a power of two"),
            KEY,
            PC,
            HASH,
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
            RATE,
            Param("entries", 2048, "int", "n counters, a power of two"),
            KEY,
            PC,
            HASH,
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
