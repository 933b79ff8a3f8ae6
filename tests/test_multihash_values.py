"""``hwprof experiment multihash-values``: the quick form end to end, keys, configurations."""

from __future__ import annotations

import json

import numpy as np

from hwprof.cli import main
from hwprof.experiments.multihash_values import configurations, hash_seed
from hwprof.experiments.value_streams import SyntheticValueTrace, trace_keys, value_keys


def test_value_keys_by_hand():
    pc = [0x7F12_3456_789A, 0x401000]
    value = [0xAAAA_BBBB_0000_0001, 0x0000_0000_1234_5678]
    # pc low 32 bits : value low ^ high
    assert value_keys(pc, value).tolist() == [
        (0x3456_789A << 32) | (0x0000_0001 ^ 0xAAAA_BBBB),
        (0x0040_1000 << 32) | 0x1234_5678,
    ]


def test_trace_keys_skip_and_synthetic_is_seeded():
    a = np.concatenate(list(trace_keys(SyntheticValueTrace(5, 3000, chunk=1000), skip=1500)))
    b = np.concatenate(list(trace_keys(SyntheticValueTrace(5, 3000, chunk=700))))
    assert len(a) == 1500 and a.tolist() != b[:1500].tolist()
    c = np.concatenate(list(trace_keys(SyntheticValueTrace(5, 3000, chunk=1000))))
    assert a.tolist() == c[1500:].tolist() and b.tolist() == np.concatenate(
        list(trace_keys(SyntheticValueTrace(5, 3000, chunk=700)))).tolist()


def test_configurations_are_the_papers():
    labels = [c[0] for c in configurations()]
    # Figs. 10-11: 1, 2, 4, 8 tables x C0/C1 x R0/R1 (one table: C has no effect); Fig. 12: 16
    for tables in (2, 4, 8):
        for v in ("C0R0", "C0R1", "C1R0", "C1R1"):
            assert f"{v} {tables}" in labels
    assert {"C1R0 1", "C1R1 1", "C1R0 16"} <= set(labels)
    # seeds of different points never share a table's hash function (16 tables each)
    assert hash_seed(1) - hash_seed(0) >= 16


def test_quick_run(tmp_path, capsys):
    assert main(["experiment", "multihash-values", "--quick", "-o", str(tmp_path)]) == 0
    for ext in ("md", "json"):
        assert (tmp_path / f"multihash-values-quick.{ext}").stat().st_size > 0
    for png in ("streams", "10k"):
        assert (tmp_path / f"multihash-values-quick-{png}.png").stat().st_size > 0
    md = (tmp_path / "multihash-values-quick.md").read_text()
    assert md.index("## The streams") < md.index("error % per configuration")
    assert "| fully associative (paper) |" in md and "| 4-way x 25 sets |" in md
    data = json.loads((tmp_path / "multihash-values-quick.json").read_text())
    r = next(iter(data["presets"]["10k"].values()))
    assert r["intervals"] == 30 and r["distinct"] > r["candidates"] > 0
    for label in ("C1R0 4", "C1R0 4 4-way", "C1R0 4 10-way", "count-min", "frequent-items",
                  "hotlist"):
        assert len(r["errors"][label]["seeds"]) == data["seeds"]
    out = capsys.readouterr().out  # the paper beside ours, values from the record
    beats = "yes" if data["claims"]["10k"]["c1r0_4_beats_bsh"] else "no"
    assert f"| 4 tables C1-R0 below the best single hash (10k) | yes | {beats} |" in out


def test_baseline_sentence_follows_the_error_parts():
    """The sentence on the sketches' error parts says what the parts show, not a fixed text."""
    from hwprof.experiments.multihash_values import _baseline_parts_sentence

    only_over = {"count-min": [5.0, 0.0, 2.0, 0.0], "frequent-items": [3.0, 0.0, 1.0, 0.0],
                 "hotlist": [1.0, 2.0, 3.0, 1.0]}  # fmt: skip
    text = _baseline_parts_sentence(only_over)
    assert "count-min and frequent-items only overestimate" in text and "crowd" not in text
    flooded = dict(only_over, **{"count-min": [900.0, 30.0, 25.0, 0.0]})
    text = _baseline_parts_sentence(flooded)
    assert "frequent-items only overestimate" in text
    assert "count-min also miss true candidates" in text


def test_best_multi_ignores_single_tables_and_picks_the_lowest():
    from hwprof.experiments.multihash_values import best_multi, configurations

    errors = {label: {"total": 5.0 + i} for i, (label, *_) in enumerate(configurations())}
    errors["C1R0 1"]["total"] = 0.0  # a single table is never a multi-hash pick
    errors["C0R1 8"]["total"] = 0.5
    assert best_multi(errors) == "C0R1 8"
