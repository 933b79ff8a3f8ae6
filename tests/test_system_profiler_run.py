"""The multi-hash profiler inside the running system: PicoRV32's own loads, read back
by firmware over the CSR map (hwprof_mh.h), against the golden multi-hash model.

tests/system_programs/mh_profile.c loads MH_VALUES[] one by one with a single load
instruction, so the tuple stream is known: ``<pc of that lw, MH_VALUES[i]>``. The
profile it prints must be the golden model's on that stream, and the profiler must
have been offered exactly those loads (none dropped: its clock is the core's).

Two builds, shared with tests/test_system_value_profile.py: hash seed 1 with the FIFO of
16 entries, and hash seed 7 with a FIFO of 2 (the simulation clocks the profiler on its
own, at the core's frequency here).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hwprof.golden.multihash import run_plain
from hwprof.system import sim
from hwprof.system.firmware import compile_program
from hwprof.system.profiler import parse_profile_output

PROGRAMS = Path(__file__).resolve().parent / "system_programs"
FIRMWARE = Path(__file__).resolve().parent.parent / "hwprof" / "system" / "firmware"
#: a small profiler (a quick Verilator build): 4 tables of 64 counters, 16 entries
PROFILER = {"tables": 4, "counters": 256, "counter_bits": 16, "accumulator": 16, "ways": 4}
INTERVAL, THRESHOLD = 200, 20
pytestmark = pytest.mark.cocotb  # Verilator tier


def stream(rng, n):
    """Load values with heavy hitters: a skewed draw from 40 random words."""
    pool = rng.integers(0, 1 << 32, size=40, dtype=np.uint64)
    weights = 1.0 / np.arange(1, 41) ** 1.2
    return [int(v) for v in pool[rng.choice(40, size=n, p=weights / weights.sum())]]


def run_profile(exe, values, work):
    work.mkdir(parents=True, exist_ok=True)
    words = ", ".join(f"0x{v:08x}u" for v in values)
    (work / "mh_stream.h").write_text(
        f"#define MH_N {len(values)}\n#define MH_INTERVAL {INTERVAL}\n"
        f"#define MH_THRESHOLD {THRESHOLD}\nstatic const uint32_t MH_VALUES[MH_N] = "
        f"{{{words}}};\n")  # fmt: skip
    program = compile_program([PROGRAMS / "mh_profile.c"], work / "fw",
                              extra_flags=(f"-I{FIRMWARE}", f"-I{work}"))  # fmt: skip
    run = sim.run_image(exe, program.image, cycles=2_000_000, seed=1, work=work, events=False)
    assert run.status == "exit" and run.exit_code == 0, run.output
    return parse_profile_output(run.output)


@pytest.mark.parametrize("build", [{"hash_seed": 1}, {"hash_seed": 7, "fifo_depth": 2}],
                         ids=["seed1", "seed7-fifo2"])  # fmt: skip
def test_profile_read_back_by_firmware_equals_golden(build, tmp_path, seed):
    params = PROFILER | build
    exe = sim.build_system(profiler=params | {"own_clock": True})
    rng = np.random.default_rng(seed)
    values = stream(rng, 2 * INTERVAL)
    profiles, fields = run_profile(exe, values, tmp_path)
    pc = fields["P"][0]
    assert fields["P"][1] == sum(values) & 0xFFFF_FFFF  # the loads returned the values
    assert fields["O"] == [len(values)] and fields["D"] == [0], f"seed {seed}"
    assert fields["S"][0] & 0x8 == 0  # no overrun
    keys = [(pc << 32) | v for v in values]
    want = run_plain(keys, interval_length=INTERVAL, threshold=THRESHOLD,
                     **{k: v for k, v in params.items() if k != "fifo_depth"})  # fmt: skip
    assert sum(map(len, want)) > 0
    assert profiles == want, f"seed {seed}"
