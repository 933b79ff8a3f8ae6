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
           "label_axes", "previous_sweep", "file_identity"]  # fmt: skip


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

    ``docs_table(record) -> [line, ...]``: the Markdown table a block page's
    ``<!-- table: results NAME -->`` region shows (:mod:`hwprof.docs_tables`), read from
    the committed record ``docs/results/NAME.json``.
    """

    name: str
    description: str
    run: Callable[..., dict]
    takes_traces: bool = False
    units: bool = False
    headline: Callable[[dict], list[tuple[str, str, str]]] | None = None
    docs_table: Callable[[dict], list[str]] | None = None


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


def file_identity(path) -> dict:
    """Which file a measurement read: ``{"file": its name, "path": the path as given,
    "sha256": hex digest of its bytes}`` (records made from different checkouts compare by
    the digest)."""
    import hashlib

    with open(path, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    return {"file": Path(path).name, "path": str(path), "sha256": digest}


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


def sweep_cells(name: str, stem: str, settings: dict, run_cell, cells: dict, run_options):
    """Run a sweep's cells as units (:mod:`hwprof.run`): ``cells`` maps each cell's key
    (a string) to ``run_cell``'s keyword arguments; returns ``{key: run_cell's result}``.
    The journal's identity is ``settings``, so ``--resume`` reuses only a run of the
    same sweep; a cell that raises stops the run with its error, nothing written."""
    from ..run import Journal, RunError, RunOptions, Unit, journal_path, run_units

    units = [Unit(key, run_cell, kwargs) for key, kwargs in cells.items()]
    outcomes = run_units(units, run_options or RunOptions(jobs=1), name=stem,
                         journal=Journal(journal_path(f"experiment-{stem}"),
                                         {"experiment": name, **settings}))  # fmt: skip
    failed = [o for o in outcomes.values() if not o.ok]
    if failed:
        raise RunError(f"{name}: cell {failed[0].key} failed: {failed[0].error}")
    return {key: outcome.value for key, outcome in outcomes.items()}


def panel_grid(panels: int, max_cols: int, width: float, height: float):
    """A figure of ``panels`` panels in rows of at most ``max_cols``, each ``width`` x
    ``height`` inches: ``(figure, axes in reading order)``; the grid's spare panels are
    blank."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(panels, max_cols)
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[panels:]:
        ax.axis("off")
    return fig, flat


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
