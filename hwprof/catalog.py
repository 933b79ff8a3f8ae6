"""Catalog of every generated top: name -> RTL constructor, parameters, paper budget.

A :class:`Top` names one block. Its parameters are the keyword arguments of the
RTL constructor that a user may set from the command line (``-p name=value``);
validation is the constructor's own (``TypeError``/``ValueError`` with a clear
message). ``variants`` are the parameter sets that ``hwprof report`` synthesizes
and sets against the paper's budget.

Adding a block: write its RTL component, then a module ``hwprof/tops/<block>.py``
whose ``TOPS`` list holds its ``Top`` entries; the catalog collects every module
of that package (sorted by module name), so blocks never edit a shared list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Param", "Top", "TOPS", "get_top", "parse_params", "CatalogError"]


class CatalogError(ValueError):
    """Bad user input: unknown top, unknown parameter, unparsable value."""


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected 0/1/true/false, not {text!r}")


def _parse_int(text: str) -> int:
    return int(text.strip(), 0)


def _parse_int_tuple(text: str) -> tuple[int, ...]:
    return tuple(_parse_int(part) for part in text.split(","))


@dataclass(frozen=True)
class Param:
    """One user-settable parameter of a top.

    ``kind`` is ``"int"``, ``"bool"``, ``"str"`` or ``"ints"`` (a comma-separated list).
    """

    name: str
    default: object
    kind: str
    help: str

    def parse(self, text: str):
        parser = {"int": _parse_int, "bool": _parse_bool, "ints": _parse_int_tuple,
                  "str": str.strip}[self.kind]  # fmt: skip
        try:
            return parser(text)
        except ValueError as exc:
            raise CatalogError(f"parameter {self.name}: {exc}") from None


@dataclass(frozen=True)
class Top:
    """One catalog entry."""

    name: str
    description: str
    build: Callable  # (**params) -> amaranth wiring.Component
    params: tuple[Param, ...]
    #: Paper budget: ``{"flops"/"gates"/"memory_bits": limit, "source": text}``,
    #: or a function of the resolved parameters returning one (or None).
    budget: dict | Callable | None = None
    #: Parameter sets that ``hwprof report`` synthesizes.
    variants: tuple[dict, ...] = field(default_factory=lambda: ({},))
    #: Parameter sets whose synthesis takes too long for the default report (tens
    #: of minutes): only ``hwprof report --all`` synthesizes them.
    slow_variants: tuple[dict, ...] = ()
    #: cocotb test module in hwprof/cocotb_tests/ (gets the parameters as HWPROF_PARAMS).
    cocotb_module: str | None = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise CatalogError(f"unknown parameter {name!r} for top {self.name!r} (known: {known})")

    def resolve(self, overrides: dict) -> dict:
        """Full parameter dict: defaults updated with ``overrides`` (checked names)."""
        for name in overrides:
            self.param(name)
        return {p.name: overrides.get(p.name, p.default) for p in self.params}

    def construct(self, overrides: dict | None = None):
        """Build the component; a bad value raises :class:`CatalogError`."""
        params = self.resolve(overrides or {})
        try:
            return self.build(**params)
        except (TypeError, ValueError) as exc:
            raise CatalogError(f"{self.name}: {exc}") from None


def parse_params(top: Top, assignments: list[str]) -> dict:
    """Parse ``["k=v", ...]`` against ``top``'s parameters."""
    result = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CatalogError(f"parameter must be written name=value, not {item!r}")
        result[name] = top.param(name).parse(value)
    return result


def _all_tops() -> dict[str, Top]:
    """Collect ``TOPS`` from every module of :mod:`hwprof.tops` (one module per block)."""
    import importlib
    import pkgutil

    from . import tops as package

    found: dict[str, Top] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for top in module.TOPS:
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
