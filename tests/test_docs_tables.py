"""The generated tables of docs/: in sync with docs/records/, and the generator fills,
detects stale regions and refuses unknown kinds."""

import hashlib
import json
import re
from pathlib import Path

import pytest

from hwprof.catalog import TOPS
from hwprof.cli import main
from hwprof.docs_tables import DocsError, fill_page, stale_mutation_records, stale_regions

ROOT = Path(__file__).resolve().parent.parent

PAGE = """# A block

Some text.

<!-- table: mutation lfsr -->
old text
<!-- end table -->

More text.
"""


def _mutation(killed):
    return {"block": "lfsr", "params": TOPS["lfsr"].resolve({}), "n": 100, "seed": 1,
            "bench": "cocotb", "killed": killed, "equivalent": 100 - killed - 2,
            "equivalent_by_hand": 2, "by_hand_mutants": [7, 52], "survived": 0}  # fmt: skip


@pytest.fixture
def docs(tmp_path):
    (tmp_path / "docs" / "records").mkdir(parents=True)
    records = [_mutation(95), {**_mutation(90), "block": "brr"}]
    (tmp_path / "docs" / "records" / "mutation.json").write_text(json.dumps(records))
    (tmp_path / "docs" / "page.md").write_text(PAGE)
    return tmp_path / "docs"


def test_docs_pages_are_in_sync_with_their_records():
    assert stale_regions(ROOT / "docs") == []  # else: hwprof report --docs


def test_fill_writes_the_records_rows_and_keeps_the_rest(docs):
    text = fill_page(PAGE, docs / "records")
    assert "| lfsr | 100 (seed 1) | cocotb | 95 | 3 | 2 (7, 52) | 0 | not recorded |" in text
    assert "| brr |" not in text  # only the blocks the region names
    assert "old text" not in text
    assert text.startswith("# A block\n\nSome text.\n\n<!-- table: mutation lfsr -->\n")
    assert text.endswith("<!-- end table -->\n\nMore text.\n")
    assert "`hwprof mutate TOP -n 100 --json`" in text  # the command that makes the records
    assert fill_page(text, docs / "records") == text
    reasoned = {**_mutation(95), "by_hand_mutants": [7, {"index": 52, "reason": "a dead bit"}]}
    (docs / "records" / "mutation.json").write_text(json.dumps([reasoned]))
    assert "| 95 | 3 | 2 (7, 52) | 0 | not recorded |" in fill_page(PAGE, docs / "records")


def test_a_changed_record_makes_the_region_stale(docs):
    assert stale_regions(docs) == ["page.md: mutation lfsr"]
    assert main(["report", "--docs", str(docs)]) == 0
    assert stale_regions(docs) == []
    (docs / "records" / "mutation.json").write_text(json.dumps([_mutation(94)]))
    assert stale_regions(docs) == ["page.md: mutation lfsr"]


def test_bad_regions_are_one_line_errors(docs, capsys):
    with pytest.raises(DocsError, match="unknown table kind 'speed'"):
        fill_page("<!-- table: speed lfsr -->\n<!-- end table -->", docs / "records")
    with pytest.raises(DocsError, match="unknown block 'nosuch'"):
        fill_page("<!-- table: mutation nosuch -->\n<!-- end table -->", docs / "records")
    (docs / "page.md").write_text("<!-- table: area lfsr -->\n<!-- end table -->\n")
    assert main(["report", "--docs", str(docs)]) == 2
    assert "area.json is missing" in capsys.readouterr().err
    assert (docs / "page.md").read_text() == "<!-- table: area lfsr -->\n<!-- end table -->\n"


def test_mutate_json_is_a_record_the_table_reads(docs, monkeypatch, capsys):
    import hwprof.verify.mutate as mutate

    def fake(top, n, seed, **options):  # the tally of a run, without running one
        report = mutate.MutationReport(top.name, top.resolve({}), seed, seconds=12.34,
                                       verilog_sha256="ab" * 32)  # fmt: skip
        statuses = ["killed"] * 95 + ["equivalent"] * 3 + ["survived"] * 2
        report.mutants = [mutate.Mutant(i + 1, "", "", s) for i, s in enumerate(statuses)]
        return report

    monkeypatch.setattr(mutate, "mutate_top", fake)
    argv = ["mutate", "lfsr", "-n", "100", "--json", "--records", str(docs / "run.json")]
    assert main(argv) == 1  # survivors: status 1
    record = json.loads(capsys.readouterr().out)
    assert (record["killed"], record["equivalent"], record["survived"]) == (95, 3, 2)
    assert record["survivors"] == [99, 100] and record["seconds"] == 12.3
    assert record["verilog_sha256"] == "ab" * 32
    assert json.loads((docs / "run.json").read_text())["verilog_sha256"] == "ab" * 32
    (docs / "records" / "mutation.json").write_text(json.dumps([record]))
    assert "| lfsr | 100 (seed 1) | cocotb | 95 | 3 | 0 | 2 | `abababababab` |" in fill_page(
        PAGE, docs / "records")  # fmt: skip


def test_every_mutation_record_has_a_verilog_hash_field():
    records = json.loads((ROOT / "docs" / "records" / "mutation.json").read_text())
    for record in records:
        sha = record["verilog_sha256"]  # null only for a record made before the field
        assert sha is None or re.fullmatch(r"[0-9a-f]{64}", sha), record["block"]


def test_stale_mutation_records_names_changed_and_unhashed_ones(tmp_path, capsys):
    # today's lfsr Verilog hashed here from the file `hwprof generate` writes
    assert main(["generate", "lfsr", "-o", str(tmp_path / "v")]) == 0
    today = hashlib.sha256((tmp_path / "v" / "lfsr.v").read_bytes()).hexdigest()
    records = [{**_mutation(95), "verilog_sha256": today},
               {**_mutation(95), "verilog_sha256": "0" * 64},  # an older netlist's run
               {**_mutation(95), "block": "brr", "verilog_sha256": None}]  # fmt: skip
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "mutation.json").write_text(json.dumps(records))
    stale = stale_mutation_records(tmp_path / "records")
    assert len(stale) == 2
    assert stale[0].startswith("lfsr: its Verilog changed since the run (000000000000, today ")
    assert stale[1].startswith("brr: no verilog_sha256")
    assert stale_mutation_records(tmp_path / "records", ["brr"]) == [stale[1]]
    (tmp_path / "page.md").write_text("text\n")
    capsys.readouterr()
    assert main(["report", "--docs", str(tmp_path)]) == 0  # a warning, not a failure
    assert "no verilog_sha256 in the records of brr " in capsys.readouterr().err


@pytest.mark.soak
def test_mutation_records_are_of_todays_verilog():
    # every top elaborated (minutes): a block changed after its run is a record to redo
    assert stale_mutation_records(ROOT / "docs" / "records") == []


RESULTS_PAGE = "# A block\n\n<!-- table: results multihash-values -->\n<!-- end table -->\n"


def _claims(c1r0_4, common_error, under, beats):
    """One preset's ``claims`` of a multihash-values record, made up by hand."""
    return {"programs": list(c1r0_4), "c1r0_4": c1r0_4,
            "c1r0_4_mean": sum(c1r0_4.values()) / len(c1r0_4), "under_1pct": under,
            "c1r0_4_beats_bsh": beats, "common_best": "C1R1 2",
            "common_best_error": common_error}  # fmt: skip


def test_results_region_is_the_records_headline_and_goes_stale(docs):
    (docs / "results").mkdir()
    record = {"claims": {
        "10k": _claims({"xz": 0.25, "perl": 0.05}, {"xz": 0.25, "perl": 0.05}, True, True),
        "1m": _claims({"bzip2": 2.5, "sort": 0.1}, {"bzip2": 0.5, "sort": 0.2}, False, False),
    }}  # fmt: skip
    (docs / "results" / "multihash-values.json").write_text(json.dumps(record))
    (docs / "page.md").write_text(RESULTS_PAGE)
    assert stale_regions(docs) == ["page.md: results multihash-values"]
    assert main(["report", "--docs", str(docs)]) == 0
    text = (docs / "page.md").read_text()
    # means, highest program and the common configuration's mean worked out by hand
    assert "| 10k | xz, perl | 0.150 | xz 0.25 | yes | yes | C1R1 2, 0.150 |" in text
    assert "| 1m | bzip2, sort | 1.300 | bzip2 2.50 | no | no | C1R1 2, 0.350 |" in text
    assert "`hwprof experiment multihash-values`" in text
    assert "[results/multihash-values.md](results/multihash-values.md)" in text
    assert stale_regions(docs) == []
    record["claims"]["1m"]["c1r0_4"]["bzip2"] = 2.4  # a rerun moved one figure
    (docs / "results" / "multihash-values.json").write_text(json.dumps(record))
    assert stale_regions(docs) == ["page.md: results multihash-values"]


def test_bad_results_regions_are_errors(docs):
    with pytest.raises(DocsError, match="results table names one of multihash-values"):
        fill_page("<!-- table: results nosuch -->\n<!-- end table -->", docs / "records")
    with pytest.raises(DocsError, match="not 'multihash-values multihash-values'"):
        fill_page("<!-- table: results multihash-values multihash-values -->\n"
                  "<!-- end table -->", docs / "records")  # fmt: skip
    with pytest.raises(DocsError, match="multihash-values.json is missing"):
        fill_page(RESULTS_PAGE, docs / "records")


def test_multihash_headline_agrees_with_the_results_page():
    """The block page's headline and the results page (another renderer of the same JSON)
    give the same means: 4 tables C1-R0 per preset and the one configuration for all."""
    block = (ROOT / "docs" / "multihash.md").read_text()
    results = (ROOT / "docs" / "results" / "multihash-values.md").read_text()
    rows = re.findall(r"^\| (\w+) \| [\w, ]+ \| ([\d.]+) \| \w+ [\d.]+ \| \w+ \| \w+ "
                      r"\| (C\dR\d \d+), ([\d.]+) \|$", block, re.M)  # fmt: skip
    assert [row[0] for row in rows] == ["10k", "1m"]
    for preset, mean, common, common_mean in rows:
        assert f"**{preset}.** 4 tables C1-R0: mean {mean} %" in results
        assert (f"**{preset}, one configuration for all programs: {common}** "
                f"(mean {common_mean} %") in results  # fmt: skip


def _page_with(docs, stem, record):
    (docs / "results").mkdir(exist_ok=True)
    (docs / "results" / f"{stem}.json").write_text(json.dumps(record))
    return fill_page(f"<!-- table: results {stem} -->\n<!-- end table -->\n", docs / "records")


def test_sampler_montecarlo_region_reads_the_crossings(docs):
    cross = {"R": 12057.9, "P": 999.0, "CR": None, "CR-gaps": 17112.7, "H[R]": 11692.6,
             "H[P]": 6562.6, "H[CR]": 6540.1, "H[CR]-gaps": 12812.6}  # fmt: skip
    record = {"lengths": [1000, 2000, 20000], "substreams": [2, 16], "curves": {
        "R": [], "P": [], "CR": [], "CR-gaps": []},
        "crossing_4pct_by_substreams": {"2": cross, "16": {**cross, "H[P]": 1500.4}},
        "paper_crossing_4pct": {"R": 12000, "H[P]": 4600}}  # fmt: skip
    text = _page_with(docs, "sampler-montecarlo", record)
    assert "| sampler | N at 4% mean error, n = 2 / 16 | paper |" in text
    assert "| R | 12,058 (no hash) | about 12,000 |" in text
    assert "| P | <= 1,000 (no hash) |  |" in text  # crossed before the first length
    assert "| CR (ratio estimator) | > 20,000 (no hash) |  |" in text  # never crossed
    assert "| H[P] | 6,563 / 1,500 | about 4,600 |" in text


def test_selective_dispatch_region_reads_the_rows(docs):
    def row(profiling, predictor, fetched, cycles, accuracy, skips):
        return {"profiling": profiling, "predictor": predictor, "pi_fetched": fetched,
                "pi_dispatched": profiling * 1.05, "cycles": cycles, "instructions": 200000,
                "profile_accuracy": accuracy, "skip_accuracy": skips}  # fmt: skip

    record = {"rows": [row(0.0, False, 1.0, 60000, None, None),
                       row(0.0, True, 0.25, 50000, None, 1.0),
                       row(0.5, False, 1.0, 60000, 97.5, None),
                       row(0.5, True, 0.6, 55000, 97.5, 0.98)]}  # fmt: skip
    text = _page_with(docs, "selective-dispatch", record)
    # 1 - 0.25 / 1.0 = 75 % saved; 60000 / 200000 = 0.300 cycles per instruction
    assert "| 0% | 1.000 | 0.250 | 75% | 0.000 | 0.300 | 0.250 | - | 100.0% |" in text
    assert "| 50% | 1.000 | 0.600 | 40% | 0.525 | 0.300 | 0.275 | 97.50% | 98.0% |" in text
