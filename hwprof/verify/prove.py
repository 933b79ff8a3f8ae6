"""``hwprof prove``: every property of the selected tops, one yosys run each."""

from __future__ import annotations

from pathlib import Path

from ..catalog import TOPS, Top
from ..synth import to_verilog
from .formal import ProofResult, run_property

__all__ = ["provable", "formal_param_sets", "prove_top", "prove_tops", "prove_unit"]


def provable() -> list[str]:
    """The catalog's tops that have formal properties."""
    return [name for name, top in TOPS.items() if top.properties is not None]


def formal_param_sets(top: Top, overrides: dict | None = None) -> list[dict]:
    """The parameter sets ``top`` is proved at: its ``formal_params``, each updated with
    ``overrides``; sets that become equal are proved once."""
    out = []
    for base in top.formal_params:
        merged = {**base, **(overrides or {})}
        if merged not in out:
            out.append(merged)
    return out


def prove_top(top: Top, overrides: dict | None = None, *, only: str | None = None,
              workdir: Path | None = None, index: int = 0,
              ) -> tuple[dict, list[ProofResult]]:  # fmt: skip
    """Prove ``top``'s properties at its ``index``-th formal parameter set
    (:func:`formal_param_sets` with ``overrides``).

    Returns the resolved parameters and one result per property (``only``: that one).
    """
    if top.properties is None:
        raise ValueError(f"top {top.name!r} has no properties (have: {', '.join(provable())})")
    sets = formal_param_sets(top, overrides)
    chosen = sets[index]
    params = top.resolve(chosen)
    verilog = to_verilog(top.construct(chosen), top.name)
    results = []
    for prop in top.properties(params):
        if only is not None and prop.name != only:
            continue
        where = None
        if workdir is not None:
            where = Path(workdir) / top.name / (f"set{index}" if len(sets) > 1 else "")
            where = where / prop.name
        results.append(run_property(verilog, top.name, prop, workdir=where))
    return params, results


def prove_unit(top: str, overrides: dict, index: int, prop: str,
               workdir: str | None) -> dict:  # fmt: skip
    """One property of one top at one formal parameter set, the unit of a run
    (:mod:`hwprof.run`): its result as JSON (no times)."""
    from ..catalog import get_top

    _, results = prove_top(get_top(top), overrides, only=prop, index=index,
                           workdir=None if workdir is None else Path(workdir))  # fmt: skip
    r = results[0]
    return {"name": r.name, "status": r.status, "steps": r.steps, "ok": r.ok,
            "summary": r.summary(), "trace": r.trace}  # fmt: skip


def prove_tops(tops: list[Top], overrides: dict | None = None, workdir: Path | None = None,
               out=print, run_options=None, journal: Path | None = None,
               records: list | None = None) -> bool:  # fmt: skip
    """Prove every property of ``tops`` at each formal parameter set, one unit per
    property (``run_options``: where, :class:`hwprof.run.RunOptions`, default in-process;
    ``journal``: the file recording them, for ``--resume``). Prints the results in order
    as they come in; True if none failed. ``records``: a list that gets one dict per
    property, in the same order (top, params, property, status, steps, ok, seconds). A
    unit that raises (a yosys error) raises :class:`~hwprof.verify.formal.FormalError`
    with its message, after the others."""
    from ..run import Journal, RunOptions, Unit, run_units
    from .formal import FormalError

    overrides = overrides or {}
    units, headers, params_of = [], {}, {}
    for top in tops:
        sets = formal_param_sets(top, overrides)
        for index, chosen in enumerate(sets):
            params = top.resolve(chosen)
            changed = {k: v for k, v in params.items() if v != top.resolve({})[k]}
            names = [p.name for p in top.properties(params)]
            params_of.update({f"{top.name}/{index}/{name}": params for name in names})
            if names:
                what = ", ".join(f"{k}={v}" for k, v in changed.items()) or "defaults"
                headers[f"{top.name}/{index}/{names[0]}"] = f"{top.name} ({what}):"
            units += [Unit(f"{top.name}/{index}/{name}", prove_unit,
                           {"top": top.name, "overrides": overrides, "index": index,
                            "prop": name, "workdir": None if workdir is None else
                            str(Path(workdir).absolute())}) for name in names]  # fmt: skip
    order = [u.key for u in units]
    got: dict = {}
    shown = 0

    def done(outcome):
        nonlocal shown
        got[outcome.key] = outcome
        while shown < len(order) and order[shown] in got:
            key = order[shown]
            if key in headers:
                out(headers[key])
            o = got[key]
            if o.ok:
                r = o.value
                out(f"  {r['name']}: {r['summary']} [{o.timing.get('seconds', 0):.1f} s]")
                if records is not None:
                    records.append({"top": key.split("/", 1)[0], "params": params_of[key],
                                    "property": r["name"], "status": r["status"],
                                    "steps": r["steps"], "ok": r["ok"],
                                    "seconds": o.timing.get("seconds"),
                                    "trace": r["trace"]})  # fmt: skip
                if r["status"] == "failed":
                    out("    " + r["trace"].replace("\n", "\n    "))
            else:
                out(f"  {key.rsplit('/', 1)[1]}: ERROR {o.error}")
            shown += 1

    identity = {"command": "prove", "tops": [t.name for t in tops], "overrides": overrides}
    outcomes = run_units(units, run_options or RunOptions(jobs=1), on_done=done, name="prove",
                         journal=None if journal is None else Journal(journal, identity))
    failed = [o for o in outcomes.values() if not o.ok]
    if failed:
        raise FormalError(failed[0].error)
    return all(o.value["ok"] for o in outcomes.values())
