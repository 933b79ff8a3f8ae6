"""``hwprof experiment multihash-profiles``: quick run, trace file format, ``--trace`` errors,
and a paper property on a seeded Zipf stream (no valgrind)."""

import gzip
import json

import numpy as np
import pytest

from hwprof.cli import main
from hwprof.experiments import all_experiments
from hwprof.experiments.multihash_profiles import VALUE_MAP, zipf_stream
from hwprof.golden.multihash import PRESETS, error_rate, perfect_profile, run_fast
from hwprof.traces.keys import trace_keys
from hwprof.traces.lackey import write_trace

#: every experiment that takes --trace files
TAKES_TRACES = sorted(e.name for e in all_experiments().values() if e.takes_traces)


def test_quick_run_writes_files(tmp_path, seed, capsys):
    assert main(["experiment", "multihash-profiles", "--quick", "--seed", str(seed),
                 "-o", str(tmp_path)]) == 0  # fmt: skip
    for ext in ("md", "json", "png"):
        assert (tmp_path / f"multihash-profiles-quick.{ext}").stat().st_size > 0, seed
    data = json.loads((tmp_path / "multihash-profiles-quick.json").read_text())
    # formula (1) and its parts are pinned by hand in test_multihash_paper.py
    parts = ("false_positive", "false_negative", "neutral_positive", "neutral_negative")
    for row in data["summary"]["10k"].values():
        for cell in row:
            assert cell["intervals"] > 0, seed
            assert all(cell[p] >= 0 for p in parts), (seed, cell)
            assert abs(cell["total"] - sum(cell[p] for p in parts)) < 1e-9, (seed, cell)
            assert 0 <= cell["no_candidate_reported"] <= cell["no_candidate"], (seed, cell)
    out = capsys.readouterr().out  # the paper beside ours, values from the record
    c1r0_4 = data["headline"]["c1r0_4"]["10k"]
    assert f"| error %, 4 tables C1R0 (10k) | - | {c1r0_4:.2f} |" in out
    md = (tmp_path / "multihash-profiles-quick.md").read_text()
    assert "Agreement: " + data["headline"]["verdict"] in md


def test_converted_legacy_trace_keys_and_malformed(tmp_path, seed, capsys):
    """A legacy edge trace, converted, gives its ``<source, destination>`` keys."""
    rng = np.random.default_rng(seed)
    pcs, values = rng.integers(0, 1 << 32, 50), rng.integers(0, 1 << 32, 50)
    path, new = tmp_path / "t.trace.gz", tmp_path / "t.trace"
    write_trace(path, pcs, values, comment="test")
    assert main(["trace", "convert", str(path), str(new)]) == 0
    keys = np.concatenate(list(trace_keys(new, "auto", value_map=VALUE_MAP)))
    expected = [(int(p) << 32) | int(v) for p, v in zip(pcs, values, strict=True)]
    assert keys.tolist() == expected, seed
    bad = tmp_path / "bad.trace.gz"
    with gzip.open(bad, "wt") as out:
        out.write("1a 2b\nzz 3\n")
    capsys.readouterr()
    assert main(["trace", "convert", str(bad), str(tmp_path / "bad.trace")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and err.count("\n") == 1
    assert not (tmp_path / "bad.trace").exists()


@pytest.mark.parametrize("name", TAKES_TRACES)
def test_cli_legacy_trace_says_convert(tmp_path, capsys, name):
    """An experiment given a legacy gzip'd text trace says, in one line, to convert it."""
    old = tmp_path / "old.trace.gz"
    write_trace(old, [1, 2, 3], [4, 5, 6])
    out = tmp_path / "out"
    code = main(["experiment", name, "--trace", str(old), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("hwprof: error: ") and err.count("\n") == 1, err
    assert f"hwprof trace convert {old} NEW.trace" in err and not out.exists(), err


def test_cli_malformed_trace_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.trace.gz"
    bad.write_bytes(b"not gzip")
    out = tmp_path / "out"
    code = main(["experiment", "multihash-profiles", "--trace", str(bad), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("hwprof: error: ") and err.count("\n") == 1
    assert str(bad) in err and not out.exists()


def test_cli_trace_for_an_experiment_without_traces_exits_2(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["experiment", "sampler-montecarlo", "--trace", "x.trace.gz", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "does not take --trace" in err and err.count("\n") == 1
    assert not out.exists()


def test_conservative_update_not_worse_and_perfect_is_exact(seed):
    keys = zipf_stream(seed, 50_000)
    p = PRESETS["10k"]
    errors = {}
    for conservative in (False, True):
        profiles = run_fast(keys, tables=4, conservative=conservative, **p)
        errors[conservative] = error_rate(keys, profiles, p["interval_length"], p["threshold"])
    assert errors[True].total <= errors[False].total, (seed, errors)
    perfect = [list(d.items()) for d in perfect_profile(keys, p["interval_length"],
                                                          p["threshold"])]  # fmt: skip
    assert error_rate(keys, perfect, p["interval_length"], p["threshold"]).total == 0, seed


def _summary(**configs):
    """A sweep summary from ``{config: {variant: [total % at 1, 2, 4, 8 tables]}}``; the
    variants not given have 9.0 % everywhere."""
    return {c: {v: [{"total": t} for t in given.get(v, [9.0] * 4)]
                for v in ("C0R0", "C0R1", "C1R0", "C1R1")}
            for c, given in configs.items()}  # fmt: skip


def test_paper_verdict_from_hand_made_summaries():
    """The Fig. 14 verdict on summaries whose answers are worked out here, each part
    yes in one case and no in the other."""
    from hwprof.experiments.multihash_profiles import paper_verdict

    h = paper_verdict(_summary(**{"10k": {"C1R0": [6.0, 2.0, 0.5, 0.75], "C1R1": [2.0] * 4}}))
    assert h["best"] == {"10k": "C1R0 4"}
    assert (h["c1r0_4"], h["c1r0_1"], h["bsh"]) == ({"10k": 0.5}, {"10k": 6.0}, {"10k": 2.0})
    assert h["verdict"] == ("C1R0 4 tables under 1%: yes; best single hash (resetting) worse "
                            "than 4 tables C1R0: yes (10k 4.0x); best is C1R0: yes.")
    # 1m: C1R0 4 at 1 % (not under), the best single hash equal to it (not worse), and
    # C0R1 8 the lowest; rounded to 3 decimals
    h = paper_verdict(_summary(**{"10k": {"C1R0": [6.0, 2.0, 0.5, 0.75], "C1R1": [2.0] * 4},
                             "1m": {"C1R0": [3.0, 2.0, 1.0, 1.5], "C1R1": [1.0004] * 4,
                                    "C0R1": [4.0, 2.0, 1.0, 0.25]}}))  # fmt: skip
    assert h["best"] == {"10k": "C1R0 4", "1m": "C0R1 8"}
    assert h["bsh"] == {"10k": 2.0, "1m": 1.0} and h["c1r0_4"] == {"10k": 0.5, "1m": 1.0}
    assert h["verdict"] == ("C1R0 4 tables under 1%: no; best single hash (resetting) worse "
                            "than 4 tables C1R0: no (10k 4.0x, 1m 1.0x); best is C1R0: no.")


def test_branch_trace_keys_are_its_control_flow_edges(tmp_path, seed):
    """A branch trace (no loads, no edge records) gives ``<pc, target>`` of every control
    transfer but the returns, in order, 32-bit fields; a load trace still its loads."""
    from hwprof.traces.common import BRANCH_KINDS, COND_TAKEN, LOAD, RETURN
    from tests.trace_records import random_records, write_records

    rng = np.random.default_rng(seed)
    records = random_records(rng, 400, kinds=BRANCH_KINDS)
    path = write_records(tmp_path / "b.trace", records)
    keep = records["kind"] != RETURN
    low = np.uint64(0xFFFFFFFF)
    want = ((records["pc"][keep] & low) << np.uint64(32)) | (records["addr"][keep] & low)
    got = np.concatenate(list(trace_keys(path, "auto", value_map=VALUE_MAP)))
    assert got.tolist() == want.tolist(), seed
    mixed = random_records(rng, 400, kinds=(LOAD, COND_TAKEN))
    path = write_records(tmp_path / "m.trace", mixed)
    load = mixed["kind"] == LOAD
    want = ((mixed["pc"][load] & low) << np.uint64(32)) | (mixed["value"][load] & low)
    got = np.concatenate(list(trace_keys(path, "auto", value_map=VALUE_MAP)))
    assert got.tolist() == want.tolist(), seed
