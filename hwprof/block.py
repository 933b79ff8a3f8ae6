"""What the flows know about a block: :class:`Top` and the facts it carries.

A :class:`Top` names one block. Its parameters are the keyword arguments of the
RTL constructor that a user may set from the command line (``-p name=value``);
validation is the constructor's own (``TypeError``/``ValueError`` with a clear
message). ``variants`` are the parameter sets that ``hwprof report`` synthesizes
and sets against the paper's budget. The other fields say what each flow does
with the block: its cocotb module (``hwprof regress``), formal properties
(``hwprof prove``), the bench of its mutation run (``hwprof mutate``) and its
check on real traces (``python -m hwprof.verify.trace_verify``); a flow skips a
block whose field is empty and never asks for a block by name.

The modules of :mod:`hwprof.tops` define the entries (one module per block) and
:mod:`hwprof.catalog` collects them; this module imports neither.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Param", "golden_params", "Top", "Property", "TraceCheck", "parse_params",
           "CatalogError"]  # fmt: skip


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

    @classmethod
    def golden(cls, config, name: str, help: str, kind: str | None = None) -> Param:
        """The parameter ``name`` of the golden model's ``config`` (a dataclass): its
        default is the field's default there, written once. ``kind`` defaults from the
        default's type (``bool``, ``int``, ``str``); a field whose default is None needs one.
        """
        fields = {f.name: f for f in dataclasses.fields(config)}
        if name not in fields or fields[name].default is dataclasses.MISSING:
            raise TypeError(f"{config.__name__} has no field {name!r} with a default")
        default = fields[name].default
        if kind is None:
            kinds = {bool: "bool", int: "int", str: "str"}
            if type(default) not in kinds:
                raise TypeError(f"{config.__name__}.{name}: give the kind of a {default!r} default")
            kind = kinds[type(default)]
        return cls(name, default, kind, help)

    def parse(self, text: str):
        parser = {"int": _parse_int, "bool": _parse_bool, "ints": _parse_int_tuple,
                  "str": str.strip}[self.kind]  # fmt: skip
        try:
            return parser(text)
        except ValueError as exc:
            raise CatalogError(f"parameter {self.name}: {exc}") from None


def golden_params(config, **helps) -> tuple[Param, ...]:
    """:meth:`Param.golden` for several fields of one golden config, in the order given.

    ``name="help"``, or ``name=("help", kind)`` for a field whose default is None.
    """
    return tuple(Param.golden(config, name, *((h,) if isinstance(h, str) else h))
                 for name, h in helps.items())  # fmt: skip


@dataclass(frozen=True)
class Property:
    """One property (or a small group proved together) of a block.

    ``modules`` maps a module name of the generated Verilog (the top is the top's
    name, submodules ``top.sub``) to SystemVerilog inserted before its
    ``endmodule``. ``maxsteps`` bounds the induction length (and so the depth of
    the bounded check when the induction does not close). ``free_init``: yosys
    selections (after ``flatten``, e.g. ``w:lfsr.register``) whose reset values are
    dropped, so that the base case starts from *any* value of those registers: the
    property is then checked on every state, not only on the states reachable from
    reset (a register without a load port otherwise never leaves its orbit).
    """

    name: str
    description: str
    modules: dict
    maxsteps: int = 8
    free_init: tuple = ()

    def __post_init__(self):
        if not self.modules:
            raise ValueError(f"property {self.name!r} has no text")


@dataclass(frozen=True)
class TraceCheck:
    """How a top's generated Verilog is checked on the ``<pc, value>`` keys of a trace.

    ``model(params)`` is the golden cycle model (a ``step`` method) at the top's
    resolved parameters. ``counts(params, keys)``, where given, is a bulk golden
    path: the message count sent for each tuple, or None where it does not apply to
    these parameters. ``profiles(params, keys)``, where given, replaces the message
    comparison by the interval profiles read out after the stream: ``readout(run)``
    gives them from the run of the stream harness (a
    :class:`hwprof.sim.native.StreamRun`) as ``profiles`` gives the golden ones,
    and ``drain(params)`` is then the cycles the readout takes.
    """

    model: Callable
    counts: Callable | None = None
    profiles: Callable | None = None
    readout: Callable | None = None
    drain: Callable | None = None

    def __post_init__(self):
        if (self.profiles is None) != (self.readout is None):
            raise ValueError("a trace check that compares profiles needs profiles and readout")


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
    #: Formal properties at the resolved parameters: ``properties(params)`` gives a
    #: list of :class:`Property` (``hwprof prove``).
    properties: Callable | None = None
    #: Parameter sets proved instead of the defaults (``({},)``: the defaults).
    formal_params: tuple[dict, ...] = ({},)
    #: The bench of ``make mutate``: ``"cocotb"`` (the cocotb regression), ``"native"``
    #: (``native_bench`` first, the regression on its survivors) or None (not run).
    mutate: str | None = None
    #: ``native_bench(params, **options)``: the native stream bench of ``hwprof mutate
    #: --bench native`` (see :mod:`hwprof.verify.mutate_native`).
    native_bench: Callable | None = None
    #: The check of ``python -m hwprof.verify.trace_verify`` on real traces.
    trace_check: TraceCheck | None = None

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
