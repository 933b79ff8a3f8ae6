"""RTL LFSR (Amaranth simulator) against the golden model, every table width."""

import random

import pytest

from hwprof.golden.lfsr import FORMS, TAPS, Lfsr
from hwprof.rtl.lfsr import Lfsr as LfsrRtl
from tests.pysim import compare

CYCLES = 120


def stimulus(rng, width, cycles=CYCLES):
    for _ in range(cycles):
        load = rng.random() < 0.05
        yield {
            "enable": int(rng.random() < 0.8),
            "load": int(load),
            "load_data": 0 if rng.random() < 0.2 else rng.getrandbits(width),
        }


def run(rtl_params, golden_params, seed, cycles=CYCLES):
    rng = random.Random(seed)
    width = rtl_params["width"]
    dut = LfsrRtl(**rtl_params)
    model = Lfsr(**golden_params)

    def model_step(enable, load, load_data):
        shown = model.step(enable=enable, load=load, load_data=load_data)
        return {"state": shown}

    return compare(dut, model_step, list(stimulus(rng, width, cycles)), ["state"])


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("width", sorted(TAPS))
def test_rtl_matches_golden(width, form, seed):
    steps = 1 + seed % 4 if width % 2 else 1  # multi-step on odd widths
    params = {"width": width, "form": form, "steps": steps,
              "seed": random.Random(seed).randrange(1, 2**width)}  # fmt: skip
    assert run(params, params, seed) == [], f"seed {seed}"


@pytest.mark.parametrize("form", FORMS)
def test_rtl_multi_step_wide(form, seed):
    params = {"width": 32, "form": form, "steps": 4}
    assert run(params, params, seed) == [], f"seed {seed}"


def test_rtl_without_lockup_escape_stays_in_zero(seed):
    params = {"width": 16, "lockup_escape": False}
    assert run(params, params, seed) == [], f"seed {seed}"


def test_checker_catches_a_wrong_tap(seed):
    """Same check, RTL built with other (also primitive) taps: must mismatch."""
    rtl = {"width": 20, "taps": (20, 3)}
    golden = {"width": 20}
    assert run(rtl, golden, seed), "a wrong tap went unnoticed"


def test_checker_catches_a_missing_lockup_escape(seed):
    rng = random.Random(seed)
    dut = LfsrRtl(width=12, lockup_escape=False)
    model = Lfsr(width=12)
    cycles = [{"enable": 0, "load": 1, "load_data": 0}] + [
        {"enable": 1, "load": 0, "load_data": rng.getrandbits(12)} for _ in range(5)
    ]
    mismatches = compare(dut, lambda **kw: {"state": model.step(**kw)}, cycles, ["state"])
    assert mismatches and mismatches[0][0] == 2


@pytest.mark.parametrize("params, message", [
    ({"width": 70}, "width must be between 3 and 64, not 70"),
    ({"width": 8, "seed": 0}, "seed must be non-zero"),
    ({"steps": 0}, "steps must be at least 1, not 0"),
])  # fmt: skip
def test_rtl_rejects_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        LfsrRtl(**params)
