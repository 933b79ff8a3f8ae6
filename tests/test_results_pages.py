"""The committed results pages are generated: each equals its experiment's renderer applied
to the committed JSON beside it, and the prose an experiment stores in its JSON equals the
prose its generator makes from that JSON (else: rerun or re-render the experiment)."""

import difflib
import importlib
import json
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"

#: (module of hwprof.experiments, page stem, renderer, whether it takes the stem)
PAGES = [
    ("brr_accuracy", "brr-accuracy", "_summary", True),
    ("brr_resonance", "brr-resonance", "_markdown", True),
    ("burrows_hotlist", "burrows-hotlist", "markdown", True),
    ("dispatch_programs", "selective-dispatch-programs", "_markdown", True),
    ("key_merges", "key-merges", "markdown", False),
    ("multihash_conditions", "multihash-conditions", "markdown", True),
    ("multihash_profiles", "multihash-profiles", "_markdown", False),
    ("multihash_values", "multihash-values", "_markdown", True),
    ("sampler_montecarlo", "sampler-montecarlo", "_summary", True),
    ("selective_dispatch", "selective-dispatch", "_summary", True),
    ("stratified_conditions", "stratified-conditions", "markdown", True),
    ("stratified_long", "stratified-long", "markdown", True),
    ("stratified_stay", "stratified-stay", "markdown", True),
    ("stratified_values", "stratified-values", "_summary", True),
    ("system_dispatch", "system-dispatch", "markdown", False),
    ("system_overhead", "system-overhead", "markdown", False),
    ("system_workload", "system-workload", "markdown", False),
]

#: prose stored in a record at run time: (module, page stem, record key, its generator)
STORED = [
    ("dispatch_programs", "selective-dispatch-programs", "reading", "_reading"),
    ("dispatch_programs", "selective-dispatch-programs", "beside", "_beside"),
    ("multihash_values", "multihash-values", "comparison", "_comparison"),
]


def render(module: str, stem: str, renderer: str, takes_stem: bool, record: dict) -> str:
    fn = getattr(importlib.import_module(f"hwprof.experiments.{module}"), renderer)
    return fn(record, stem) if takes_stem else fn(record)


def record_of(stem: str) -> dict:
    return json.loads((RESULTS / f"{stem}.json").read_text())


@pytest.mark.parametrize("module, stem, renderer, takes_stem", PAGES, ids=[p[1] for p in PAGES])
def test_page_is_its_json_rendered(module, stem, renderer, takes_stem):
    page = (RESULTS / f"{stem}.md").read_text()
    try:
        made = render(module, stem, renderer, takes_stem, record_of(stem))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        pytest.fail(f"{module}.{renderer} cannot render docs/results/{stem}.json "
                    f"({type(exc).__name__}: {exc}): the record is older than its renderer; "
                    "rerun the experiment (or re-render its page)")  # fmt: skip
    diff = "".join(difflib.unified_diff(page.splitlines(True), made.splitlines(True),
                                        "committed", "rendered", n=0))  # fmt: skip
    assert made == page, f"docs/results/{stem}.md is not its JSON rendered:\n{diff[:3000]}"


@pytest.mark.parametrize("module, stem, key, generator", STORED, ids=[s[2] for s in STORED])
def test_stored_prose_is_made_from_the_record(module, stem, key, generator):
    record = record_of(stem)
    made = getattr(importlib.import_module(f"hwprof.experiments.{module}"), generator)(record)
    assert made == record[key], f"{stem}.json: '{key}' is not what {generator} makes of it"


def test_every_results_page_with_json_is_checked():
    """A results page with a JSON beside it is in PAGES, or names the bench that makes it."""
    checked = {p[1] for p in PAGES}
    made_by_bench = {"system-profiles"}  # bench/bench_system_profiles.py --markdown-only
    for json_path in sorted(RESULTS.glob("*.json")):
        stem = json_path.stem
        if (RESULTS / f"{stem}.md").exists():
            assert stem in checked | made_by_bench, f"{stem}.md: add its renderer to PAGES"


def test_a_changed_number_is_caught():
    """The check fails when the JSON and the page disagree: one number of a record changed."""
    module, stem, renderer, takes_stem = PAGES[[p[1] for p in PAGES].index("stratified-long")]
    record = record_of(stem)
    record["cells"][0]["points"]["R_256"]["stay"][0] += 1
    page = (RESULTS / f"{stem}.md").read_text()
    assert render(module, stem, renderer, takes_stem, record) != page
