"""Area records (DESIGN.md "Area flow") and the ``hwprof report`` table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .catalog import TOPS, Top
from .synth import synthesize, to_verilog, write_atomically

__all__ = ["area_record", "format_table", "run_report", "budget_for"]

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


def format_table(records: list[dict]) -> str:
    """A Markdown table: ours beside the paper's budget."""
    lines = [
        "| block | params | flops | gates | transistors | depth | memory bits "
        "| paper budget | within |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in records:
        top = TOPS[r["block"]]
        budget = r.get("budget")
        if budget:
            parts = [f"{k} <= {budget[k]}" for k in _COMPARED if budget.get(k) is not None]
            budget_text = f"{', '.join(parts)} ({budget['source']})"
            within = "yes" if r["within_budget"] else "**no**"
        else:
            budget_text, within = "none stated", "-"
        lines.append(
            f"| {r['block']} | {_params_text(r, top)} | {r['flops']} | {r['gates']} "
            f"| {r['transistors']} | {r['depth']} | {r['memory_bits']} | {budget_text} "
            f"| {within} |"
        )
    return "\n".join(lines)


def run_report(output: Path) -> list[dict]:
    """Verilog for every top and variant, area records, build/area.{json,md}."""
    jobs = [(top, variant) for top in TOPS.values() for variant in top.variants]
    records = []
    for index, (top, variant) in enumerate(jobs, 1):
        params = top.resolve(variant)
        print(f"[{index}/{len(jobs)}] {top.name} {json.dumps(variant) if variant else ''}",
              file=sys.stderr, flush=True)  # fmt: skip
        component = top.construct(variant)
        suffix = "-".join(f"{k}_{v}" for k, v in sorted(variant.items()))
        name = f"{top.name}{'-' + suffix if suffix else ''}"
        write_atomically(output / "verilog" / f"{name}.v", to_verilog(component, top.name))
        records.append(area_record(top, params, component))
    table = format_table(records)
    write_atomically(output / "area.json", json.dumps(records, indent=2) + "\n")
    write_atomically(output / "area.md", "# Area against the papers' budgets\n\n" + table + "\n")
    print(table)
    return records
