"""The turnover stream against its definition, and the turnover measure against
hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hwprof.experiments import stratified_turnover as st
from hwprof.experiments.stratified_conditions import turnover_stream, value_stream

PC = np.uint64(32)


def slot_map(stream: np.ndarray, base: np.ndarray, phase: int, what: str) -> list[dict]:
    """Per phase, for every load slot (named by its pc in the stationary ``base``
    stream, which draws the same slots) the set of pcs (``what="pc"``) or of values
    (``"values"``) it shows in ``stream`` during that phase."""
    out = []
    for start in range(0, len(stream), phase):
        slots = base[start : start + phase] >> PC
        shown = stream[start : start + phase] >> PC if what == "pc" else (
            stream[start : start + phase] & np.uint64(0xFFFFFFFF))  # fmt: skip
        seen: dict = {}
        for s, x in zip(slots.tolist(), shown.tolist(), strict=True):
            seen.setdefault(s, set()).add(x)
        out.append(seen)
    return out


def renewed_per_phase(maps: list[dict]) -> list[int]:
    """Per phase change, the slots (seen in both phases) whose pcs or values in the new
    phase share nothing with those of the phase before."""
    pairs = zip(maps, maps[1:], strict=False)
    return [sum(1 for s in b if s in a and not (a[s] & b[s])) for a, b in pairs]


@pytest.mark.parametrize("rest", ["few", "fresh"])
@pytest.mark.parametrize("renew", ["loads", "values"])
def test_no_turnover_is_the_stationary_stream(rest, renew):
    seed = 7
    a = turnover_stream(seed, 30_000, 50, 1.0, rest, 1_000, 0.0, renew)
    assert np.array_equal(a, value_stream(seed, 30_000, 50, 1.0, "iid", rest)), seed
    # one phase: nothing turns over either
    b = turnover_stream(seed, 30_000, 50, 1.0, rest, 30_000, 1.0, renew)
    assert np.array_equal(b, value_stream(seed, 30_000, 50, 1.0, "iid", rest)), seed


def test_new_loads_enter_at_each_phase_change():
    seed, loads, phase, q, events = 3, 20, 20_000, 0.25, 100_000
    t = turnover_stream(seed, events, loads, 0.5, "few", phase, q, "loads")
    base = value_stream(seed, events, loads, 0.5, "iid", "few")
    maps = slot_map(t, base, phase, "pc")
    # within a phase every slot shows one pc; the slots' draws are the stationary stream's
    assert all(len(pcs) == 1 for m in maps for pcs in m.values()), seed
    # exactly round(q * loads) slots take a new pc at each phase change, every slot is
    # seen in every phase (so none is missed), and a new pc was never used before
    assert all(set(m) == set(maps[0]) for m in maps) and len(maps[0]) == loads, seed
    assert renewed_per_phase(maps) == [round(q * loads)] * (events // phase - 1), seed
    used = {next(iter(p)) for p in maps[0].values()}
    for before, m in zip(maps, maps[1:], strict=False):
        entered = {next(iter(p)) for p in m.values()} - {next(iter(p)) for p in before.values()}
        assert len(entered) == round(q * loads) and not entered & used, seed
        used |= entered
    # the values' kinds are kept: an event shows a slot's first top value in the turnover
    # stream where it does in the stationary one (the first phase: the same identity)
    assert np.array_equal(t[:phase], base[:phase]), seed


def test_new_values_at_the_same_pcs():
    seed, loads, phase, q, events = 5, 20, 20_000, 0.5, 80_000
    t = turnover_stream(seed, events, loads, 0.5, "few", phase, q, "values")
    base = value_stream(seed, events, loads, 0.5, "iid", "few")
    assert np.array_equal(t >> PC, base >> PC), seed  # the pcs never change
    maps = slot_map(t, base, phase, "values")
    assert renewed_per_phase(maps) == [round(q * loads)] * (events // phase - 1), seed


def test_a_core_that_never_turns_over():
    seed, loads, core, phase, q, events = 3, 20, 5, 20_000, 0.5, 80_000
    t = turnover_stream(seed, events, loads, 0.5, "few", phase, q, "loads", core)
    base = value_stream(seed, events, loads, 0.5, "iid", "few")
    maps = slot_map(t, base, phase, "pc")
    # the core: the slots of the largest shares, the most frequent pcs of the base stream
    pcs, counts = np.unique(base >> PC, return_counts=True)
    hot = set(pcs[np.argsort(counts)[::-1][:core]].tolist())
    for m in maps:
        for s in hot:
            assert m[s] == {s}, seed  # never renewed: the base stream's pc
    assert renewed_per_phase(maps) == [round(q * (loads - core))] * (events // phase - 1)
    with pytest.raises(ValueError, match="core"):
        turnover_stream(seed, 100, loads, 0.5, "few", 10, q, "loads", loads + 1)


def test_the_renewal_checker_sees_one_slot_too_many():
    """The checker of the two tests above, on a stream where one more slot changes its pc
    at the second phase change than the definition says."""
    seed, loads, phase, q, events = 3, 20, 20_000, 0.25, 60_000
    t = turnover_stream(seed, events, loads, 0.5, "few", phase, q, "loads").copy()
    base = value_stream(seed, events, loads, 0.5, "iid", "few")
    maps = slot_map(t, base, phase, "pc")
    # a slot that kept its pc through the second change: give it a new pc from then on
    kept = next(s for s in maps[2] if maps[1][s] == maps[2][s])
    late = np.arange(events) >= 2 * phase
    hit = late & ((base >> PC) == np.uint64(kept))
    t[hit] = (np.uint64(0xABCDE0) << PC) | (t[hit] & np.uint64(0xFFFFFFFF))
    assert renewed_per_phase(slot_map(t, base, phase, "pc")) == [5, 6]


def test_bad_parameters():
    with pytest.raises(ValueError, match="renew"):
        turnover_stream(1, 100, 10, 1.0, "few", 10, 0.5, "pcs")
    with pytest.raises(ValueError, match="turnover"):
        turnover_stream(1, 100, 10, 1.0, "few", 10, 1.5)
    with pytest.raises(ValueError, match="phase"):
        turnover_stream(1, 100, 10, 1.0, "few", 0, 0.5)


def key(pc: int, value: int) -> int:
    return (pc << 32) | value


def test_measure_when_a_new_load_enters():
    """Load A (values 5, 5, 5, 6 in turn) for 2000 events, then load B (value 7) for 2000:
    at 4000, B's tuple is new and holds half the selected weight; A's tuples' mean load
    executions stay 2000, B's are 2000: growth 0."""
    a = [key(1, 5), key(1, 5), key(1, 5), key(1, 6)] * 500
    keys = np.array(a + [key(2, 7)] * 2000, np.uint64)
    t = st.turnover_properties(keys, [2000, 4000])
    assert t["selected_tuples"] == [2, 3]
    assert t["new_share"] == [pytest.approx(0.5)]
    assert t["growth"] == [pytest.approx(0.0)]
    # at 2000: A's two tuples, I = 0.75 and 0.25, n_pc = 2000: both have the same sd
    sd = 100 * math.sqrt(2 / math.pi) * math.sqrt(0.75 * 0.25 * 256 / 2000)
    assert t["r256_expected"][0] == pytest.approx(sd)
    # at 4000: half the weight on A's tuples (sd as before), half on B's (I = 1: none)
    assert t["r256_expected"][1] == pytest.approx(sd / 2)


def test_measure_on_a_stationary_interleaving():
    """A and B interleaved: every selected load doubles its executions from 2000 to 4000
    events (growth 1), no tuple is new, the expected error falls by sqrt(2)."""
    keys = np.array([key(1, 5), key(2, 7), key(1, 5), key(2, 7), key(1, 5), key(2, 7),
                     key(1, 6), key(2, 7)] * 500, np.uint64)  # fmt: skip
    t = st.turnover_properties(keys, [2000, 4000])
    assert t["new_share"] == [0.0]
    assert t["growth"] == [pytest.approx(1.0)]
    assert t["r256_expected"][1] == pytest.approx(t["r256_expected"][0] / math.sqrt(2))


def test_measure_follows_the_generator():
    """On generated streams the measure tells turnover from none: every load renewed
    each 100K events against the stationary stream. Renewed at every phase, the loads of
    a doubling's second half are all new: half the weight, and the mean executions stay;
    stationary, the loads keep gaining (the Zipf tail crossing the 1000-execution line
    holds the growth below 1 and the new share above 0 while the stream is short)."""
    still = st.turnover_properties(turnover_stream(2, 800_000, 100, 1.0, "few", 100_000, 0.0))
    moving = st.turnover_properties(turnover_stream(2, 800_000, 100, 1.0, "few", 100_000, 1.0))
    assert still["checkpoints"] == [50_000, 100_000, 200_000, 400_000, 800_000]
    assert min(still["growth"]) > 0.7 and still["new_share"][-1] < 0.1
    assert still["new_share"] == sorted(still["new_share"], reverse=True)
    # the first pair lies inside the first phase: the stationary stream's
    assert moving["growth"][0] == still["growth"][0]
    assert max(abs(g) for g in moving["growth"][1:]) < 0.05
    assert all(0.45 < x < 0.55 for x in moving["new_share"][1:])


def test_setting_names_and_unit_keys():
    g = (1_000, "few", "loads", 100_000, 0.3)
    assert st.setting_name(g) == "1000 loads 100K x0.3"
    assert st.setting_name((*g, 1.0)) == "1000 loads 100K x0.3"  # the default skew
    assert st.setting_name((*g, 1.5)) == "1000 loads 100K x0.3 z1.5"
    assert st.setting_name((100, "few", "values", 1_000_000, 0.0, 1.5)) == "100 stationary z1.5"
    assert st._key(g, 2) == st._key((*g, 1.0), 2) != st._key((*g, 1.5), 2)
    assert st.setting_name((*g, 1.5, 10)) == "1000 loads 100K x0.3 z1.5 core10"
    assert st._key((*g, 1.5, 0), 2) == st._key((*g, 1.5), 2) != st._key((*g, 1.5, 10), 2)


def test_doubling():
    assert st.doubling(16_000_000) == [250_000 * 2**k for k in range(6)] + [16_000_000]
    assert st.doubling(160) == [10, 20, 40, 80, 160]


def test_trace_turnover_reads_a_load_trace():
    from hwprof.traces import workloads

    path = workloads.shipped_trace("xz")
    t = st.trace_turnover(path, 320_000)
    assert t["trace"] == "xz.trace" and t["events"] == 320_000
    assert t["checkpoints"] == [20_000, 40_000, 80_000, 160_000, 320_000]
    assert len(t["growth"]) == 4 and len(t["r256_expected"]) == 5


def _cell(setting, r_reach, h_reach, r_stay, h_stay, growth=(0.3, 0.5)):
    n = len(r_reach)
    cps = [10_000, 100_000, 1_000_000, 16_000_000]
    pts = {"R_256": {"reach": r_reach, "stay": r_stay},
           "H[P_256]_2048": {"reach": h_reach, "stay": h_stay}}  # fmt: skip
    return {"setting": list(setting), "checkpoints": cps,
            "points": {v: pts for v in st.READINGS},
            "finals": {v: {k: [4.0] * n for k in st.PAIR} for v in st.READINGS},
            "mean_curves": {v: {k: [9.0, 6.0, 4.0, 3.0] for k in st.PAIR} for v in st.READINGS},
            "properties": [{"span_new_share": 0.2, "span_growth": g, "distinct": 10, "loads": 5}
                           for g in growth],
            "turnover_curves": {"new_share": [[0.2]] * n, "growth": [[0.4]] * n,
                                "r256_expected": [[5.0, 4.5]] * n},
            "turnover_checkpoints": [250_000, 500_000]}  # fmt: skip


def _record(cells, real=None):
    from hwprof.experiments.stratified_long import PAPER

    sizes = {"version": st.VERSION, "seed": 1, "seeds": 2, "events": 16_000_000,
             "checkpoints": 4}  # fmt: skip
    return {"paper": PAPER, "turnover": {"sizes": sizes, "cells": cells, "kept": [],
                                         "real": real or {}}}  # fmt: skip


def test_turnover_section_is_computed_from_the_record(tmp_path):
    # stay ratios 20 and 30 (the paper's 23 inside), reach 3.0 and 4.0 (3.0-3.5 inside)
    moving = _cell((1_000, "few", "loads", 1_000_000, 0.3), [300_000, 400_000],
                   [100_000] * 2, [2_000_000, 3_000_000], [100_000] * 2)  # fmt: skip
    still = _cell((1_000, "few", "loads", 1_000_000, 0.0), [100_000] * 2, [100_000] * 2,
                  [200_000] * 2, [100_000] * 2, growth=(0.9, 1.0))  # fmt: skip
    real = {"xz": {"span_new_share": 0.05, "span_growth": 0.95, "selected_tuples": [3, 4],
                   "r256_expected": [1.0, 0.5], "checkpoints": [250_000, 500_000]}}  # fmt: skip
    r = _record([still, moving], real)
    md = "\n".join(st.turnover_markdown(r, "x"))
    assert st.setting_name(moving["setting"]) == "1000 loads 1M x0.3"
    assert ("| 1000 loads 1M x0.3 | 0.200 | 0.40 | 4.50 / 4.00 | prefix | 300K-400K | 2M-3M | "
            "100K | 100K | 3.50 [3.00-4.00] | reproduced | 25.00 [20.00-30.00] | reproduced "
            "| 2/2 |") in md  # fmt: skip
    # a step of 11.7: both seeds' stay ratios (20 and 30) are near 23
    assert ("- The paper's stay ratio lies inside our seed spread in 1000 loads 1M x0.3 "
            "(`prefix`: 2 of 2 seeds near it), 1000 loads 1M x0.3 (`both`: 2 of 2 seeds near "
            "it); with the reach ratio as well in 1000 loads 1M x0.3 (`prefix`), 1000 loads "
            "1M x0.3 (`both`).") in md  # fmt: skip
    # the stationary cell's ratio 2 is near too: 23 / 11.7 = 1.97
    assert ("Verdict: a seed's measured stay ratio lies near the paper's in 1000 stationary "
            "(`prefix`), 1000 stationary (`both`), 1000 loads 1M x0.3 (`prefix`), 1000 loads "
            "1M x0.3 (`both`); the paper's two halves (R_256 "
            "settling near 7M, H[P_256] by 300K) appear in the same setting in 1000 loads 1M "
            "x0.3;") in md  # fmt: skip
    assert "| xz | 0.050 | 0.95 | 3, 4 | 1.00, 0.50 |" in md
    # a step of 11.7: R_256 at 2M-3M is near the paper's 7M, at 200K it is not
    assert ("- `prefix`, the two halves apart: some seed's R_256 stays below 5 % within a "
            "checkpoint step of the paper's 7M in 1000 loads 1M x0.3; some seed's "
            "H[P_256]_2048 by the paper's 300K (or a step later) in 1000 stationary, 1000 "
            "loads 1M x0.3; both in the same setting: 1000 loads 1M x0.3.") in md  # fmt: skip
    assert (
        "- `prefix`: R_256 is above 5 % at the last event in some seed in no setting; "
        "H[P_256]_2048 stays below 5 % after 100K events in every setting and seed."
    ) in md
    # a seed whose R_256 never settles, and one whose H[P] never does
    moving["points"]["both"] = {
        "R_256": {"reach": [1, 1], "stay": [None, 2_000_000]},
        "H[P_256]_2048": {"reach": [1, 1], "stay": [100_000, None]},
    }
    md = "\n".join(st.turnover_markdown(r, "x"))
    assert (
        "- `both`: R_256 is above 5 % at the last event in some seed in 1000 loads 1M "
        "x0.3; H[P_256]_2048 stays below 5 % after 100K events (1 of 4 seed runs "
        "never)."
    ) in md
    moving["points"]["both"] = moving["points"]["prefix"]
    assert "the stationary streams' growth is 0.95-0.95" in md
    assert "our programs' growth: xz 0.95." in md
    # one seed's R_256 stays below 5 % sooner: stay ratios 10 and 30 still straddle 23;
    # both at 10: the paper's stay ratio lies outside
    moving["points"]["prefix"] = {k: dict(v) for k, v in moving["points"]["prefix"].items()}
    moving["points"]["prefix"]["R_256"]["stay"] = [1_000_000, 1_000_000]
    md = "\n".join(st.turnover_markdown(r, "x"))
    assert "| 10.00 [10.00-10.00] | differs | 2/2 |" in md  # a step of 11.7: near
    assert "seed spread in 1000 loads 1M x0.3 (`both`: 2 of 2 seeds near it);" in md
    # one seed's R_256 above 5 % at the end (a ratio > 160), one settled at 18x: near
    moving["points"]["both"] = {
        "R_256": {"reach": [300_000, 400_000], "stay": [None, 1_800_000]},
        "H[P_256]_2048": {"reach": [100_000] * 2, "stay": [100_000] * 2}}  # fmt: skip
    md = "\n".join(st.turnover_markdown(r, "x"))
    assert "1000 loads 1M x0.3 (`both`: 1 of 2 seeds near it)" in md  # 18 is near 23
    moving["points"]["both"]["R_256"] = {"reach": [300_000, 100_000], "stay": [None, 100_000]}
    # ratios > 160 and 1: inside the spread, neither near
    md = "\n".join(st.turnover_markdown(r, "x"))
    assert (
        "lies inside the seed spread in 1000 loads 1M x0.3 (`both`) only through seeds "
        "whose R_256 is still above 5 % at the last event (growth 0.40)"
    ) in md
    st.plot_turnover(r, tmp_path, "x")
    assert (tmp_path / "x-turnover.png").stat().st_size > 0
