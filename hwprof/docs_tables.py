"""Generated tables of docs/: marked regions of the pages, filled from JSON records.

A page marks a region with two HTML comments::

    <!-- table: KIND [BLOCK ..] -->
    (generated: do not edit)
    <!-- end table -->

``KIND`` names the records (``DOCS/records/KIND.json``) and the command that
writes them:

* ``area``: ``hwprof report`` writes ``build/area.json`` (every top and variant);
* ``fpga``: ``hwprof report --fpga`` writes ``build/fpga.json`` (default parameters);
* ``mutation``: ``hwprof mutate TOP -n 100 --json`` prints one record per top; a
  survivor shown equivalent by hand moves to ``equivalent_by_hand`` and
  ``by_hand_mutants`` (each an index, or ``{"index": i, "reason": why}`` with the
  one-line argument from the mutated netlist). Its ``verilog_sha256`` is the
  sha256 of the Verilog the mutants were made from (null: not recorded; the table
  shows its first 12 digits); :func:`stale_mutation_records` names the records
  whose top's Verilog is no longer that;
* ``results``: the headline of an experiment's results, read from
  ``DOCS/results/STEM.json`` (``hwprof experiment STEM`` writes it, and its page
  ``DOCS/results/STEM.md``); the region names the one ``STEM``, and the stems with
  a table are the experiments with a ``docs_table`` (:class:`hwprof.experiments.Experiment`).

The ``BLOCK`` names select records (all of them without names), in the records'
order. ``hwprof report --docs`` copies nothing: it fills every region of every
page from the records in ``DOCS/records/``; :func:`stale_regions` lists the
regions that differ from what the records give (a test keeps the pages in sync).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .catalog import TOPS
from .fpga_report import format_fpga_table
from .report import format_area_table
from .synth import write_atomically

__all__ = ["KINDS", "fill_page", "fill_docs", "stale_regions", "stale_mutation_records",
           "DocsError"]  # fmt: skip

_REGION = re.compile(r"(<!-- table: ([a-z]+)([^>]*?) -->\n)(.*?)(<!-- end table -->)", re.S)

#: kind -> (command that makes the records, file it writes)
KINDS = {
    "area": ("hwprof report", "build/area.json"),
    "fpga": ("hwprof report --fpga", "build/fpga.json"),
    "mutation": ("hwprof mutate TOP -n 100 --json", "one record per top"),
    "results": ("hwprof experiment STEM", "docs/results/STEM.json"),
}


class DocsError(ValueError):
    """A region names an unknown kind or block, or its records are missing."""


def _area_table(records: list[dict]) -> list[str]:
    return format_area_table(records).splitlines()


def _fpga_table(records: list[dict]) -> list[str]:
    return format_fpga_table(records).splitlines()


def _sha(record: dict) -> str:
    """The head of the mutated Verilog's sha256 (``hwprof generate TOP | sha256sum``)."""
    sha = record.get("verilog_sha256")
    return f"`{sha[:12]}`" if sha else "not recorded"


def _mutation_table(records: list[dict]) -> list[str]:
    lines = ["| block | mutants | bench | killed | equivalent (proved) | equivalent (by hand) "
             "| survived | Verilog (sha256) |",
             "| --- | ---: | --- | ---: | ---: | --- | ---: | --- |"]  # fmt: skip
    for r in records:
        hand = str(r["equivalent_by_hand"])
        if r.get("by_hand_mutants"):  # indices, or {"index": i, "reason": why} entries
            indices = [m["index"] if isinstance(m, dict) else m for m in r["by_hand_mutants"]]
            hand += f" ({', '.join(map(str, indices))})"
        lines.append(f"| {r['block']} | {r['n']} (seed {r['seed']}) | {r['bench']} "
                     f"| {r['killed']} | {r['equivalent']} | {hand} | {r['survived']} "
                     f"| {_sha(r)} |")  # fmt: skip
    return lines


_TABLES = {"area": _area_table, "fpga": _fpga_table, "mutation": _mutation_table}


def _results_tables() -> dict:
    """Experiment name -> its block-page table (:attr:`Experiment.docs_table`)."""
    from .experiments import all_experiments

    return {name: e.docs_table for name, e in all_experiments().items() if e.docs_table}


def _results_text(stems: list[str], records_dir: Path) -> str:
    tables = _results_tables()
    if len(stems) != 1 or stems[0] not in tables:
        raise DocsError(f"a results table names one of {', '.join(sorted(tables))}, not "
                        f"{' '.join(stems) or 'nothing'!r}")  # fmt: skip
    stem = stems[0]
    path = records_dir.parent / "results" / f"{stem}.json"
    if not path.exists():
        raise DocsError(f"no record for the results table {stem}: {path} is missing")
    lines = tables[stem](json.loads(path.read_text()))
    source = (f"Record: `hwprof experiment {stem}`, kept in `results/{stem}.json` (all its "
              f"figures: [results/{stem}.md](results/{stem}.md)); this table: "
              "`hwprof report --docs`.")  # fmt: skip
    return "\n".join([*lines, "", source]) + "\n"


def _region_text(kind: str, blocks: list[str], records_dir: Path) -> str:
    if kind not in KINDS:
        raise DocsError(f"unknown table kind {kind!r} (known: {', '.join(KINDS)})")
    if kind == "results":
        return _results_text(blocks, records_dir)
    for block in blocks:
        if block not in TOPS:
            raise DocsError(f"unknown block {block!r} in a {kind} table")
    path = records_dir / f"{kind}.json"
    if not path.exists():
        raise DocsError(f"no records for the {kind} tables: {path} is missing")
    records = json.loads(path.read_text())
    chosen = [r for r in records if not blocks or r["block"] in blocks]
    if not chosen:
        raise DocsError(f"{path} has no record of {' '.join(blocks)}")
    command, written = KINDS[kind]
    source = (f"Records: `{command}` ({written}), kept in `{path.parent.name}/{path.name}`; "
              "this table: `hwprof report --docs`.")  # fmt: skip
    return "\n".join([*_TABLES[kind](chosen), "", source]) + "\n"


def fill_page(text: str, records_dir: Path) -> str:
    """``text`` with every marked region filled from the records in ``records_dir``."""

    def fill(match: re.Match) -> str:
        blocks = match.group(3).split()
        return match.group(1) + _region_text(match.group(2), blocks, records_dir) + match.group(5)

    return _REGION.sub(fill, text)


def _pages(docs: Path) -> list[Path]:
    return sorted([*Path(docs).glob("*.md"), *(Path(docs).parent / "README.md",)])


def fill_docs(docs: Path) -> list[Path]:
    """Fill every region of ``docs/*.md`` (and README.md beside ``docs``): the pages changed.

    Every page is filled before any is written, so a bad region leaves all of them as
    they were.
    """
    pages = [page for page in _pages(docs) if page.exists()]
    texts = {page: page.read_text() for page in pages}
    filled = {page: fill_page(text, Path(docs) / "records") for page, text in texts.items()}
    changed = [page for page in pages if filled[page] != texts[page]]
    for page in changed:
        write_atomically(page, filled[page])
    return changed


def stale_regions(docs: Path) -> list[str]:
    """``page: kind blocks`` of every region whose text is not what its records give."""
    stale = []
    for page in _pages(docs):
        if not page.exists():
            continue
        for match in _REGION.finditer(page.read_text()):
            expected = _region_text(match.group(2), match.group(3).split(), Path(docs) / "records")
            if match.group(4) != expected:
                stale.append(f"{page.name}: {match.group(2)}{match.group(3)}")
    return stale


def stale_mutation_records(records_dir: Path, blocks: list[str] | None = None) -> list[str]:
    """``block: why`` of every record of ``records_dir/mutation.json`` not made from the
    Verilog its top generates today (at the record's parameters).

    ``blocks``: check only these records (all without). Each checked record's top is
    elaborated once (seconds for a small top, minutes for the widest), so this is a
    separate check, not part of :func:`stale_regions`.
    """
    from .synth import to_verilog
    from .verify.mutate import verilog_sha256

    stale = []
    for record in json.loads((Path(records_dir) / "mutation.json").read_text()):
        name = record["block"]
        if blocks is not None and name not in blocks:
            continue
        recorded = record.get("verilog_sha256")
        if not recorded:
            stale.append(f"{name}: no verilog_sha256 (made before the records kept one)")
            continue
        top = TOPS[name]
        today = verilog_sha256(to_verilog(top.construct(record["params"]), name))
        if today != recorded:
            why = f"its Verilog changed since the run ({recorded[:12]}, today {today[:12]})"
            stale.append(f"{name}: {why}: rerun hwprof mutate {name} -n 100 --json")
    return stale
