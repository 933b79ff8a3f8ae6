"""FPGA records (DESIGN.md "FPGA flow"), ``hwprof fpga`` and ``hwprof report --fpga``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .catalog import TOPS, Top, slow_last
from .synth import write_atomically
from .synth.fpga import DEVICES, FpgaError, place_and_route

__all__ = ["fpga_record", "format_fpga_table", "run_fpga_report", "load_fpga_records",
           "fpga_columns", "FPGA_KEYS"]  # fmt: skip

#: Fields of every ``--json`` record.
FPGA_KEYS = ("block", "luts", "ffs", "bram", "dist_ram", "fmax_mhz", "critical_path",
             "device", "params")  # fmt: skip


def fpga_record(top: Top, params: dict, component, device: str = "ecp5-85k",
                keep_dir: Path | None = None, timeout: float | None = None) -> dict:  # fmt: skip
    """Place and route ``component`` (wrapped) on ``device``; its JSON record."""
    result = place_and_route(component, top.name, device=device, keep_dir=keep_dir,
                             timeout=timeout)  # fmt: skip
    record = {"block": top.name}
    record.update({k: result[k] for k in FPGA_KEYS if k in result})
    record["params"] = params
    record["wrapper_flops"] = result["wrapper_flops"]
    record["cells"] = result["cells"]
    return record


_HEADER = [
    "| block | params | LUT4 | FF (wrapper port bits) | block RAM | LUT-RAM | Fmax (MHz) "
    "| critical path (from -> to, ns) |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
]


def _params_text(top: Top, params: dict) -> str:
    # a record written before a parameter existed ran at that parameter's default
    changed = {p.name: params[p.name] for p in top.params
               if params.get(p.name, p.default) != p.default}  # fmt: skip
    return " ".join(f"{k}={json.dumps(v)}" for k, v in changed.items()) or "defaults"


def format_fpga_row(record: dict) -> str:
    """One table row; a record with ``error`` says what failed."""
    r = record
    top = TOPS[r["block"]]
    params = _params_text(top, r["params"])
    if "error" in r:
        return f"| {r['block']} | {params} | {r['error']} | | | | | |"
    path = r.get("critical_path")
    path_text = f"`{path['from']}` -> `{path['to']}`, {path['delay_ns']:.2f}" if path else "-"
    fmax = f"{r['fmax_mhz']:.1f}" if r.get("fmax_mhz") is not None else "-"
    return (
        f"| {r['block']} | {params} | {r['luts']} | {r['ffs']} ({r['wrapper_flops']}) "
        f"| {r['bram']} | {r['dist_ram']} | {fmax} | {path_text} |"
    )


def format_fpga_table(records: list[dict]) -> str:
    """A Markdown table of FPGA records."""
    return "\n".join([*_HEADER, *(format_fpga_row(r) for r in records)])


def fpga_unit(top: str, device: str, timeout: float | None) -> dict:
    """One top's default parameters placed and routed, the unit of a run
    (:mod:`hwprof.run`): its record, or one with ``error`` if the tools fail."""
    from .catalog import get_top

    entry = get_top(top)
    params = entry.resolve({})
    try:
        return fpga_record(entry, params, entry.construct({}), device=device, timeout=timeout)
    except FpgaError as exc:
        return {"block": top, "device": device, "params": params, "error": str(exc)}


def run_fpga_report(output: Path, device: str = "ecp5-85k", timeout: float | None = 900,
                    tops: list[Top] | None = None, run_options=None,
                    journal: Path | None = None) -> list[dict]:  # fmt: skip
    """Place and route every top's default parameters: build/fpga.{json,md}.

    One unit per top (``run_options``: where, :class:`hwprof.run.RunOptions`, default
    in-process; ``journal``: the file recording them, for ``--resume``). Written again
    after every top (atomically), so a long run leaves the figures measured so far. A
    top whose tool fails or exceeds ``timeout`` seconds gets a record with ``error``
    (and a row saying so). ``tops``: only these, replacing their records in an existing
    ``fpga.json`` of the same device and keeping the others (to measure again a block
    that changed). A record's ``seconds`` (the unit's wall time) is the one field that
    depends on where and when it ran.
    """
    from .run import Journal, RunOptions, Unit, run_units

    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r} (known: {', '.join(DEVICES)})")
    records = []
    if tops is not None:
        names = {t.name for t in tops}
        kept = load_fpga_records(output / "fpga.json").values()
        records = [r for r in kept if r["block"] not in names and r.get("device") == device]
    tops = slow_last(list(TOPS.values()) if tops is None else tops)

    def done(outcome):
        record = outcome.value if outcome.ok else {
            "block": outcome.key, "device": device, "params": TOPS[outcome.key].resolve({}),
            "error": f"{outcome.error_type}: {outcome.error}"}  # fmt: skip
        record["seconds"] = round(outcome.timing.get("seconds", 0.0), 1)
        records.append(record)
        records.sort(key=_order)
        print(f"[{len(records)}/{len(tops)}] {outcome.key} on {device}"
              + (f": {record['error']}" if "error" in record else ""), file=sys.stderr,
              flush=True)  # fmt: skip
        _write(output, records, device)

    identity = {"command": "report --fpga", "device": device, "tops": [t.name for t in tops]}
    run_units([Unit(t.name, fpga_unit, {"top": t.name, "device": device, "timeout": timeout})
               for t in tops], run_options or RunOptions(jobs=1), on_done=done,
              name=f"fpga {device}",
              journal=None if journal is None else Journal(journal, identity))  # fmt: skip
    table = format_fpga_table(records)
    print(table)
    return records


def _order(record: dict) -> tuple:
    names = [t.name for t in slow_last(list(TOPS.values()))]
    return (names.index(record["block"]) if record["block"] in names else len(names),)


def _write(output: Path, records: list[dict], device: str) -> None:
    write_atomically(output / "fpga.json", json.dumps(records, indent=2) + "\n")
    text = (
        f"# Place and route on {device} (out of context, ports registered)\n\n"
        "Written by `hwprof report --fpga`; see docs/fpga.md for the flow.\n\n"
        + format_fpga_table(records) + "\n"
    )
    write_atomically(output / "fpga.md", text)


def load_fpga_records(path: Path) -> dict[tuple[str, str], dict]:
    """``build/fpga.json`` as ``{(block, params JSON): record}``; empty if absent or unreadable."""
    try:
        records = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(records, list):
        return {}
    return {
        (r["block"], json.dumps(r["params"], sort_keys=True)): r
        for r in records
        if isinstance(r, dict) and "block" in r and "params" in r
    }


def fpga_columns(fpga: dict, record: dict) -> str:
    """The area table's LUT/FF/BRAM/Fmax cells for one area record (blank if not run)."""
    r = fpga.get((record["block"], json.dumps(record["params"], sort_keys=True)))
    if r is None:
        return " | | | "
    if "error" in r:
        return " not placed and routed (see fpga.md) | | | "
    fmax = f"{r['fmax_mhz']:.0f}" if r.get("fmax_mhz") is not None else "-"
    return f" {r['luts']} | {r['ffs']} | {r['bram']} | {fmax} "
