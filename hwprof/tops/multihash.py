"""Catalog entry of the multi-hash profiler (Narayanasamy et al., sections 5-7)."""

from ..catalog import Param, Top
from ..rtl.multihash import MultiHash

PAPER = "Narayanasamy et al."


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


TOPS = [
    Top(
        name="multihash",
        description="multi-hash interval profiler, conservative update, 1 tuple/cycle "
        "(Narayanasamy et al.)",
        build=MultiHash,
        params=(
            Param("tables", 4, "int", "hash tables n (1 = single hash)"),
            Param("counters", 2048, "int", "total counters (counters/tables a power of two)"),
            Param("counter_bits", 24, "int", "counter width, 8..32"),
            Param("accumulator", 100, "int", "accumulator (CAM) entries"),
            Param("interval_length", 10_000, "int", "reset value of the interval register"),
            Param("threshold", 100, "int", "reset value of the threshold register"),
            Param("pc_bits", 32, "int", "pc field width"),
            Param("value_bits", 32, "int", "value field width"),
            Param("retain", True, "bool", "P1: retain candidates into the next interval"),
            Param("reset", False, "bool", "R1: reset the counters of a promoted tuple"),
            Param("conservative", True, "bool", "C1: conservative update"),
            Param("hash_seed", 1, "int", "table seed of hash function 0"),
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
