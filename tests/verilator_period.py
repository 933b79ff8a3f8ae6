"""Count brr outcomes over a full LFSR period of the generated Verilog (Verilator, C++).

A cocotb run costs ~35 us of Python per cycle; a full 2^20 - 1 period times 16
freqs is too slow that way. This helper verilates the top's Verilog with a small
C++ harness that, for every state of one period, sets ``freq`` to 0..15 and reads
``taken`` (the combinational outcome), then clocks one brr (``decode_valid``).
It counts, for every freq and every lag 1..8, the states where brr ``t`` and
``t + lag`` (cyclically) are both taken, and the taken states per freq. The
counts come from the Verilog alone: nothing of the golden model enters.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hwprof.sim.runner import VERILATOR_WAIVED_WARNINGS, verilator_environment

HARNESS = r"""
#include <cstdio>
#include <cstdint>
#include <vector>
#include "Vbrr.h"
#include "verilated.h"

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    const uint64_t period = std::strtoull(argv[1], nullptr, 10);
    const int lags = 8;
    Vbrr* top = new Vbrr;
    top->clk = 0; top->rst = 1; top->decode_valid = 0; top->load_valid = 0; top->freq = 0;
    top->eval(); top->clk = 1; top->eval(); top->clk = 0; top->rst = 0; top->eval();
    std::vector<uint16_t> taken(period);
    uint64_t first_state = top->state;
    for (uint64_t t = 0; t < period; ++t) {
        uint16_t bits = 0;
        for (int f = 0; f < 16; ++f) {
            top->freq = f; top->eval();
            bits |= (uint16_t)(top->taken & 1) << f;
        }
        taken[t] = bits;
        top->decode_valid = 1; top->eval();
        top->clk = 1; top->eval(); top->clk = 0; top->eval();
        top->decode_valid = 0; top->eval();
    }
    std::printf("{\"back_to_start\": %d, \"taken\": [", (uint64_t)top->state == first_state);
    for (int f = 0; f < 16; ++f) {
        uint64_t n = 0;
        for (uint64_t t = 0; t < period; ++t) n += (taken[t] >> f) & 1;
        std::printf("%s%llu", f ? ", " : "", (unsigned long long)n);
    }
    std::printf("], \"both\": [");
    for (int lag = 1; lag <= lags; ++lag) {
        uint64_t n[16] = {0};
        for (uint64_t t = 0; t < period; ++t) {
            uint16_t both = taken[t] & taken[(t + lag) % period];
            for (int f = 0; f < 16; ++f) n[f] += (both >> f) & 1;
        }
        std::printf("%s[", lag > 1 ? ", " : "");
        for (int f = 0; f < 16; ++f) std::printf("%s%llu", f ? ", " : "", (unsigned long long)n[f]);
        std::printf("]");
    }
    std::printf("]}\n");
    delete top;
    return 0;
}
"""


def full_period_counts(verilog: str, width: int, build_dir: Path) -> dict:
    """``{"taken": [16], "both": [8][16], "back_to_start": bool}`` for the ``brr`` module.

    ``both[lag - 1][f]``: states ``t`` of the period where brr ``t`` and ``t + lag``
    are both taken at freq ``f``.
    """
    verilator_environment()
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / "brr.v").write_text(verilog)
    (build_dir / "harness.cpp").write_text(HARNESS)
    waived = [f"-Wno-{w}" for w in VERILATOR_WAIVED_WARNINGS]
    subprocess.run(
        ["verilator", "--cc", "--exe", "--build", "-j", "1", "-O3", "--top-module", "brr",
         *waived, "-CFLAGS", "-O2", "brr.v", "harness.cpp", "-o", "period"],
        cwd=build_dir, check=True, capture_output=True, text=True,
    )  # fmt: skip
    run = subprocess.run([str(build_dir / "obj_dir" / "period"), str((1 << width) - 1)],
                         check=True, capture_output=True, text=True)  # fmt: skip
    result = json.loads(run.stdout)
    result["back_to_start"] = bool(result["back_to_start"])
    return result
