"""``hwprof experiment brr-accuracy --quick``: runs, writes its files, and the resonance
case separates the samplers as the paper says; the helpers compute what they claim."""

import json
import math

import numpy as np
import pytest

from hwprof.cli import main
from hwprof.experiments.brr_accuracy import (
    PAPER_TAP_SETS,
    PROGRAMS,
    REAL_PROGRAMS,
    SAMPLERS,
    accuracy,
    overhead_per_site,
    paper_stage_taps,
    program_overhead,
    samples,
    taken_sites,
)
from hwprof.golden.lfsr import TAPS, Lfsr
from hwprof.traces import tracefile as tf

#: False-alarm probability of the resonance check below. The quick run has about 32
#: samples per run at 2^-10, too few for DEFAULT_ALPHA: an ideal sampler puts all of
#: them on one leaf once in 4.5 million runs, and the check has 10 runs.
RESONANCE_ALPHA = 1e-4


def _log_binomial(k: int, n: int, p: float) -> float:
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))  # fmt: skip


def two_leaf_accuracy_bound(events: int, rate: int, alpha: float) -> float:
    """The largest ``b`` with P(accuracy < b) <= ``alpha`` for an ideal sampler at
    2^-``rate`` on ``events`` (even) events of the two-leaf loop (0, 1, 0, 1, ...).

    The samples on leaf 0 number K ~ Binomial(events / 2, 2^-rate), those on leaf 1
    L ~ Binomial(events / 2, 2^-rate), independent; N = K + L. The overlap with the
    profile (1/2, 1/2) is 100 (min(1/2, K/N) + min(1/2, L/N)) = 100 (1 - |K/N - 1/2|),
    and 0 without a sample.
    """
    half, p = events // 2, 2.0**-rate
    pmf = []
    for k in range(half + 1):
        pk = math.exp(_log_binomial(k, half, p))
        if k > half * p and pk < 1e-30:
            break
        pmf.append(pk)
    law: dict[float, float] = {}
    for k, pk in enumerate(pmf):
        for m, pm in enumerate(pmf):
            acc = 0.0 if k + m == 0 else 100.0 * (1 - abs(k / (k + m) - 0.5))
            law[acc] = law.get(acc, 0.0) + pk * pm
    below = 0.0
    for acc in sorted(law):
        if below + law[acc] > alpha:
            return acc
        below += law[acc]
    raise AssertionError("unreachable: the probabilities sum to 1")


def test_two_leaf_accuracy_bound_by_hand():
    """Two events at 2^-1: no sample (1/4, accuracy 0), one leaf's event only (1/2: 50),
    both (1/4: 100)."""
    assert two_leaf_accuracy_bound(2, 1, 0.24) == 0.0
    assert two_leaf_accuracy_bound(2, 1, 0.26) == 50.0
    assert two_leaf_accuracy_bound(2, 1, 0.74) == 50.0
    assert two_leaf_accuracy_bound(2, 1, 0.76) == 100.0


def test_quick_run_writes_plot_and_summary(tmp_path, seed):
    assert main(["experiment", "brr-accuracy", "--quick", "-o", str(tmp_path),
                 "--seed", str(seed)]) == 0  # fmt: skip
    for ext in ("png", "md", "json"):
        assert (tmp_path / f"brr-accuracy-quick.{ext}").stat().st_size > 0
    data = json.loads((tmp_path / "brr-accuracy-quick.json").read_text())
    acc = data["accuracy"]
    assert set(acc) == set(PROGRAMS) and set(acc["zipf"]["10"]) == set(SAMPLERS)
    # Resonance (paper sec. 4.2): a global counter with an even interval samples one
    # of the two leaves only (exactly 50 %); brr samples both.
    loop = acc["two-leaf-loop"]["10"]
    assert loop["hw-counter"]["max"] == 50.0 and loop["sw-counter"]["max"] == 50.0
    assert loop["sw-per-site"]["min"] == 100.0
    # brr and the ideal sampler sample both leaves: each run's accuracy at least the
    # bound of its sample count (2 samplers x seeds runs share RESONANCE_ALPHA)
    runs = 2 * data["seeds"]
    bound = two_leaf_accuracy_bound(data["events"], 10, RESONANCE_ALPHA / runs)
    assert bound > 50.0  # above a one-leaf sampler's 50 %
    assert loop["brr"]["min"] >= bound and loop["bernoulli"]["min"] >= bound, (seed, bound)
    # The real programs come from the shipped branch traces, first 2^15 taken transfers.
    assert set(data["real_programs"]) == set(REAL_PROGRAMS)
    for info in data["real_programs"].values():
        assert info["origin"] == "shipped" and info["events"] == 1 << 15 and info["sites"] > 1
    # --quick compares only the default 32-bit taps (the paper's four need the search)
    assert list(data["tap_sets"]) == ["default"]
    assert set(data["tap_set_accuracy"]["xz"]["10"]["default"]) == {"mean", "min", "max"}


def test_taken_sites_are_the_pcs_of_taken_transfers_in_order(tmp_path):
    """A trace built here: not-taken branches and loads are no sites; ids follow the pcs."""
    path = tmp_path / "t.trace"
    kinds = [tf.COND_TAKEN, tf.COND_NOT_TAKEN, tf.LOAD, tf.CALL, tf.COND_TAKEN, tf.RETURN]
    pcs = [0x400, 0x404, 0x408, 0x300, 0x400, 0x500]
    with tf.TraceWriter(path, header={"program": "test"}, chunk_records=2) as out:
        out.write(kind=np.array(kinds, np.uint8), pc=np.array(pcs, np.uint64))
        out.close()
    assert taken_sites(path, 100).tolist() == [1, 0, 1, 2]  # pcs 0x400, 0x300, 0x400, 0x500
    assert taken_sites(path, 2).tolist() == [1, 0]


def test_accuracy_is_the_overlap_percentage():
    sites = np.array([0, 0, 1, 1])
    assert accuracy(sites, np.array([1, 1, 1, 1], dtype=bool)) == 100.0
    assert accuracy(sites, np.array([1, 0, 0, 0], dtype=bool)) == 50.0  # paper's example form
    assert accuracy(sites, np.zeros(4, dtype=bool)) == 0.0


def test_software_counter_is_the_papers_global_countdown(seed):
    """Paper sec. 4.1: Arnold-Ryder adds "a decrementing global counter" that branches
    to the instrumentation when it reaches zero and is reset to the interval. On a
    two-site loop (0, 1, 0, 1, ...; 65,536 events) at 2^-10 the period 1024 is even,
    so every sample falls on the same site: exactly 50.0 % overlap, whatever the
    phase (a per-site counter would sample both sites, 100 %)."""
    rng = np.random.default_rng(seed)
    sites = np.arange(1 << 16) % 2
    mask = samples("sw-counter", sites, 10, rng)
    assert np.count_nonzero(mask) == (1 << 16) >> 10
    assert len(set(sites[mask].tolist())) == 1, f"seed {seed}"
    assert accuracy(sites, mask) == 50.0


def test_per_site_counter_samples_every_nth_execution_of_each_site(seed):
    rng = np.random.default_rng(seed)
    sites = rng.integers(3, size=5000)
    mask = samples("sw-per-site", sites, 4, rng)
    for site in range(3):
        hits = np.flatnonzero(mask[sites == site])
        assert len(hits) and set(np.diff(hits)) <= {16}, f"seed {seed}"


def test_overhead_model_per_site_by_hand():
    """Paper sec. 5.3: a 50 % brr costs 3.19 cycles per site, "50% of the 5-cycle
    pipeline flush plus ... 2 extra instructions in the program stream (the
    branch-on-random and the unconditional jump back)". The taken brr is the jump to
    the instrumentation, so a site executes 1 + 1/2 instructions; cycles: half a
    fetch slot (3 per cycle) + half of (5-cycle redirect + the jump back's fetch
    cycle) = 0.5/3 + 0.5 * 6 = 2.5 + 2/3, within 0.03 of the paper's 3.19.
    Counter: 4 + 2/2 = 5 instructions, 5/3 cycles."""
    brr = overhead_per_site("brr", 1)
    assert brr["instructions"] == 1.5
    assert brr["cycles"] == pytest.approx(0.5 * 5 + 2 / 3)
    assert abs(brr["cycles"] - 3.19) < 0.03
    # as the rate falls, one fetch slot per site (the paper: about 0.1 cycle measured)
    assert overhead_per_site("brr", 20)["cycles"] == pytest.approx(1 / 3, abs=1e-5)
    assert overhead_per_site("counter", 1) == {"instructions": 5.0, "cycles": 5 / 3}
    footer = {"counts": {"call": 1000}, "guest_instructions": 150_000,
              "skipped_instructions": 50_000}
    assert program_overhead(footer, 1) == {"brr": 1.5, "counter": 5.0, "calls": 1000,
                                           "instructions": 100_000}


def paper_register(stages, seed_bits, count):
    """The paper's words (sec. 4.2), bit by bit: stages 1..n, stage 1 the input; on an
    update every stage takes the bit of the stage before it and the input takes the
    XOR of the tapped stages. Returns the register after each update, as lists."""
    reg = list(seed_bits)  # reg[s - 1] is stage s
    out = []
    for _ in range(count):
        feedback = 0
        for s in stages:
            feedback ^= reg[s - 1]
        reg = [feedback] + reg[:-1]
        out.append(reg)
    return out


@pytest.mark.parametrize("name", sorted(PAPER_TAP_SETS))
def test_paper_stage_taps_run_the_papers_register(name, seed):
    """Our Fibonacci LFSR with the converted taps is the paper's register, state for
    state (stage s is our bit n - s: ours shifts toward bit 0 and feeds bit n - 1);
    the paper's numbers used as exponents unchanged are not (the mirror polynomial)."""
    stages = PAPER_TAP_SETS[name]
    rng = np.random.default_rng(seed)
    seed_state = int(rng.integers(1, 1 << 32))
    bits = [(seed_state >> (32 - s)) & 1 for s in range(1, 33)]
    expected = [sum(b << (32 - s) for s, b in enumerate(reg, start=1))
                for reg in paper_register(stages, bits, 300)]  # fmt: skip
    ours = Lfsr(width=32, seed=seed_state, taps=paper_stage_taps(stages))
    assert ours.sequence(301)[1:] == expected, f"seed {seed}"
    unconverted = Lfsr(width=32, seed=seed_state, taps=stages)
    assert unconverted.sequence(301)[1:] != expected


def test_paper_stage_taps_by_hand():
    assert paper_stage_taps((32, 31, 30, 10)) == (32, 22, 2, 1) == TAPS[32]
    assert paper_stage_taps((32, 19, 18, 13)) == (32, 19, 14, 13)
    assert paper_stage_taps((32, 31, 30, 29, 28, 22)) == (32, 10, 4, 3, 2, 1)
    assert paper_stage_taps((32, 22, 16, 15, 12, 11)) == (32, 21, 20, 17, 16, 10)
