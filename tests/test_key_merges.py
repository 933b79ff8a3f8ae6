"""``hwprof experiment key-merges``: exact merge counts, and the bound on the shipped traces.

The default key (``mix-fold``) must merge at most ``BOUND`` % of the distinct ``<pc, value>``
tuples of every shipped trace; the same check must fail on the earlier keys (the
xor-fold of ``multihash-values``, the low bits of ``stratified-values``), so that the
checker can fail.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from hwprof.experiments import key_merges
from hwprof.traces.workloads import WORKLOADS


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("key-merges")
    key_merges.run(out, 1, True)
    return json.loads((out / "key-merges-quick.json").read_text()), out


def test_mix_within_the_bound_on_every_shipped_trace(quick):
    record, _ = quick
    assert [t["workload"] for t in record["traces"]] == list(WORKLOADS)
    for t in record["traces"]:
        loads = t["tuples"]["loads"]
        assert loads["tuples"] > 1_000_000 and loads["pairs"] > 10_000, t["name"]
        assert loads["merged_pct"]["mix-fold"] <= key_merges.BOUND, t["name"]
    assert record["within_bound"]["mix-fold"] == {"all": True, "over": []}


def test_the_check_fails_on_the_earlier_keys(quick):
    record, out = quick
    for earlier in ("xor-fold", "low"):
        assert not record["within_bound"][earlier]["all"]
        assert any(t["tuples"]["loads"]["merged_pct"][earlier] > key_merges.BOUND
                   for t in record["traces"])  # fmt: skip
    md = (out / "key-merges-quick.md").read_text()
    assert "`mix-fold`: within the bound on every trace." in md
    assert "`xor-fold`: over the bound on" in md


def test_merge_counts_by_hand():
    # one pc; values written so that each earlier map merges a known pair:
    # low: 0x1 and 0x5_0000_0001 (same low half); xor-fold: 0x2 and 0x2_0000_0000
    # (2 ^ 0 == 0 ^ 2); 0x7 apart from all. A second pc with 0x1 merges with nothing.
    # mix-fold: 1, 2, 7 key as themselves; 0x5_0000_0001 and 0x2_0000_0000 xor their
    # low halves with the mixes of 5 and 2, far from the three and from each other.
    pc = np.array([0x400000] * 5 + [0x400004], np.uint64)
    x = np.array([0x1, 0x5_0000_0001, 0x2, 0x2_0000_0000, 0x7, 0x1], np.uint64)
    got = key_merges.merge_counts(*key_merges.distinct_tuples([(pc, x), (pc, x)])[:2])
    assert got["pairs"] == 6 and got["pcs"] == 2
    assert got["merged"] == {"mix-fold": 0, "mix": 0, "low": 1, "xor-fold": 1}
    assert got["merged_pct"]["low"] == pytest.approx(100 / 6)
    assert got["chance_merges"] == pytest.approx((5 * 4 / 2) / 2**32)


def test_mix_fold_keeps_apart_values_that_share_their_high_half():
    """The mix-fold is one-to-one on values with the same high half: a run of 2**16
    consecutive values under each of 64 high halves gives no merge, while low merges
    all but one value of each run position."""
    lows = np.arange(1 << 16, dtype=np.uint64)
    x = np.concatenate([lows | np.uint64(h << 32) for h in range(64)])
    pc = np.full(len(x), 0x400000, np.uint64)
    got = key_merges.merge_counts(pc, x)
    # (each high half fills one aligned block of 2**16 keys; these 64 blocks are apart)
    assert got["merged"]["mix-fold"] == 0 and got["merged"]["low"] == 63 << 16


def test_distinct_tuples_is_exact_across_compactions(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    pcs = rng.integers(0, 8, 5000).astype(np.uint64) << np.uint64(40)
    xs = rng.integers(0, 300, 5000).astype(np.uint64) << np.uint64(33)
    chunks = [(pcs[i:i + 97], xs[i:i + 97]) for i in range(0, 5000, 97)]
    monkeypatch.setattr(key_merges, "COMPACT", 16)  # merge again every few chunks
    pc, x, total = key_merges.distinct_tuples(chunks)
    want = np.unique(np.stack([pcs, xs], axis=1), axis=0)
    assert total == 5000, seed
    np.testing.assert_array_equal(np.stack([pc, x], axis=1), want)


def test_a_full_run_keeps_the_earlier_measures_of_captured_traces(tmp_path, monkeypatch):
    # the earlier record holds every captured trace under its file name: none is captured
    # again (trace_for would raise), and only those come back marked as kept
    from hwprof.experiments.multihash_values import LIMIT
    from hwprof.experiments.stratified_values import FULL
    from hwprof.traces import workloads

    def no_capture(*args, **kwargs):
        raise AssertionError("trace_for called for a kept trace")

    monkeypatch.setattr(workloads, "trace_for", no_capture)
    traces = []
    for kinds, limit, what in (("loads,branches", FULL["capture_limit"], "stratified-values"),
                               ("loads", LIMIT, "multihash-values")):  # fmt: skip
        for name in WORKLOADS:
            scale = workloads.LARGE_SCALE[name]
            path = workloads.cached_trace_path(
                name, kinds=kinds, skip=WORKLOADS[name].skip, limit=limit,
                seed=workloads.DEFAULT_SEED, cache="build/traces", scale=scale)  # fmt: skip
            traces.append({"name": f"{name} x{scale} ({what})", "file": path.name})
    record = {"value_maps": list(key_merges.VALUE_MAPS), "interval": key_merges.INTERVAL,
              "traces": [{"name": "xz (shipped)", "file": "xz.trace"}, *traces]}  # fmt: skip
    (tmp_path / "key-merges.json").write_text(json.dumps(record))
    earlier = key_merges.earlier_measures(tmp_path / "key-merges.json", False, ())
    assert len(earlier) == 11
    sources = key_merges._sources(False, (), print, kept=frozenset(earlier))
    assert [n for n, _, kept in sources if kept] == [t["name"] for t in traces]
    assert [n for n, _, kept in sources if not kept] == [f"{n} (shipped)" for n in WORKLOADS]
    # nothing is kept for --quick or --trace runs, or from a record of other value maps
    assert key_merges.earlier_measures(tmp_path / "key-merges.json", True, ()) == {}
    assert key_merges.earlier_measures(tmp_path / "key-merges.json", False, ("f",)) == {}
    record["value_maps"] = ["low"]
    (tmp_path / "key-merges.json").write_text(json.dumps(record))
    assert key_merges.earlier_measures(tmp_path / "key-merges.json", False, ()) == {}
