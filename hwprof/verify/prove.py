"""``hwprof prove``: every property of the selected tops, one yosys run each."""

from __future__ import annotations

from pathlib import Path

from ..catalog import TOPS, Top
from ..synth import to_verilog
from .formal import ProofResult, run_property

__all__ = ["provable", "formal_param_sets", "prove_top", "prove_tops"]


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


def prove_tops(tops: list[Top], overrides: dict | None = None, workdir: Path | None = None,
               out=print) -> bool:  # fmt: skip
    ok = True
    for top in tops:
        sets = formal_param_sets(top, overrides)
        for index in range(len(sets)):
            params, results = prove_top(top, overrides, workdir=workdir, index=index)
            changed = {k: v for k, v in params.items() if v != top.resolve({})[k]}
            out(f"{top.name} ({', '.join(f'{k}={v}' for k, v in changed.items()) or 'defaults'}):")
            for r in results:
                out(f"  {r.name}: {r.summary()} [{r.seconds:.1f} s]")
                if r.status == "failed":
                    out("    " + r.trace.replace("\n", "\n    "))
                ok &= r.ok
    return ok
