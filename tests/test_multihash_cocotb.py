"""cocotb tier: the multi-hash profiler's Verilog on Verilator against the golden model."""

import re

import pytest

from hwprof.catalog import get_top
from hwprof.rtl.multihash import MultiHash
from hwprof.sim.runner import run_cocotb
from hwprof.synth import to_verilog

pytestmark = pytest.mark.cocotb

SMALL = {"tables": 4, "counters": 64, "counter_bits": 16, "accumulator": 8,
         "interval_length": 100, "threshold": 5, "pc_bits": 8, "value_bits": 8,
         "ways": 2}  # fmt: skip
#: the fully associative CAM design (``ways=0``), the paper's organisation
SMALL_CAM = SMALL | {"ways": 0}
#: the catalog defaults (4 x 512 counters, 100 entries, 4-way set-associative in block RAM)
DEFAULTS = get_top("multihash").resolve({})


def run(rtl_params, golden_params=None, **env):
    verilog = to_verilog(MultiHash(**rtl_params), "multihash")
    env = {"params": golden_params or rtl_params, **env}
    return run_cocotb(verilog=verilog, toplevel="multihash", test_module="test_multihash",
                      env=env, seed=env.pop("seed", None))  # fmt: skip


def describe(result):
    return f"{result.failed}/{result.tests} failed, seed {result.seed}, log {result.log}"


#: the adversarial kinds in the fast tier, the others in the soak tier (suite time)
STREAMS = ["collide", "at_threshold",
           *(pytest.param(k, marks=pytest.mark.soak) for k in ("random", "zipf", "repeated"))]


@pytest.mark.parametrize("stream", STREAMS)
def test_small_config_with_backpressure(stream, seed):
    result = run(SMALL, stream=stream, tuples=3000, ready=0.4, seed=seed)
    assert result.passed, describe(result)


#: 40 sets of 2 ways, more than PREFIX_PICK_SETS: the readout's pick from its address
#: register (the 1M configuration's design; the defaults keep the prefix pick)
MANY_SETS = SMALL | {"accumulator": 80, "interval_length": 300, "threshold": 3}


@pytest.mark.parametrize("stream", ["collide", "at_threshold"])
def test_many_sets_address_pick_with_backpressure(stream, seed):
    verilog = to_verilog(MultiHash(**MANY_SETS), "multihash")
    assert "ro_hot" in verilog and "ro_any" in verilog  # the address pick, its ro_any flop
    assert "set_prefix" not in verilog
    result = run(MANY_SETS, stream=stream, tuples=3000, ready=0.4, seed=seed)
    assert result.passed, describe(result)


@pytest.mark.soak
@pytest.mark.parametrize("stream", ["collide", "at_threshold"])
def test_small_cam_with_backpressure(stream, seed):
    result = run(SMALL_CAM, stream=stream, tuples=3000, ready=0.4, seed=seed)
    assert result.passed, describe(result)


def test_default_config_mixed_stream(seed):
    """The catalog defaults (10K-tuple intervals): two whole intervals and part of a third."""
    result = run(dict(DEFAULTS), stream="mixed", tuples=25_000, ready=0.5, seed=seed)
    assert result.passed, describe(result)


def test_sustained_throughput_one_tuple_per_cycle(seed):
    """>= 100,000 tuples with an always-ready consumer: zero stalls (1 tuple/cycle).

    Block RAM design: no stall while threshold >= candidates + 7 (docs/multihash.md).
    """
    result = run(SMALL | {"interval_length": 1000, "threshold": 20}, stream="mixed",
                 tuples=100_000, ready=1.0, seed=seed)  # fmt: skip
    assert result.passed, describe(result)
    match = re.search(r"THROUGHPUT tuples=(\d+) cycles=(\d+) stalls=(\d+)",
                      result.log.read_text())  # fmt: skip
    tuples, cycles, stalls = map(int, match.groups())
    print(f"sustained: {tuples} tuples in {cycles} cycles ({tuples / cycles:.4f}/cycle)")
    assert tuples >= 100_000 and stalls == 0 and cycles == tuples


@pytest.mark.parametrize(("mutant", "reference"), [
    ({"bypass": False}, {}),
    # one mutant shows the Verilator checker can fail; the second in the soak tier
    pytest.param({"conservative": False}, {"conservative": True}, marks=pytest.mark.soak),
], ids=["missed-forward", "no-conservative-update"])  # fmt: skip
def test_mutant_is_caught(mutant, reference, seed):
    params = SMALL | reference
    verilog = to_verilog(MultiHash(**(SMALL | mutant)), "multihash")
    result = run_cocotb(verilog=verilog, toplevel="multihash", test_module="test_multihash",
                        env={"params": params, "stream": "collide", "tuples": 3000,
                             "ready": 0.7}, seed=seed)  # fmt: skip
    assert result.tests == 1 and result.failed == 1, describe(result)
    log = result.log.read_text()  # (a mutant may first change when the input stalls)
    assert "golden model says" in log or "the stall rule says" in log, "not on a mismatch"
