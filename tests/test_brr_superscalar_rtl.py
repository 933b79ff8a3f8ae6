"""brr_replicated and brr_shared: golden semantics, statistics, RTL in the Amaranth simulator."""

import random
import re
from pathlib import Path

import numpy as np
import pytest

from hwprof.cocotb_tests.brr_stimulus import random_packet
from hwprof.golden.brr import Brr as PlainBrr
from hwprof.golden.brr import BrrConfig, conditional_taken_probability, taken_probability
from hwprof.golden.brr_isa import encode_brr
from hwprof.golden.brr_variants import (
    XLEN,
    BrrReplicated,
    BrrShared,
    jump,
    jump_matrix,
    lane_distance_categories,
    lane_distance_profile,
    lane_seeds,
    lane_spacing,
    lanes_independent,
    pack,
    unpack,
)
from hwprof.golden.gf2 import gf2_rank
from hwprof.golden.lfsr import LfsrConfig
from hwprof.golden.stats import DEFAULT_ALPHA, binomial_acceptance
from hwprof.rtl.brr_superscalar import BrrReplicated as ReplicatedRtl
from hwprof.rtl.brr_superscalar import BrrShared as SharedRtl
from tests.pysim import compare
from tests.test_lfsr_golden import recurrence_states

LANE_OUTPUTS = ["is_brr", "request", "redirect_valid", "redirect_target", "btb_inhibit", "state"]


def test_jump_follows_the_recurrence(seed):
    """jump (square and multiply of the step matrix) against the LFSR's defining
    recurrence (tests/test_lfsr_golden.py), not against a loop of step."""
    rng = random.Random(seed)
    config = LfsrConfig(width=20)
    state = rng.randrange(1, 1 << 20)
    expected = recurrence_states(20, config.taps, state, 300)
    for distance in range(300):
        assert jump(config, state, distance) == expected[distance], f"seed {seed}"


@pytest.fixture(scope="module")
def period20():
    """Every state of one period of the 20-bit register, stepped once at a time."""
    model = PlainBrr(width=20, lfsr_steps=1)
    states = model.states(2**20 - 1)
    assert model.state == 1
    return states


def test_lane_seeds_sit_on_one_sequence_at_the_spacing(period20):
    """Lane i's seed is the state i * spacing single steps after the seed (read off a
    stepped period, not computed with jump)."""
    seeds = lane_seeds(20, 1, 4)
    spacing = lane_spacing(20, 4)
    assert abs(spacing - (2**20 - 1) // 4) < 100
    assert list(seeds) == [int(period20[i * spacing]) for i in range(4)]


def pair_counts_at_distance(states, positions, distance, freqs):
    masks = np.array(BrrConfig(positions=positions).outcome_masks[:freqs], dtype=np.uint64)
    taken = (states[:, None] & masks) == masks
    return taken.sum(axis=0), (taken & np.roll(taken, -distance, axis=0)).sum(axis=0)


@pytest.mark.parametrize("lanes", [2, 4, 8])
def test_lane_reset_distances_are_exactly_independent(lanes, period20):
    """At reset, two lanes d * spacing steps apart: counted over a whole period, the
    pairs both taken are exactly 2^(W - 2(f+1)) for every freq with 2(f+1) <= W."""
    positions = BrrConfig().positions
    spacing = lane_spacing(20, lanes)
    for d in range(1, lanes):
        _, both = pair_counts_at_distance(period20, positions, d * spacing, 10)
        assert [int(b) for b in both] == [2 ** (20 - 2 * (f + 1)) for f in range(10)], d


def test_the_even_split_is_not_independent(period20):
    """2^19 - 2 steps apart (lanes 0 and 2 of an even 4-way split): the rank test and
    the full-period count agree that brr in those lanes are independent up to freq 3
    and never both taken from freq 4 on (docs/brr-variants.md)."""
    config, positions = LfsrConfig(width=20), BrrConfig().positions
    distance = 2 * ((2**20 - 1) // 4)
    assert not lanes_independent(config, positions, distance)
    _, both = pair_counts_at_distance(period20, positions, distance, 10)
    assert [int(b) for b in both] == [2 ** (20 - 2 * (f + 1)) for f in range(4)] + [0] * 6


def test_lane_spacings_stated_in_the_docs():
    """The spacings for W = 20 that docs/brr-variants.md and lane_spacing's docstring
    state, read from them, are lane_spacing's."""
    docs = (Path(__file__).resolve().parents[1] / "docs" / "brr-variants.md").read_text()
    stated = re.search(r"For W = 20 the spacing is (\d+) \(2 lanes\), (\d+) \(4\),\s+"
                       r"(\d+) \(8\)", docs)  # fmt: skip
    assert stated, "docs/brr-variants.md no longer states the W = 20 spacings"
    in_docstring = re.search(r"At W = 20 the spacing is (\d+) for 2 lanes, (\d+) for 4\s+"
                             r"and (\d+)\s+for 8", lane_spacing.__doc__)  # fmt: skip
    assert in_docstring, "lane_spacing's docstring no longer states the W = 20 spacings"
    computed = [lane_spacing(20, lanes) for lanes in (2, 4, 8)]
    assert [int(x) for x in stated.groups()] == computed
    assert [int(x) for x in in_docstring.groups()] == computed


def test_distance_profile_agrees_with_the_rank_test(seed):
    """The compiled distance scan against jump_matrix + gf2_rank at random distances."""
    rng = random.Random(seed)
    config, positions = LfsrConfig(width=20), BrrConfig().positions
    distances = [0, 1, 2, 8, 2 * ((2**20 - 1) // 4)] + [rng.randrange(2**20 - 1) for _ in range(60)]
    category = lane_distance_categories(20, count=max(distances) + 1)
    for distance in distances:
        rows = jump_matrix(config, distance)
        for f in range(10):
            chosen = positions[: f + 1]
            functionals = [1 << p for p in chosen] + [rows[p] for p in chosen]
            rank = gf2_rank(functionals)
            inconsistent = gf2_rank(v | 1 << 20 for v in functionals) > rank
            expected = 2 if inconsistent else min(2, 2 * (f + 1) - rank)
            assert category[distance, f] == expected, (distance, f, f"seed {seed}")


def documented_distance_rows() -> dict[int, list[int]]:
    """The drift table of docs/brr-variants.md: {freq: [distances exactly independent,
    factor 2, worse or never both taken]}, W = 20."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "brr-variants.md").read_text()
    section = text.split("| freq | distances exactly independent |")[1].split("\n\n")[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            rows[int(cells[0])] = [int(re.sub(r"\(.*\)", "", c).replace(",", ""))
                                   for c in cells[1:]]  # fmt: skip
    return rows


def test_documented_distance_table_is_whole():
    """The table parses: freq 0..9, each row over every distance 0 .. 2^20 - 2."""
    rows = documented_distance_rows()
    assert sorted(rows) == list(range(10))
    assert all(sum(row) == 2**20 - 1 for row in rows.values()), rows


@pytest.mark.soak
def test_distance_profile_documented():
    """Every cell of the table of docs/brr-variants.md (lanes drifting apart), W = 20,
    against the compiled scan of every distance."""
    profile = lane_distance_profile(20)
    assert profile.sum(axis=1).tolist() == [2**20 - 1] * 10
    rows = documented_distance_rows()
    assert [rows[f] for f in range(10)] == profile.tolist()


def all_brr_packet(rng, lanes, freq):
    return {"insn": [encode_brr(freq, 8) for _ in range(lanes)], "pc": [0] * lanes,
            "valid": [1] * lanes}  # fmt: skip


def joint_counts(model, lanes, freq, cycles, rng):
    """Per-lane and pairwise taken counts with a brr in every lane every cycle."""
    single = [0] * lanes
    pair = {(i, j): 0 for i in range(lanes) for j in range(i + 1, lanes)}
    for _ in range(cycles):
        taken = unpack(model.step(**all_brr_packet(rng, lanes, freq))["redirect_valid"], 1, lanes)
        for i in range(lanes):
            single[i] += taken[i]
        for i, j in pair:
            pair[i, j] += taken[i] & taken[j]
    return single, pair


@pytest.mark.parametrize("freq", [0, 1, 3])
def test_replicated_lanes_pairwise_independent(freq, seed):
    """Joint taken counts of every lane pair within the binomial bounds of p^2."""
    rng, lanes, cycles = random.Random(seed), 4, 40_000
    single, pair = joint_counts(BrrReplicated(lanes=lanes), lanes, freq, cycles, rng)
    p = taken_probability(freq)
    checks = lanes + len(pair)
    lo, hi = binomial_acceptance(cycles, p, DEFAULT_ALPHA / checks)
    assert all(lo <= c <= hi for c in single), (single, lo, hi)
    lo, hi = binomial_acceptance(cycles, p * p, DEFAULT_ALPHA / checks)
    assert all(lo <= c <= hi for c in pair.values()), (pair, lo, hi)


@pytest.mark.parametrize("freq", [0, 1, 3])
def test_shared_multi_step_same_distribution_and_independent_in_packet(freq, seed):
    """steps=lanes: every lane's rate is 2^-(f+1); lanes i<j of one packet read states
    j-i steps apart, so their joint rate is the exact lag-(j-i) one (independent where
    the GF(2) analysis says so: all lags here for freq 0 and 1)."""
    rng, lanes, cycles = random.Random(seed), 4, 40_000
    model = BrrShared(lanes=lanes, steps=lanes)
    single, pair = joint_counts(model, lanes, freq, cycles, rng)
    p = taken_probability(freq)
    checks = lanes + len(pair)
    lo, hi = binomial_acceptance(cycles, p, DEFAULT_ALPHA / checks)
    assert all(lo <= c <= hi for c in single), (single, lo, hi)
    config = BrrConfig()
    for (i, j), count in pair.items():
        conditional = conditional_taken_probability(20, config.positions, freq, lag=j - i,
                                                    steps=config.lfsr_steps)
        if freq <= 1:
            assert conditional == p  # exactly independent
        lo, hi = binomial_acceptance(cycles, p * conditional, DEFAULT_ALPHA / checks)
        assert lo <= count <= hi, ((i, j), count, lo, hi, f"seed {seed}")


def test_shared_single_step_every_lane_same_distribution(seed):
    """steps=1, one brr per packet in a random lane: every lane sees the same rate."""
    lanes, freq, per_lane = 4, 1, 12_000
    model = BrrShared(lanes=lanes)
    taken = [0] * lanes
    for cycle in range(per_lane * lanes):
        lane = cycle % lanes
        packet = {"insn": [0] * lanes, "pc": [0] * lanes, "valid": [1] * lanes}
        packet["insn"][lane] = encode_brr(freq, 8)
        taken[lane] += model.step(**packet)["redirect_valid"] >> lane & 1
    lo, hi = binomial_acceptance(per_lane, taken_probability(freq), DEFAULT_ALPHA / lanes)
    assert all(lo <= t <= hi for t in taken), (taken, lo, hi, f"seed {seed}")


def test_shared_multi_step_sequence_is_the_single_issue_sequence(seed):
    """steps=lanes serves the brr of a packet in program order, one LFSR step each."""
    rng, lanes = random.Random(seed), 4
    model, plain = BrrShared(lanes=lanes, steps=lanes), PlainBrr(lockup_escape=False)
    for _ in range(2000):
        packet = random_packet(rng, lanes, 0.5)
        out = model.step(**packet)
        assert out["split"] == 0
        for i in range(lanes):
            if out["request"] >> i & 1:
                freq = (packet["insn"][i] >> 20) & 0xF
                assert out["redirect_valid"] >> i & 1 == plain.step(
                    decode_valid=1, freq=freq).redirect  # fmt: skip


def test_shared_split_leaves_the_rest_for_the_next_cycle():
    lanes = 4
    model = BrrShared(lanes=lanes, steps=1)
    packet = {"insn": [0x13, encode_brr(0, 8), 0x13, encode_brr(0, 8)], "pc": [0] * 4,
              "valid": [1] * 4}  # fmt: skip
    out = model.step(**packet)
    assert (out["split"], out["split_at"], out["request"], out["is_brr"]) == (1, 3, 0b0010, 0b1010)
    # Re-presented from the split lane on: served now.
    rest = {"insn": [encode_brr(0, 8), 0x13, 0x13, 0x13], "pc": [0] * 4, "valid": [1, 0, 0, 0]}
    out = model.step(**rest)
    assert (out["split"], out["request"]) == (0, 0b0001)


def lanes_run(dut, model, stimulus, outputs):
    def step(**packed):
        lanes = model.config.lanes
        packet = {"insn": unpack(packed["insn"], XLEN, lanes), "valid": unpack(packed["valid"], 1,
                  lanes), "pc": unpack(packed.get("pc", 0), XLEN, lanes)}  # fmt: skip
        return model.step(**packet)

    return compare(dut, step, stimulus, outputs)


def packed_stimulus(rng, lanes, cycles, p_brr, target_adder=True):
    result = []
    for _ in range(cycles):
        packet = random_packet(rng, lanes, p_brr)
        item = {"insn": pack(packet["insn"], XLEN), "valid": pack(packet["valid"], 1)}
        if target_adder:
            item["pc"] = pack(packet["pc"], XLEN)
        result.append(item)
    return result


@pytest.mark.parametrize(
    "params", [{"lanes": 1}, {"lanes": 3}, {"lanes": 4, "target_adder": False}],
    ids=["1", "3", "4-noadder"],
)
def test_replicated_rtl_matches_golden(params, seed):
    rng = random.Random(seed)
    adder = params.get("target_adder", True)
    outputs = [o for o in LANE_OUTPUTS if adder or o != "redirect_target"]
    stim = packed_stimulus(rng, params["lanes"], 600, 0.4, adder)
    assert lanes_run(ReplicatedRtl(**params), BrrReplicated(**params), stim, outputs) == []


@pytest.mark.parametrize("lanes, steps", [(1, 1), (4, 1), (4, 2), (4, 4), (5, 3), (8, 5), (8, 8)])
def test_shared_rtl_matches_golden(lanes, steps, seed):
    rng = random.Random(seed)
    stim = packed_stimulus(rng, lanes, 600, 0.45)
    dut, model = SharedRtl(lanes=lanes, steps=steps), BrrShared(lanes=lanes, steps=steps)
    outputs = LANE_OUTPUTS + ["split", "split_at"]
    assert lanes_run(dut, model, stim, outputs) == [], f"seed {seed}"


def test_shared_rtl_mutant_is_caught(seed):
    """Built with other outcome stages, the same comparison mismatches."""
    rng = random.Random(seed)
    positions = list(BrrConfig().positions)
    positions[0], positions[1] = positions[1], positions[0]
    stim = packed_stimulus(rng, 4, 600, 0.45)
    dut = SharedRtl(lanes=4, steps=2, positions=tuple(positions))
    assert lanes_run(dut, BrrShared(lanes=4, steps=2), stim, LANE_OUTPUTS) != []


@pytest.mark.parametrize(
    "cls, params, error, message",
    [
        (SharedRtl, {"lanes": 2, "steps": 3}, ValueError,
         "steps must be between 1 and lanes=2, not 3"),
        (SharedRtl, {"lanes": 0}, ValueError, "lanes must be between 1 and 16, not 0"),
        (ReplicatedRtl, {"lanes": "4"}, TypeError, "lanes must be an integer, not '4'"),
        (ReplicatedRtl, {"target_adder": None}, TypeError, "target_adder must be a bool, not None"),
    ],
)  # fmt: skip
def test_parameter_errors(cls, params, error, message):
    with pytest.raises(error, match=message):
        cls(**params)
