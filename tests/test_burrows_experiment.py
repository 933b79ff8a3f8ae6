"""``hwprof experiment burrows-hotlist --quick``: the files, the numbers of the page from
its JSON, formula (1) against the readable reference, the sampled fractions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hwprof.cli import main
from hwprof.experiments import burrows_hotlist as bh
from hwprof.golden.multihash import PRESETS, BulkProfiler, error_rate, split_profiles
from hwprof.golden.site_hotlist import SiteProfiler, site_storage_bits
from hwprof.traces import workloads
from hwprof.traces.keys import trace_keys

PROGRAM = "xz (shipped)"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("burrows")
    assert main(["experiment", "burrows-hotlist", "--quick", "-o", str(out)]) == 0
    record = json.loads((out / "burrows-hotlist-quick.json").read_text())
    return record, (out / "burrows-hotlist-quick.md").read_text(), out


def test_files_and_sizes(quick):
    record, md, out = quick
    assert (out / "burrows-hotlist-quick.png").stat().st_size > 0
    assert record["seeds"] == bh.QUICK_SEEDS
    r = record["results"]["10k"][PROGRAM]
    assert r["intervals"] == bh.QUICK["10k"] // 10_000
    assert len(r["profilers"]["per-site N=16"]["seeds"]) == bh.QUICK_SEEDS
    assert "Table 2a" in md and "cannot be reproduced here" in md


def test_page_numbers_come_from_the_json(quick):
    record, md, _ = quick
    for preset, entry in record["summary"].items():
        if preset == "whole":
            for row in entry["rate"]:
                assert f"| {row['mean']:.2f} [{row['min']:.2f}-{row['max']:.2f}] |" in md
            continue
        for label, err in entry["error"].items():
            if " 1/" in label:
                continue
            one = record["results"][preset][PROGRAM]["profilers"][label]["mean"]
            assert (f"| {label} | {one:.2f} | {err['mean']:.2f} [{err['min']:.2f}-"
                    f"{err['max']:.2f}] | {entry['storage_bits'][label]:,.0f} |") in md  # fmt: skip
        assert f"Multi-hash budget: {entry['budget_bits']:,.0f} bits" in md


def _keys(n):
    return np.concatenate(list(trace_keys(workloads.shipped_trace("xz"), limit=n)))


def test_formula_1_matches_the_readable_reference(quick):
    """Seed 0's per-site N=16 and multi-hash errors at 10k are what the readable formula
    (1) of hwprof.golden.multihash gives for the same profilers' profiles."""
    record, _, _ = quick
    keys = _keys(bh.QUICK["10k"])
    length, threshold = PRESETS["10k"]["interval_length"], PRESETS["10k"]["threshold"]
    got = record["results"]["10k"][PROGRAM]["profilers"]
    site = SiteProfiler(length, threshold, entries=16, seed=1000 * record["seed"])
    want = error_rate(keys, split_profiles(*site.feed(keys)), length, threshold)
    assert got["per-site N=16"]["seeds"][0] == pytest.approx(100 * want.total, rel=1e-9)
    mh = BulkProfiler(tables=4, conservative=True, reset=False, retain=True, hash_seed=1,
                      **PRESETS["10k"])  # fmt: skip
    want = error_rate(keys, split_profiles(*mh.feed(keys)), length, threshold)
    assert got["multi-hash C1R0 4"]["seeds"][0] == pytest.approx(100 * want.total, rel=1e-9)


def test_sampled_fractions_and_storage(quick):
    record, _, _ = quick
    n = record["results"]["10k"][PROGRAM]["tuples"]
    for row in record["summary"]["10k"]["rate"]:
        # one interrupt at either end of the stream, per seed
        assert abs(row["sampled_fraction"] * n - n / row["period"]) <= 2
    r = record["results"]["10k"][PROGRAM]["profilers"]["per-site N=4"]
    assert r["storage"]["bits"] == site_storage_bits(r["sites"]["max"], 4, 10_000)
    assert r["storage"]["bits"] == r["sites"]["max"] * (32 + 16 + 4 * (32 + 14))


def test_paper_operating_point():
    # 62K instructions per interrupt, 4 instructions at one interrupt in two
    assert bh.PAPER_PERIOD == 31_000 == bh.PERIODS[-1]
    assert bh.jitter_for(62_000) == 2000  # 60K-64K


def test_a_trace_shorter_than_an_interval_exits_2_and_writes_nothing(tmp_path, capsys):
    from hwprof.traces.tracefile import LOAD, TraceWriter

    path = tmp_path / "short.trace"
    with TraceWriter(path, header={"program": "short", "argv": []}) as w:
        w.write(kind=LOAD, pc=np.full(500, 0x401000, np.uint64), addr=0,
                value=np.arange(500, dtype=np.uint64), size=8)  # fmt: skip
        w.close(footer={})
    out = tmp_path / "out"
    assert main(["experiment", "burrows-hotlist", "--trace", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == "hwprof: error: no trace with a whole interval of loads\n"
    assert not out.exists()


def test_lowest_error_within_the_budget_is_named_beside_the_lowest():
    """The page names the lowest error over all structures and, apart, the lowest among
    those whose storage is within the multi-hash budget (the committed record as input)."""
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "docs/results/burrows-hotlist.json"
    record = json.loads(path.read_text())
    page = bh.markdown(record, "burrows-hotlist")
    assert ("Lowest mean error: H[P_16]_2048 (1,415,864 bits); lowest within the multi-hash "
            "budget (139,152 bits): multi-hash C1R0 4.") in page  # fmt: skip
    entry = record["summary"]["1m"]
    entry["storage_bits"]["H[P_16]_2048"] = entry["budget_bits"]  # now it fits, just
    page = bh.markdown(record, "burrows-hotlist")
    assert "budget (139,152 bits): H[P_16]_2048." in page
    entry["storage_bits"]["H[P_16]_2048"] = entry["budget_bits"] + 1
    entry["storage_bits"]["multi-hash C1R0 4"] = entry["budget_bits"] + 1
    entry["error"]["H[P_256]_2048"]["mean"] = 3.0  # below the global hotlist's 24.88
    page = bh.markdown(record, "burrows-hotlist")
    assert "budget (139,152 bits): H[P_256]_2048." in page


def test_notes_read_the_interrupt_period_and_counter_widths_from_the_record():
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "docs/results/burrows-hotlist.json"
    record = json.loads(path.read_text())
    page = bh.markdown(record, "burrows-hotlist")
    assert "(60K-64K for 62K;" in page and "(14 bits at 10k, 20 bits at 1m)" in page
    record["paper"]["interrupt_instructions"] = 93_000  # 93,000 // 31 = 3,000
    record["configurations"]["1m"]["interval_length"] = 100_000
    page = bh.markdown(record, "burrows-hotlist")
    assert "(90K-96K for 93K;" in page and "(14 bits at 10k, 17 bits at 1m)" in page
