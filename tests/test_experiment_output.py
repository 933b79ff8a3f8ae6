"""What ``hwprof experiment NAME`` prints: the paper beside ours, the files it wrote, and
with ``--json`` the run's summary as JSON."""

import json

from hwprof.cli import main


def test_table_rows_come_from_the_record_and_json_parses(tmp_path, capsys):
    assert main(["experiment", "selective-dispatch", "--quick", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    record = json.loads((tmp_path / "selective-dispatch-quick.json").read_text())
    by = {(r["profiling"], r["predictor"]): r for r in record["rows"]}
    with_predictor, without = by[(0.25, True)], by[(0.25, False)]
    assert ("| PIs fetched / on path, 25% profiling, with predictor | - "
            f"| {with_predictor['pi_fetched']:.3f} |") in out  # fmt: skip
    assert ("| PIs fetched / on path, 25% profiling, without predictor "
            f"| near their maximum (Fig. 6) | {without['pi_fetched']:.3f} |") in out  # fmt: skip
    assert ("| profile accuracy %, 25% profiling, with predictor | - "
            f"| {with_predictor['profile_accuracy']:.2f} |") in out  # fmt: skip
    written = [line.strip() for line in out[out.index("Wrote:"):].splitlines()[1:]]
    stem = tmp_path / "selective-dispatch-quick"
    assert written == [f"{stem}.{ext}" for ext in ("json", "md", "png")]
    assert "{" not in out  # no raw JSON

    assert main(["experiment", "selective-dispatch", "--quick", "-o", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    record = json.loads((tmp_path / "selective-dispatch-quick.json").read_text())
    by = {(r["profiling"], r["predictor"]): r for r in record["rows"]}
    assert summary["pi_dispatched_25pct"] == by[(0.25, True)]["pi_dispatched"]
    assert summary["pi_fetched_25pct"] == {"dispatch_only": by[(0.25, False)]["pi_fetched"],
                                           "with_predictor": by[(0.25, True)]["pi_fetched"]}


def test_rows_follow_the_record():
    """A hand-made record: the rows show its values, rounded, and "not reached" for None."""
    from hwprof.experiments import all_experiments, headline_table

    experiment = all_experiments()["sampler-montecarlo"]
    record = {"substreams": [2], "crossing_4pct_by_substreams": {"2": {"R": 12345.4,
              "H[P]": None}}, "paper_crossing_4pct": {"R": 12000, "H[P]": 4600},
              "paper_classes": [["R"]],
              "classes_match_paper_by_substreams": {"2": False}}  # fmt: skip
    table = headline_table(experiment, record)
    assert "| N at 4% mean error, R | 12,000 | 12,345 |" in table
    assert "| N at 4% mean error, H[P], n = 2 | 4,600 | not reached |" in table
    assert "| equivalence classes, n = 2 | {R} | different |" in table
