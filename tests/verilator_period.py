"""Count brr outcomes over a full LFSR period of the generated Verilog (Verilator, C++).

A cocotb run costs ~35 us of Python per cycle; a full 2^20 - 1 period times 16
freqs is too slow that way. The native harness ``hwprof/tops/native/brr_counts.cpp``
(built by :func:`hwprof.sim.native.build_native`), for every state of one period,
sets ``freq`` to 0..15 and reads ``taken`` (the combinational outcome), then clocks
one brr (``decode_valid``). It counts, for every freq and every lag 1..8, the
states where brr ``t`` and ``t + lag`` (cyclically) are both taken, and the taken
states per freq. The counts come from the Verilog alone: nothing of the golden
model enters.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hwprof.sim.native import build_native
from hwprof.tops.brr_bench import BRR_COUNTS


def full_period_counts(verilog: str, width: int, build_dir: Path) -> dict:
    """``{"taken": [16], "both": [8][16], "back_to_start": bool}`` for the ``brr`` module.

    ``both[lag - 1][f]``: states ``t`` of the period where brr ``t`` and ``t + lag``
    are both taken at freq ``f``.
    """
    exe = build_native(verilog, "brr", BRR_COUNTS, build_root=build_dir)
    run = subprocess.run([str(exe), str((1 << width) - 1)], check=True, capture_output=True,
                         text=True)  # fmt: skip
    result = json.loads(run.stdout)
    result["back_to_start"] = bool(result["back_to_start"])
    return result
