"""What moved when an experiment's tuples were keyed otherwise: the results' "moved" table.

An experiment that keys tuples through :func:`hwprof.traces.keys.trace_keys` records its
``value_map``. When a run replaces a record made with another value map (a record
without one used the experiment's earlier map), :func:`before_key_change` keeps that
record's headline rows and chosen numbers in the new record; a later run with the same
map carries them on. :func:`moved_lines` renders the comparison from the record alone, per
metric, so that no figure mixes units.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

__all__ = ["flatten", "before_key_change", "moved_lines"]

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


def flatten(record: dict, patterns) -> dict[str, float]:
    """The numbers of ``record`` at ``patterns`` (tuples of keys, ``"*"`` for every key),
    by path ``a/b/c`` (a list of numbers gives ``a/b/c[i]``; None is left out)."""
    out: dict[str, float] = {}

    def walk(node, pattern, path):
        if not pattern:
            items = enumerate(node) if isinstance(node, list) else [(None, node)]
            for i, v in items:
                if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
                    out[path if i is None else f"{path}[{i}]"] = float(v)
            return
        if not isinstance(node, dict):
            return
        head, rest = pattern[0], pattern[1:]
        for key in node if head == "*" else [head] if head in node else []:
            walk(node[key], rest, f"{path}/{key}" if path else key)

    for pattern in patterns:
        walk(record, tuple(pattern), "")
    return out


def before_key_change(path: Path, value_map: str, earlier_map: str, headline,
                      patterns) -> dict | None:  # fmt: skip
    """The comparison base for the record written at ``path``: the record there now, if
    it keyed with another map (its map, date, ``headline(record)`` rows and numbers at
    ``patterns``); the base it carries, if it keyed with ``value_map``; else None."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if old.get("value_map", earlier_map) == value_map:
        return old.get("before_key_change")
    timing = old.get("timing") or {}
    return {"value_map": old.get("value_map", earlier_map),
            "date": timing.get("date", old.get("date")),
            "headline": [list(row) for row in headline(old)],
            "numbers": flatten(old, patterns)}  # fmt: skip


def _change(before: str, after: str) -> str:
    """Per-number differences of two headline cells with the same words, else "-"."""
    a, b = _NUMBER.findall(before), _NUMBER.findall(after)
    if not a or len(a) != len(b) or _NUMBER.sub("#", before) != _NUMBER.sub("#", after):
        return "-" if before != after else "0"
    return "; ".join(f"{float(y) - float(x):+.2f}" for x, y in zip(a, b, strict=True))


def _one_metric(path: str) -> str:
    """The metric of every number when an experiment names none."""
    return "number"


def moved_lines(record: dict, headline, patterns, top: int = 5, metric=_one_metric) -> list[str]:
    """Markdown: the headline before and after the key change and, per metric, how many
    numbers moved, their mean absolute change and the ``top`` that moved most (empty when
    the record carries no comparison base). ``metric(path)`` names a number's metric with
    its unit (say ``"events to reach 5 % error"``), so every figure has one unit."""
    base = record.get("before_key_change")
    if not base:
        return []
    now = flatten(record, patterns)
    common = [p for p in base["numbers"] if p in now]
    groups: dict[str, list[tuple[float, str]]] = {}
    for p in common:
        groups.setdefault(metric(p), []).append((now[p] - base["numbers"][p], p))
    moved_in = {m: [(d, p) for d, p in sorted(moves, key=lambda m: -abs(m[0]))
                    if abs(d) > 1e-9 * max(1.0, abs(now[p]))]
                for m, moves in groups.items()}  # fmt: skip
    lines = [f"## What moved when the key changed (`{base['value_map']}` to "
             f"`{record.get('value_map')}`)", "",
             f"Before: the record this run replaced, tuples keyed with "
             f"`{base['value_map']}`; after: this run, keyed with `{record.get('value_map')}` "
             f"(`hwprof experiment key-merges` counts what each key merges). "
             f"{sum(map(len, moved_in.values()))} of the {len(common)} numbers compared "
             f"moved.", "",
             "| quantity | paper | before | after | change |",
             "| --- | --- | --- | --- | --- |"]  # fmt: skip
    after = {row[0]: row for row in headline(record)}
    for quantity, paper, old in base["headline"]:
        new = after.get(quantity, (quantity, paper, "-"))[2]
        lines.append(f"| {quantity} | {paper} | {old} | {new} | {_change(old, new)} |")
    lines += ["", "Per metric (each in its own unit): the numbers compared, those that moved, "
              "their mean absolute change (over all compared) and the largest change.", "",
              "| metric | compared | moved | mean absolute change | largest change |",
              "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for m, moves in groups.items():
        mean = sum(abs(d) for d, _ in moves) / len(moves)
        big = moved_in[m][0][0] if moved_in[m] else 0.0
        lines.append(f"| {m} | {len(moves)} | {len(moved_in[m])} | {mean:.3f} | {big:+.3f} |")
    if any(moved_in.values()):
        lines += ["", f"The numbers that moved most, up to {top} per metric:", "",
                  "| metric | number | before | after | change |",
                  "| --- | --- | ---: | ---: | ---: |"]  # fmt: skip
        for m, moved in moved_in.items():
            for d, p in moved[:top]:
                lines.append(f"| {m} | `{p}` | {base['numbers'][p]:.3f} | {now[p]:.3f} | "
                             f"{d:+.3f} |")  # fmt: skip
    return lines + [""]
