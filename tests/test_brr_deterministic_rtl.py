"""brr_deterministic: no-squash property, overflow, save/restore; RTL in the Amaranth simulator."""

import random

import pytest
from amaranth.sim import Simulator

from hwprof.cocotb_tests.brr_stimulus import CoreSchedule, lost_count_inputs
from hwprof.golden.brr import Brr as PlainBrr
from hwprof.golden.brr_deterministic import BrrDeterministic as Golden
from hwprof.golden.brr_deterministic import ProtocolError
from hwprof.rtl.brr_deterministic import BrrDeterministic

OUTPUTS = ("taken", "accept", "redirect", "overflow", "protocol_error", "full", "inflight",
           "state", "scan_out")
IDLE = {"decode_valid": 0, "freq": 0, "commit": 0, "squash": 0, "write_valid": 0,
        "write_data": 0, "scan_enable": 0, "scan_in": 0}  # fmt: skip


def no_squash_sequence(config, program):
    plain = PlainBrr(config.brr_config)
    return [(k, o.state, o.taken) for k, o in
            ((k, plain.step(decode_valid=1, freq=f)) for k, f in enumerate(program))]


def run_schedule(step, rng, program, max_inflight, rob_walk, cycles):
    """Drive ``step(**inputs) -> outputs`` with a core schedule; return the schedule."""
    schedule = CoreSchedule(rng, program, max_inflight, rob_walk=rob_walk)
    for _ in range(cycles):
        if schedule.done:
            break
        out = step(**{**IDLE, **schedule.inputs()})
        schedule.observe(accept=out["accept"], taken=out["taken"], state=out["state"],
                         overflow=out["overflow"])  # fmt: skip
    return schedule


@pytest.mark.parametrize("rob_walk", [False, True], ids=["checkpoint", "rob-walk"])
@pytest.mark.parametrize("max_inflight", [1, 4, 16])
def test_golden_committed_sequence_equals_no_squash_core(rob_walk, max_inflight, seed):
    rng = random.Random(seed)
    model = Golden(max_inflight=max_inflight, rob_walk=rob_walk)
    program = [rng.choice((0, 1, 2, rng.randrange(16))) for _ in range(4000)]
    schedule = run_schedule(model.step, rng, program, max_inflight, rob_walk, 40_000)
    assert schedule.done, f"seed {seed}"
    assert schedule.committed == no_squash_sequence(model.config, program), f"seed {seed}"
    assert schedule.squashed > 100, "the schedule must squash"
    if max_inflight < 16:
        assert schedule.overflows > 0, "the schedule must hit max_inflight"


def test_squashes_would_change_the_sequence_without_shift_back(seed):
    """The same schedule on the plain (non-deterministic) unit loses transitions."""
    rng = random.Random(seed)
    model = Golden()
    plain = PlainBrr(model.config.brr_config)

    def nondeterministic(**inputs):
        out = model.step(**inputs)  # for accept/overflow only
        shown = plain.step(decode_valid=out["accept"], freq=inputs["freq"])
        return {**out, "state": shown.state, "taken": shown.taken}

    program = [0] * 2000
    schedule = run_schedule(nondeterministic, rng, program, 8, False, 20_000)
    assert schedule.committed != no_squash_sequence(model.config, program)


def test_overflow_refuses_and_holds_the_state():
    model = Golden(max_inflight=2)
    states = [model.step(decode_valid=1)["state"] for _ in range(2)]
    out = model.step(decode_valid=1)
    assert (out["overflow"], out["accept"], out["full"], out["inflight"]) == (1, 0, 1, 2)
    after = model.step()
    assert after["state"] == out["state"] != states[1]
    assert model.step(commit=1, decode_valid=1)["accept"] == 0  # still full this cycle
    assert model.step(decode_valid=1)["accept"] == 1


def test_lost_count_is_reported_and_holds_everything():
    """commit + squash > in flight: protocol_error, no accept, state and counter hold."""
    model = Golden()
    model.step(decode_valid=1)
    before = model.step()
    out = model.step(commit=1, squash=1, decode_valid=1)
    assert (out["protocol_error"], out["accept"], out["inflight"]) == (1, 0, 1)
    after = model.step()
    assert (after["state"], after["inflight"], after["protocol_error"]) == (
        before["state"], 1, 0)
    assert model.step(commit=2)["protocol_error"] == 1
    assert model.step(write_valid=1, write_data=5, commit=2)["protocol_error"] == 0  # serial
    assert model.step(squash=1)["protocol_error"] == 1  # the write emptied the unit
    assert model.step()["state"] == 5


def test_rob_walk_squash_of_two_is_refused():
    walk = Golden(rob_walk=True)
    walk.step(decode_valid=1)
    walk.step(decode_valid=1)
    with pytest.raises(ProtocolError, match="a ROB walk removes one brr per cycle, not 2"):
        walk.step(squash=2)


@pytest.mark.parametrize("use_scan", [False, True], ids=["csr", "scan"])
def test_save_restore_reproduces_the_sequence(use_scan, seed):
    """Context switch: save, another process runs brr, restore; the sequence continues."""
    rng = random.Random(seed)
    program = [rng.randrange(4) for _ in range(600)]
    expected = [(s, t) for _, s, t in no_squash_sequence(Golden().config, program)]
    model, seen = Golden(), []
    for k, freq in enumerate(program):
        out = model.step(decode_valid=1, freq=freq)
        seen.append((out["state"], out["taken"]))
        model.step(commit=1)
        if k % 150 == 149:
            other = rng.randrange(1, 1 << 20)
            if use_scan:
                saved = 0
                for bit in range(20):
                    out = model.step(scan_enable=1, scan_in=other >> bit & 1)
                    saved |= out["scan_out"] << bit
            else:
                saved = model.step()["state"]
                model.step(write_valid=1, write_data=other)
            for _ in range(rng.randrange(1, 50)):
                model.step(decode_valid=1, freq=rng.randrange(16))
                model.step(commit=1)
            if use_scan:
                for bit in range(20):
                    model.step(scan_enable=1, scan_in=saved >> bit & 1)
            else:
                model.step(write_valid=1, write_data=saved)
    assert seen == expected, f"seed {seed}"


def rtl_against_golden(dut, params, rng, program, cycles, p_lost_count=0.01):
    """Amaranth simulation: the core schedule drives the RTL; every output vs the golden.

    With probability ``p_lost_count`` a cycle, instead of the schedule's inputs, a
    core that lost count asks to commit and squash one brr more than are in flight
    (the unit must flag it and hold; the schedule resumes the next cycle).
    """
    model = Golden(**params)
    mismatches, holder = [], {}

    async def testbench(ctx):
        schedule = CoreSchedule(rng, program, model.config.max_inflight,
                                rob_walk=model.config.rob_walk)  # fmt: skip
        for cycle in range(cycles):
            if schedule.done:
                break
            lost_count = rng.random() < p_lost_count
            if lost_count:
                inputs = {**IDLE, **lost_count_inputs(rng, model)}
            else:
                inputs = {**IDLE, **schedule.inputs()}
            for name, value in inputs.items():
                ctx.set(getattr(dut, name), value)
            expected = model.step(**inputs)
            got = {name: ctx.get(getattr(dut, name)) for name in OUTPUTS}
            for name in OUTPUTS:
                if got[name] != expected[name]:
                    mismatches.append((cycle, name, got[name], expected[name], inputs))
            if mismatches:
                return
            holder["lost_counts"] = holder.get("lost_counts", 0) + got["protocol_error"]
            if not lost_count:
                schedule.observe(accept=got["accept"], taken=got["taken"],
                                 state=got["state"], overflow=got["overflow"])  # fmt: skip
            await ctx.tick()
        holder["schedule"] = schedule

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    return mismatches, holder.get("schedule"), holder.get("lost_counts", 0)


@pytest.mark.parametrize(
    "params", [{}, {"rob_walk": True, "max_inflight": 3}, {"max_inflight": 1, "width": 24}],
    ids=["checkpoint", "rob-walk", "one-in-flight"],
)
def test_rtl_matches_golden(params, seed):
    rng = random.Random(seed)
    program = [rng.randrange(16) for _ in range(600)]
    mismatches, schedule, lost_counts = rtl_against_golden(
        BrrDeterministic(**params), params, rng, program, 2500)
    assert mismatches == [], f"seed {seed}"
    assert lost_counts > 0, f"seed {seed}: no protocol error was exercised"
    config = Golden(**params).config
    assert schedule.committed == no_squash_sequence(config, program)[: len(schedule.committed)]


def test_rtl_mutant_without_shift_back_is_caught(seed, monkeypatch):
    import hwprof.rtl.brr_deterministic as module

    monkeypatch.setattr(module, "shift_back", lambda chain, count: chain)
    rng = random.Random(seed)
    program = [rng.randrange(16) for _ in range(600)]
    mismatches, _, _ = rtl_against_golden(BrrDeterministic(), {}, rng, program, 2500)
    assert mismatches, f"seed {seed}"


def test_rtl_mutant_that_ignores_a_lost_count_is_caught(seed, monkeypatch):
    """An RTL that never raises protocol_error is caught by the same comparison."""
    import hwprof.rtl.brr_deterministic as module

    original = module.BrrDeterministic.elaborate

    def elaborate(self, platform):
        m = original(self, platform)
        m.d.comb += self.protocol_error.eq(0)  # the last assignment wins
        return m

    monkeypatch.setattr(module.BrrDeterministic, "elaborate", elaborate)
    rng = random.Random(seed)
    program = [rng.randrange(16) for _ in range(600)]
    mismatches, _, _ = rtl_against_golden(BrrDeterministic(), {}, rng, program, 2500)
    assert mismatches, f"seed {seed}"


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"max_inflight": 0}, ValueError, "max_inflight must be between 1 and 64, not 0"),
        ({"max_inflight": 2.0}, TypeError, "max_inflight must be an integer, not 2.0"),
        ({"rob_walk": "yes"}, TypeError, "rob_walk must be a bool, not 'yes'"),
    ],
)
def test_parameter_errors(params, error, message):
    with pytest.raises(error, match=message):
        BrrDeterministic(**params)
