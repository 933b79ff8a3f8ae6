"""Catalog entry of the multi-hash profiler (Narayanasamy et al., sections 5-7)."""

from ..catalog import Param, Top
from ..rtl.multihash import MultiHash

PAPER = "Narayanasamy et al."


def budget(params):
    """Sec. 7: 2K 3-byte counters (6 KB); accumulator 1 KB per 100 entries (1%: 100, 0.1%: 1000)."""
    return {
        "memory_bits": 2048 * 24,
        "flops": params["accumulator"] * 8192 // 100,
        "source": f"{PAPER}, sec. 7: 6 KB of counters; 1 KB accumulator at 1%, 10 KB at 0.1% "
        "(our accumulator is a CAM in flops)",
    }


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
        ),
        budget=budget,
        variants=({},),
        # The paper's 1M / 0.1% configuration: its 1000-entry CAM takes about half
        # an hour in yosys/ABC (docs/multihash.md), so only `hwprof report --all`.
        slow_variants=({"accumulator": 1000, "interval_length": 1_000_000, "threshold": 1000},),
        cocotb_module="test_multihash",
    ),
]
