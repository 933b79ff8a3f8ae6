"""bench/bench_run.py: its JSON record and the results page made from it."""

import json

from bench.bench_run import append_record, table


def _run(jobs, wall, condition="quiet"):
    return {"kind": "command", "command": "hwprof mutate brr -n 4", "jobs": jobs,
            "condition": condition, "wall_s": wall, "exit": 0, "cpu_s": 2.0 * wall}


def test_record_appends_and_table_pairs_runs_of_the_same_conditions(tmp_path):
    record = tmp_path / "r.json"
    trip = {"kind": "round_trip", "workers": 1, "condition": "quiet", "rounds": 3,
            "median_ms": 12.0, "min_ms": 10.0, "max_ms": 20.0, "batch_units": 8,
            "batch_ms_per_unit": 3.0}
    for entry in (trip, _run(1, 90.0), _run(2, 30.0), _run(1, 110.0), _run(2, 50.0),
                  _run(1, 99.0, "busy")):
        append_record(record, entry)
    assert len(json.loads(record.read_text())) == 6
    page = table(record)
    assert "| 1 worker process | 12.0 ms (10.0-20.0) | 3 | 8 | 3.0 ms | quiet |" in page
    # medians 100 s / 40 s; the "busy" run has no 2-worker partner and gives no ratio
    assert "| `hwprof mutate brr -n 4` | quiet | 2.50x |" in page
    assert "| busy |" not in page.split("Speed-up")[1].split("## Predicting")[0]
    assert "`c` is the round trip above, 12 ms (median)" in page
