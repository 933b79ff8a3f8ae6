"""Paper reproductions: ``hwprof experiment NAME`` writes its results to docs/results/.

Each module of this package defines ``EXPERIMENTS``, a list of :class:`Experiment`;
the registry collects them all (no shared list to edit).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Experiment", "all_experiments", "headline_table", "cell", "write_results",
           "label_axes", "previous_sweep"]  # fmt: skip


@dataclass(frozen=True)
class Experiment:
    """One paper reproduction.

    ``run(output_dir: Path, seed: int, quick: bool) -> dict`` writes its tables,
    figures and a Markdown summary into ``output_dir`` and returns the headline
    numbers. ``quick`` selects a reduced size for the test suite. With
    ``takes_traces``, ``run`` also takes ``traces=`` (trace file paths, ``--trace``)
    and must read them all before it writes anything. With ``units``, ``run`` also
    takes ``run_options=`` (:class:`hwprof.run.RunOptions`: ``--jobs``, ``--scheduler``,
    ``--resume``) and runs its program x configuration x seed units through
    :func:`hwprof.run.run_units`.

    ``headline(record) -> [(quantity, paper, ours), ...]``: the rows that
    ``hwprof experiment NAME`` prints at the end of a run, read from the JSON
    record the run wrote (``<name>[-quick].json``) and rounded as in its Markdown
    summary; ``paper`` is "-" where the paper gives no figure.
    """

    name: str
    description: str
    run: Callable[..., dict]
    takes_traces: bool = False
    units: bool = False
    headline: Callable[[dict], list[tuple[str, str, str]]] | None = None


def all_experiments() -> dict[str, Experiment]:
    found: dict[str, Experiment] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for experiment in getattr(module, "EXPERIMENTS", []):
            if experiment.name in found:
                raise RuntimeError(f"two experiments named {experiment.name!r}")
            found[experiment.name] = experiment
    return found


def write_results(output_dir, name: str, quick: bool, record: dict, markdown: str) -> None:
    """Write ``<name>[-quick].json`` (``record``) and ``.md`` (``markdown``) into ``output_dir``."""
    stem = f"{name}-quick" if quick else name
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / f"{stem}.json").write_text(json.dumps(record, indent=1) + "\n")
    (output_dir / f"{stem}.md").write_text(markdown)


def previous_sweep(path, settings: dict, log, ignore=()):
    """The ``cells`` of an earlier run's record at ``path`` made with the same
    ``settings`` (but for the keys in ``ignore``), else None: a sweep of generated
    streams, which does not depend on the programs' traces, is kept when only the real
    programs are measured again (with ``ignore=("grid",)`` the caller keeps the cells
    its grid still has and runs the others)."""
    try:
        old = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None

    def kept(record):
        return {k: v for k, v in record.items() if k not in ignore}

    if kept(old.get("settings", {})) != kept(settings):
        return None
    log(f"the sweep of {path} has these settings: kept")
    return old["cells"]


def label_axes(ax, xlabel: str, ylabel: str, title: str, **legend) -> None:
    """A figure panel's labels, title, legend (small type; ``legend``: its options) and
    light grid, alike in every experiment's figure."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, **legend)
    ax.grid(alpha=0.3)


def cell(value, spec: str = ".2f", unit: str = "") -> str:
    """``value`` formatted with ``spec`` (and ``unit``); "-" for None, yes/no for a bool."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:{spec}}{unit}"


def headline_table(experiment: Experiment, record: dict) -> str:
    """The paper's figures beside ours: a Markdown table of ``experiment.headline(record)``."""
    rows = experiment.headline(record) if experiment.headline else []
    if not rows:
        return ""
    lines = ["| quantity | paper | ours |", "| --- | --- | --- |"]
    lines += [f"| {what} | {paper} | {ours} |" for what, paper, ours in rows]
    return "\n".join(lines)
