"""The catalog: every block's :class:`~hwprof.block.Top`, collected from :mod:`hwprof.tops`.

Adding a block: write its golden model and RTL component, then a module
``hwprof/tops/<block>.py`` whose ``TOPS`` list holds its ``Top`` entries; the
catalog collects every module of that package (sorted by module name), so blocks
never edit a shared list. The flows loop over :data:`TOPS`.
"""

from __future__ import annotations

import importlib
import pkgutil

from . import tops as package
from .block import CatalogError, Param, Top, parse_params

__all__ = ["Param", "Top", "TOPS", "get_top", "parse_params", "slow_last", "CatalogError"]


def _all_tops() -> dict[str, Top]:
    """Collect ``TOPS`` from every module of :mod:`hwprof.tops` (one module per block)."""
    found: dict[str, Top] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for top in getattr(module, "TOPS", ()):
            if top.name in found:
                raise RuntimeError(f"two catalog entries named {top.name!r}")
            found[top.name] = top
    return found


TOPS: dict[str, Top] = _all_tops()


def get_top(name: str) -> Top:
    """The catalog entry ``name``; :class:`CatalogError` if there is none."""
    try:
        return TOPS[name]
    except KeyError:
        known = ", ".join(sorted(TOPS))
        raise CatalogError(f"unknown top {name!r} (known: {known})") from None


def slow_last(tops: list[Top]) -> list[Top]:
    """``tops`` in order, those with slow variants (minutes of synthesis, longer to place
    and route) last."""
    return sorted(tops, key=lambda t: bool(t.slow_variants))
