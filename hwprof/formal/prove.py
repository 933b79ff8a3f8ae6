"""``hwprof prove``: every property of the selected tops, one yosys run each."""

from __future__ import annotations

from pathlib import Path

from ..catalog import Top
from ..synth import to_verilog
from .engine import ProofResult, run_property
from .properties import FORMAL_PARAMS, PROPERTIES, properties_for

__all__ = ["prove_top", "prove_tops"]


def prove_top(top: Top, overrides: dict | None = None, *, only: str | None = None,
              workdir: Path | None = None) -> tuple[dict, list[ProofResult]]:  # fmt: skip
    """Prove ``top``'s properties at ``FORMAL_PARAMS`` updated with ``overrides``.

    Returns the resolved parameters and one result per property (``only``: that one).
    """
    if top.name not in PROPERTIES:
        raise ValueError(f"top {top.name!r} has no properties (have: {', '.join(PROPERTIES)})")
    overrides = {**FORMAL_PARAMS.get(top.name, {}), **(overrides or {})}
    params = top.resolve(overrides)
    verilog = to_verilog(top.construct(overrides), top.name)
    results = []
    for prop in properties_for(top.name, params):
        if only is not None and prop.name != only:
            continue
        where = None if workdir is None else Path(workdir) / top.name / prop.name
        results.append(run_property(verilog, top.name, prop, workdir=where))
    return params, results


def prove_tops(tops: list[Top], overrides: dict | None = None, workdir: Path | None = None,
               out=print) -> bool:  # fmt: skip
    ok = True
    for top in tops:
        params, results = prove_top(top, overrides, workdir=workdir)
        changed = {k: v for k, v in params.items() if v != top.resolve({})[k]}
        out(f"{top.name} ({', '.join(f'{k}={v}' for k, v in changed.items()) or 'defaults'}):")
        for r in results:
            out(f"  {r.name}: {r.summary()} [{r.seconds:.1f} s]")
            if r.status == "failed":
                out("    " + r.trace.replace("\n", "\n    "))
            ok &= r.ok
    return ok
