"""Area records (DESIGN.md "Area flow") and the ``hwprof report`` table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .catalog import TOPS, Top
from .fpga_report import fpga_columns, load_fpga_records
from .synth import synthesize, to_verilog, write_atomically

__all__ = ["area_record", "format_table", "format_row", "run_report", "budget_for"]

_COMPARED = ("flops", "gates", "memory_bits")


def budget_for(top: Top, params: dict) -> dict | None:
    """The paper's budget for ``top`` at ``params`` (None where the paper gives none)."""
    return top.budget(params) if callable(top.budget) else top.budget


def area_record(top: Top, params: dict, component, keep_dir: Path | None = None) -> dict:
    """Synthesize ``component`` and return its JSON record with the paper budget."""
    area = synthesize(to_verilog(component, top.name), top.name, keep_dir=keep_dir)
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


_HEADER = [
    "| block | params | flops | gates | transistors | depth | memory bits "
    "| paper budget | within | ECP5 LUT4 | ECP5 FF | DP16KD | Fmax (MHz) |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |",
]


def _budget_text(budget: dict | None) -> str:
    if not budget:
        return "none stated"
    parts = [f"{k} <= {budget[k]}" for k in _COMPARED if budget.get(k) is not None]
    return f"{', '.join(parts)} ({budget['source']})"


def format_row(record: dict, fpga: dict | None = None) -> str:
    """One table row: an area record beside its paper budget.

    ``fpga``: :func:`~hwprof.fpga_report.load_fpga_records` of ``build/fpga.json``
    (the last four columns, blank where place and route has not run).
    """
    r = record
    top = TOPS[r["block"]]
    within = ("yes" if r["within_budget"] else "**no**") if r.get("budget") else "-"
    return (
        f"| {r['block']} | {_params_text(r, top)} | {r['flops']} | {r['gates']} "
        f"| {r['transistors']} | {r['depth']} | {r['memory_bits']} "
        f"| {_budget_text(r.get('budget'))} | {within} |{fpga_columns(fpga or {}, r)}|"
    )


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


def run_report(output: Path, include_slow: bool = False) -> list[dict]:
    """Verilog for every top and variant, area records, build/area.{json,md}.

    ``include_slow``: also synthesize the tops' ``slow_variants`` (tens of minutes
    of yosys); otherwise their rows name the command that measures them. The
    FPGA columns come from ``output/fpga.json`` where ``hwprof report --fpga``
    has written it.
    """
    jobs = []  # (top, variant, synthesize?) in table order
    for top in TOPS.values():
        jobs += [(top, variant, True) for variant in top.variants]
        jobs += [(top, variant, include_slow) for variant in top.slow_variants]
    total = sum(run for _, _, run in jobs)
    fpga = load_fpga_records(output / "fpga.json")  # `hwprof report --fpga`, if it has run
    records, rows = [], list(_HEADER)
    for top, variant, run in jobs:
        if not run:
            rows.append(slow_row(top, variant))
            continue
        params = top.resolve(variant)
        print(f"[{len(records) + 1}/{total}] {top.name} "
              f"{json.dumps(variant) if variant else ''}", file=sys.stderr, flush=True)  # fmt: skip
        component = top.construct(variant)
        suffix = "-".join(f"{k}_{v}" for k, v in sorted(variant.items()))
        name = f"{top.name}{'-' + suffix if suffix else ''}"
        write_atomically(output / "verilog" / f"{name}.v", to_verilog(component, top.name))
        records.append(area_record(top, params, component))
        rows.append(format_row(records[-1], fpga))
    table = "\n".join(rows)
    write_atomically(output / "area.json", json.dumps(records, indent=2) + "\n")
    write_atomically(output / "area.md", "# Area against the papers' budgets\n\n" + table + "\n")
    print(table)
    return records
