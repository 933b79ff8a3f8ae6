"""``hwprof experiment brr-resonance``: the property measures compute what they claim on
hand-built streams, the generator builds what it says, and the quick run resonates where
the paper's argument says it must."""

import json
from pathlib import Path

import numpy as np
import pytest

from hwprof.experiments import all_experiments
from hwprof.experiments import brr_resonance as br
from hwprof.traces.workloads import SHIPPED_DIR


def test_aliasing_loss_of_loop_bodies():
    # two leaf methods A B: a counter of even period samples one of them -> half lost
    assert br.aliasing_loss(np.array([0, 1]), 1024) == pytest.approx(0.5)
    # odd period: every position sampled
    assert br.aliasing_loss(np.array([0, 1, 2]), 1024) == 0.0
    # the interpreter's body push push mul add inc jlt: classes {push mul inc} and
    # {push add jlt} hold 1/3 each where the body holds push 1/3, the rest 1/6 each:
    # overlap 1/3 + 1/6 + 1/6 = 2/3 -> 1/3 lost
    assert br.aliasing_loss(np.array([0, 0, 1, 2, 3, 4]), 1024) == pytest.approx(1 / 3)
    # A A B B with period 4: classes mod 4 are single sites, each overlapping 1/2
    assert br.aliasing_loss(np.array([0, 0, 1, 1]), 1024) == pytest.approx(0.5)


def test_periodic_stretches_find_a_long_two_site_loop():
    rng = np.random.default_rng(5)
    noise = 10 + rng.permutation(4000)  # distinct sites: no period
    loop = np.tile([0, 1], 1500)  # 3000 events of period 2
    sites = np.concatenate([noise[:2000], loop, noise[2000:]])
    found = br.periodic_stretches(sites, 1024)
    assert found["by_period"] == {2: pytest.approx(3000 / 7000)}
    assert found["resonant"] == pytest.approx(3000 / 7000)
    assert found["predicted_loss"] == pytest.approx(100 * 0.5 * 3000 / 7000)
    assert found["stretches"] == 1
    # shorter than the interval: not a resonant stretch
    assert br.periodic_stretches(sites, 4096)["periodic"] == 0.0
    # an odd period is periodic but shares no factor with the interval
    odd = np.concatenate([noise[:2000], np.tile([0, 1, 2], 1000), noise[2000:]])
    found = br.periodic_stretches(odd, 1024)
    assert found["periodic"] == pytest.approx(3000 / 7000) and found["resonant"] == 0.0


@pytest.mark.parametrize("share", [0.25, 0.5])
def test_loop_stream_holds_the_loop_share(share, seed):
    rng = np.random.default_rng(seed)
    sites = br.loop_stream(1 << 16, 2, 64, share, rng)
    assert len(sites) == 1 << 16
    found = br.periodic_stretches(sites, 100)
    # instances of 128 events of period 2; the stretches' share is the loop's share
    assert found["resonant"] == pytest.approx(share, abs=0.06), seed


def test_shipped_c_programs_have_the_property():
    # the kernel's calls alternate load, store; the interpreter's repeat 6 handlers
    kernel = br.call_sites(SHIPPED_DIR / "kernel.trace", 4096)
    assert len(set(kernel.tolist())) == 2 and (kernel[2:] == kernel[:-2]).all()
    assert (kernel[1:] != kernel[:-1]).all()
    interp = br.call_sites(SHIPPED_DIR / "interp.trace", 4096)
    assert (interp[6:] == interp[:-6]).all() and len(set(interp.tolist())) == 5


def test_quick_run_resonates_on_even_loops(tmp_path, seed):
    all_experiments()["brr-resonance"].run(tmp_path, seed, quick=True)
    result = json.loads((tmp_path / "brr-resonance-quick.json").read_text())
    assert (tmp_path / "brr-resonance-quick.png").stat().st_size > 0
    text = (tmp_path / "brr-resonance-quick.md").read_text()
    assert "## Verdict" in text and "almost 7" in text
    for row in result["sweeps"]:
        if row["sweep"] == "period" and row["rate"] == 10:
            # one loop of L distinct sites: the counter sees L / gcd(L, 1024) of them
            g = np.gcd(row["value"], 1024)
            assert row["hw-counter"]["max"] <= 100 / g + 1e-9, row
    kernel = [p for p in result["programs"] if p["program"] == "kernel"
              and p["stream"] == "calls" and p["rate"] == 10][0]  # fmt: skip
    assert br.resonates(kernel) and kernel["hw-counter"]["mean"] == pytest.approx(50.0)


def test_page_reads_its_settings_from_the_record():
    """The page's paper gap, trip-sweep share, rates and program count come from the
    record (the committed one as input), not from the module's constants."""
    path = Path(__file__).resolve().parent.parent / "docs/results/brr-resonance.json"
    record = json.loads(path.read_text())
    page = br._markdown(record, "brr-resonance")
    assert "(only the 7-point gap)" in page and "| L | gcd(L, 2^10) |" in page
    assert "the loop holding 50% of the events" in page and "Our 5 workloads" in page
    record["paper_gap"] = 9.0
    for row in record["sweeps"]:
        if row["sweep"] == "trip":
            row["share"] = 0.4
    record["programs"] = [p for p in record["programs"] if p["program"] != "xz"]
    page = br._markdown(record, "brr-resonance")
    assert "(only the 9-point gap)" in page and "The paper's 9 points at 2^-10" in page
    assert "the loop holding 40% of the events" in page and "50%" not in page
    assert "Our 4 workloads" in page


def test_verdict_names_where_brr_falls_below_random_sampling():
    """The bullet on brr below the Bernoulli sampler lists the rows where brr's highest
    accuracy is under Bernoulli's lowest, and which loop periods share a factor with the
    LFSR's period (none for a 19-bit LFSR: 2^19 - 1 is prime)."""
    path = Path(__file__).resolve().parent.parent / "docs/results/brr-resonance.json"
    record = json.loads(path.read_text())
    page = br._markdown(record, "brr-resonance")
    assert "at 2^-13: L = 5, 11, 15, 16; real programs: kernel (taken, 2^-13)." in page
    assert "L = 5, 6, 11, 15 share a factor with the period 2^20 - 1 = 1,048,575" in page
    record["lfsr_width"] = 19
    assert "share a factor" not in br._markdown(record, "brr-resonance")
    for row in record["sweeps"]:
        if row["sweep"] == "period" and row["value"] == 5:
            row["bernoulli"]["min"] = row["brr"]["max"]  # not below: equal is not under
    page = br._markdown(record, "brr-resonance")
    assert "at 2^-10: L = 6, 11, 15; at 2^-13: L = 11, 15, 16;" in page
    assert br.below_bernoulli({"brr": {"max": 90.0}, "bernoulli": {"min": 90.1}})
    assert not br.below_bernoulli({"brr": {"max": 90.1}, "bernoulli": {"min": 90.1}})
