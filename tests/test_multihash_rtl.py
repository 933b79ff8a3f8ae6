"""Multi-hash RTL in the Amaranth simulator against the golden model, with backpressure."""

from __future__ import annotations

import numpy as np
import pytest
from amaranth.sim import Simulator

from hwprof.cocotb_tests.multihash_streams import (
    at_threshold_stream,
    collision_stream,
    random_keys,
    repeated_stream,
    zipf_keys,
)
from hwprof.golden.multihash import MultiHashConfig, MultiHashProfiler
from hwprof.rtl.multihash import MultiHash
from tests.batched_inputs import simulate_batched

SMALL = {"tables": 4, "counters": 64, "accumulator": 8, "interval_length": 100,
         "threshold": 5, "pc_bits": 8, "value_bits": 8, "ways": 0}  # fmt: skip
#: the set-associative accumulator in block RAM (the pipelined design); 4 sets of 2
SMALL_SA = SMALL | {"ways": 2}
#: both organisations, the CAM (no longer the default) in the soak tier only (suite time;
#: the fast tier keeps the CAM in test_full_rate_with_a_ready_consumer)
ORGS_CAM_SOAK = pytest.mark.parametrize(
    "org", [pytest.param(SMALL, marks=pytest.mark.soak), SMALL_SA], ids=["cam", "set-associative"])


def simulate(dut, keys, rng, ready_p=1.0, configure=None, drain=None):
    """Drive ``keys`` (one offered per cycle), random ``records.ready``.

    ``configure``: {tuple_index: (interval, threshold)}, written in an idle cycle
    before that tuple. Returns (profiles, stall_cycles, cycles).
    """
    configure = configure or {}
    records, stats = [], {"stalls": 0, "cycles": 0}
    drain = drain if drain is not None else 12 * dut.config.accumulator + 20

    async def testbench(ctx):
        i, idle = 0, 0
        while i < len(keys) or idle < drain:
            if i in configure:
                ctx.set(dut.tuples.valid, 0)
                ctx.set(dut.records.ready, 0)
                ctx.set(dut.cfg_we, 1)
                ctx.set(dut.cfg_interval, configure[i][0])
                ctx.set(dut.cfg_threshold, configure[i][1])
                await ctx.tick()
                ctx.set(dut.cfg_we, 0)
                del configure[i]
                continue
            offer = i < len(keys)
            ctx.set(dut.tuples.valid, offer)
            if offer:
                ctx.set(dut.tuples.payload.as_value(), keys[i])
            else:
                idle += 1
            ctx.set(dut.records.ready, int(rng.random() < ready_p))
            await ctx.delay(1e-9)
            if ctx.get(dut.records.valid) and ctx.get(dut.records.ready):
                payload = ctx.get(dut.records.payload)
                records.append((payload.key, payload.count, payload.end))
            if offer:
                if ctx.get(dut.tuples.ready):
                    i += 1
                else:
                    stats["stalls"] += 1
            stats["cycles"] += 1
            await ctx.tick()

    simulate_batched(dut, testbench)
    profiles, current = [], []
    for key, count, end in records:
        if end:
            profiles.append(current)
            current = []
        else:
            current.append((key, count))
    assert current == [], "records after the last end marker"
    return profiles, stats["stalls"], stats["cycles"]


def golden_profiles(params, keys, configure=None):
    model = MultiHashProfiler(**params)
    profiles = []
    for i, key in enumerate(keys):
        if configure and i in configure:
            model.configure(*configure[i])
        profile = model.step(key)
        if profile is not None:
            profiles.append(profile)
    return profiles


def stream(kind, config, rng, n):
    kb = config.key_bits
    if kind == "random":
        return random_keys(rng, n, kb, distinct=30)
    if kind == "zipf":
        return zipf_keys(rng, n, kb, distinct=500)
    if kind == "collide":
        return collision_stream(config, rng, n)
    if kind == "at_threshold":
        return at_threshold_stream(config, rng, n // config.interval_length)
    return repeated_stream(config, rng, n)


KINDS = ["random", "zipf", "collide", "at_threshold", "repeated"]
# The Verilator tier runs every kind with backpressure, and a mixed stream at full
# rate (tests/test_multihash_cocotb.py); here the adversarial kind runs in the fast
# tier and the others in the soak tier.
SIM_KINDS = [k if k == "collide" else pytest.param(k, marks=pytest.mark.soak) for k in KINDS]


@ORGS_CAM_SOAK
@pytest.mark.parametrize("kind", SIM_KINDS)
def test_rtl_matches_golden_with_backpressure(kind, org, seed):
    rng = np.random.default_rng(seed)
    keys = stream(kind, MultiHashConfig(**org), rng, 600)
    want = golden_profiles(org, keys)
    assert len(want) == 6 and sum(map(len, want)) > 0
    got, _, _ = simulate(MultiHash(**org), keys, rng, ready_p=0.4)
    assert got == want, f"seed {seed}"


OPTIONS = [
    {"conservative": False},
    {"reset": True},
    {"retain": False},
    {"tables": 1, "counters": 32, "reset": True},
    {"tables": 2, "accumulator": 3},
]


@ORGS_CAM_SOAK
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in
                                                                 o.items()))  # fmt: skip
def test_rtl_options_match_golden(options, org, seed):
    params = org | options
    if params["ways"] and params["accumulator"] % params["ways"]:
        params["ways"] = params["accumulator"]  # 3 entries: one set of 3
    rng = np.random.default_rng(seed)
    keys = stream("zipf", MultiHashConfig(**params), rng, 300) + stream(
        "collide", MultiHashConfig(**params), rng, 300
    )
    got, _, _ = simulate(MultiHash(**params), keys, rng, ready_p=0.5)
    assert got == golden_profiles(params, keys), f"seed {seed}"


@ORGS_CAM_SOAK
@pytest.mark.parametrize("retain", [True, False])
def test_short_intervals_stall_only_for_the_readout(retain, org, seed):
    """Intervals shorter than the readout, threshold 1-2: the input must stall, results exact."""
    params = org | {"interval_length": 9, "threshold": 1 + seed % 2, "retain": retain}
    rng = np.random.default_rng(seed)
    keys = random_keys(rng, 270, 16, distinct=12)
    for ready_p in (1.0, 0.25):
        got, stalls, _ = simulate(MultiHash(**params), keys, rng, ready_p=ready_p)
        assert got == golden_profiles(params, keys), f"seed {seed}, ready {ready_p}"
        if ready_p < 1:
            assert stalls > 0  # the scenario exercises the stall path


@pytest.mark.parametrize("kind", SIM_KINDS)
def test_full_rate_with_a_ready_consumer(kind, seed):
    """CAM: interval_length >= accumulator + 2 and records always accepted: never a stall."""
    rng = np.random.default_rng(seed)
    params = SMALL | {"interval_length": 40, "threshold": 2}
    keys = stream(kind, MultiHashConfig(**params), rng, 400)
    got, stalls, cycles = simulate(MultiHash(**params), keys, rng, ready_p=1.0, drain=30)
    assert got == golden_profiles(params, keys), f"seed {seed}"
    assert stalls == 0 and cycles == len(keys) + 30


@pytest.mark.parametrize("kind", SIM_KINDS)
def test_set_associative_full_rate_with_a_ready_consumer(kind, seed):
    """Block RAM design, threshold 15 in intervals of 60 (at most 4 candidates): no stall.

    (A promotion can overwrite a tag only after ``T - 1`` tuples of the interval;
    the readout of ``k`` records is complete at the end of cycle ``c + k + 7``, the
    last tuple accepted in ``c``: no stall while ``T >= k + 8``.)
    """
    rng = np.random.default_rng(seed)
    params = SMALL_SA | {"interval_length": 60, "threshold": 15}
    keys = stream(kind, MultiHashConfig(**params), rng, 600)
    got, stalls, cycles = simulate(MultiHash(**params), keys, rng, ready_p=1.0, drain=30)
    assert got == golden_profiles(params, keys), f"seed {seed}"
    assert stalls == 0 and cycles == len(keys) + 30


@ORGS_CAM_SOAK
def test_configuration_registers(org, seed):
    rng = np.random.default_rng(seed)
    keys = random_keys(rng, 500, 16, distinct=20)
    configure = {150: (50, 3), 300: (60, 4), 301: (30, 2)}
    got, _, _ = simulate(MultiHash(**org), keys, rng, 0.6, configure=dict(configure))
    want = golden_profiles(org, keys, configure)
    assert len(want) > 8 and got == want, f"seed {seed}"


@ORGS_CAM_SOAK
@pytest.mark.parametrize(("mutant", "reference"), [
    ({"bypass": False}, {}),
    # one mutant shows this checker can fail; the second in the soak tier (suite time)
    pytest.param({"conservative": False}, {"conservative": True}, marks=pytest.mark.soak),
])  # fmt: skip
def test_checker_catches_a_mutant(mutant, reference, org, seed):
    """A missed forward, or conservative update off: the same comparison must fail."""
    rng = np.random.default_rng(seed)
    params = org | reference
    keys = stream("collide", MultiHashConfig(**params), rng, 600)
    got, _, _ = simulate(MultiHash(**(org | mutant)), keys, rng, ready_p=0.7)
    assert got != golden_profiles(params, keys), f"seed {seed}"


@pytest.mark.parametrize(
    ("kwargs", "exc", "text"),
    [
        ({"tables": 3}, ValueError, "counters / tables must be a power of two, not 2048 / 3"),
        ({"threshold": 0}, ValueError, "threshold must be between 1 and 10000, not 0"),
        ({"retain": 1}, TypeError, "retain must be a bool, not 1"),
        ({"ways": 3}, ValueError, "accumulator must be a multiple of ways, not 100 / 3"),
        ({"readout_pick": "tree"}, ValueError,
         "readout_pick must be None, 'prefix' or 'address', not 'tree'"),
    ],
)
def test_parameter_errors(kwargs, exc, text):
    with pytest.raises(exc) as info:
        MultiHash(**kwargs)
    assert str(info.value) == text


def test_readout_pick_by_sets():
    """The readout's pick by a prefix OR up to PREFIX_PICK_SETS sets (the defaults' 25:
    their Verilog unchanged), from the address register above (the 1M configuration's
    250 sets)."""
    from hwprof.rtl.multihash_config import PREFIX_PICK_SETS, multihash_config, readout_pick_for

    def pick(readout_pick=None, **kwargs):
        # the factory's choice, from the checked parameters (no component built)
        return readout_pick_for(multihash_config(**kwargs), readout_pick)

    assert pick() == "prefix"
    assert pick(accumulator=4 * PREFIX_PICK_SETS) == "prefix"
    assert pick(accumulator=4 * PREFIX_PICK_SETS + 4) == "address"
    assert pick(accumulator=1000, interval_length=1_000_000, threshold=1000) == "address"
    assert pick(readout_pick="address") == "address"


#: more sets than PREFIX_PICK_SETS (40 of 2 ways): the address pick by default
MANY_SETS = SMALL_SA | {"tables": 2, "accumulator": 80, "interval_length": 150,
                        "threshold": 3}  # fmt: skip


@pytest.mark.parametrize(("params", "pick"), [(SMALL_SA, "address"), (MANY_SETS, None)],
                         ids=["4-sets-address", "40-sets"])  # fmt: skip
def test_address_pick_matches_golden_with_backpressure(params, pick, seed):
    """The readout's pick from its address register, forced at 4 sets and by default at
    40: every readout bit-exact with backpressure (records withheld: the pick waits
    with ``ro_set`` held)."""
    rng = np.random.default_rng(seed)
    dut = MultiHash(**params, readout_pick=pick)
    assert dut.readout_pick == "address"
    keys = stream("collide", MultiHashConfig(**params), rng, 600)
    want = golden_profiles(params, keys)
    assert sum(map(len, want)) > 10
    got, stalls, _ = simulate(dut, keys, rng, ready_p=0.4)
    assert got == want, f"seed {seed}"


@pytest.mark.parametrize("bits", [9, 6, 4, 1])
def test_one_hot_decode_every_index(bits):
    """The counters' valid-bit decode (predecoded in two halves): bit ``j`` set iff index == j."""
    from amaranth.hdl import Module, Signal

    from hwprof.rtl.multihash_bram import _one_hot

    m = Module()
    index, out = Signal(bits), Signal(1 << bits)
    m.d.comb += out.eq(_one_hot(m, index, "decode"))
    wrong = []

    async def testbench(ctx):
        for v in range(1 << bits):
            ctx.set(index, v)
            await ctx.delay(1e-6)
            if ctx.get(out) != 1 << v:
                wrong.append((v, ctx.get(out)))

    sim = Simulator(m)
    sim.add_testbench(testbench)
    sim.run()
    assert wrong == []


@pytest.mark.parametrize("params", [SMALL_SA, pytest.param(MANY_SETS, marks=pytest.mark.soak)],
                         ids=["4-sets", "40-sets"])  # fmt: skip
def test_address_pick_cycle_identical_with_prefix_pick(params, seed):
    """The two readout picks (the address pick with its "anything pending" flop,
    ``ro_any``, and its ``ro_set`` register; the prefix pick reading the pending flops
    directly) side by side on one stimulus (colliding keys, intervals of a single key:
    its set is stage E's at the boundary, intervals of keys at the threshold), with
    records withheld at random:
    ``tuples.ready``, ``records.valid`` and ``records.payload`` equal every cycle (the
    golden comparison above ignores when records appear; this one does not)."""
    from amaranth.hdl import Elaboratable, Module

    rng = np.random.default_rng(seed)
    duts = [MultiHash(**params, readout_pick=pick) for pick in ("prefix", "address")]

    class Both(Elaboratable):
        def elaborate(self, platform):
            m = Module()
            m.submodules.prefix, m.submodules.address = duts
            return m

    # colliding keys; intervals of one key (its set, the last tuple's, the only one
    # with a candidate at the boundary); intervals of many keys at the threshold (sets
    # with more than one candidate, the last pending set's included)
    config = MultiHashConfig(**params)
    keys = (stream("collide", config, rng, 300) + [random_keys(rng, 1, config.key_bits)[0]]
            * (2 * config.interval_length) + at_threshold_stream(config, rng, 4))
    outputs = [("tuples.ready", lambda d: d.tuples.ready),
               ("records.valid", lambda d: d.records.valid),
               ("records.payload", lambda d: d.records.payload.as_value())]  # fmt: skip
    seen = {"mismatch": None, "records": 0}

    async def testbench(ctx):
        i = 0
        for cycle in range(len(keys) + 20 * params["accumulator"]):
            offer = i < len(keys) and rng.random() < 0.9
            ready = int(rng.random() < 0.4)
            for dut in duts:
                ctx.set(dut.tuples.valid, offer)
                ctx.set(dut.tuples.payload.as_value(), keys[i] if offer else 0)
                ctx.set(dut.records.ready, ready)
            await ctx.delay(1e-9)
            for label, get in outputs:
                a, b = (ctx.get(get(dut)) for dut in duts)
                if a != b:
                    seen["mismatch"] = (cycle, label, a, b)
                    return
            seen["records"] += ctx.get(duts[0].records.valid) & ready
            i += offer and ctx.get(duts[0].tuples.ready)
            await ctx.tick()

    sim = Simulator(Both())
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    assert seen["mismatch"] is None, f"seed {seed}: {seen['mismatch']}"
    assert seen["records"] > 20
