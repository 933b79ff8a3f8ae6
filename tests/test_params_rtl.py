"""Components check their parameters before they exist (``hwprof.rtl._params.Checked``):
a rejected one raises and leaves no Amaranth "created but never used" warning."""

from __future__ import annotations

import dataclasses
import gc
import inspect
import warnings

import pytest
from amaranth.hdl import Fragment, UnusedElaboratable

from hwprof.rtl.brr import Brr
from hwprof.rtl.brr_decode import BrrDecode
from hwprof.rtl.brr_deterministic import BrrDeterministic
from hwprof.rtl.brr_superscalar import BrrReplicated, BrrShared
from hwprof.rtl.dispatch_filter import DispatchFilter
from hwprof.rtl.hashing import Hash
from hwprof.rtl.lfsr import Lfsr
from hwprof.rtl.multihash import MultiHash
from hwprof.rtl.profile_flag_predictor import ProfileFlagPredictor
from hwprof.rtl.samplers import (
    AssocTable,
    CountdownSampler,
    Counter,
    CountingRandomSampler,
    MessageBuffer,
    PeriodicSampler,
    RandomSampler,
    Stratified,
    StratifiedPipeline,
)
from hwprof.rtl.tagged import TaggedCompressor

BAD = [
    (Brr, {"width": 3}),
    (BrrDecode, {"seed": 0}),
    (BrrDeterministic, {"max_inflight": 0}),
    (BrrReplicated, {"lanes": 0}),
    (BrrShared, {"lanes": 2, "steps": 3}),
    (DispatchFilter, {"predecoded": 1}),
    (Hash, {"index_bits": 4, "key_bits": 8, "table_seed": 1, "rom": "x"}),
    (Lfsr, {"width": 2}),
    (MultiHash, {"tables": 0}),
    (MultiHash, {"readout_pick": "tree"}),
    (MultiHash, {"ways": 0, "readout_pick": "tree"}),
    (ProfileFlagPredictor, {"lanes": 5}),
    (RandomSampler, {"rate": 1}),
    (CountdownSampler, {"rate": 1}),
    (PeriodicSampler, {"rate": 1}),
    (Counter, {"count_bits": 1}),
    (CountingRandomSampler, {"rate": 300, "count_bits": 8}),
    (Stratified, {"latency": 2}),
    (AssocTable, {"latency": 3}),
    (MessageBuffer, {"depth": 0}),
    (StratifiedPipeline, {"depth": 0}),
    (TaggedCompressor, {"latency": 2}),
]


def _unused_warnings(make) -> list:
    # Amaranth holds the warning back until a design has been elaborated in the process
    Fragment.get(Lfsr(), None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
        gc.collect()
    return [w for w in caught if issubclass(w.category, UnusedElaboratable)]


@pytest.mark.parametrize(("cls", "params"), BAD, ids=[c.__name__ for c, _ in BAD])
def test_rejected_component_raises_and_leaves_no_warning(cls, params):
    def make():
        with pytest.raises((TypeError, ValueError)):
            cls(**params)

    assert _unused_warnings(make) == []


def test_the_check_sees_a_dropped_component():
    # the check above can fail: a component built and dropped is reported
    assert len(_unused_warnings(lambda: Brr())) == 1


def test_config_is_set_before_init_and_positional_arguments_bind():
    brr, hash_, periodic = Brr(24), Hash(4, 8, 1), PeriodicSampler(5, 8)
    assert (brr.config.width, hash_.config.index_bits, periodic.config.rate) == (24, 4, 5)
    for component in (brr, hash_, periodic):
        Fragment.get(component, None)


DEFAULTS = sorted({c for c, _ in BAD if isinstance(c, type) and c is not Hash},
                  key=lambda c: c.__name__)  # MultiHash: a function choosing a class


@pytest.mark.parametrize("cls", DEFAULTS, ids=lambda c: c.__name__)
def test_defaults_construct_and_check_gives_the_config(cls):
    # every constructor's defaults pass its own check (a class attribute named like the
    # mixin's ``check`` once shadowed it: MessageBuffer() raised)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        component = cls()
        assert component.config == cls.check()
        del component
        gc.collect()


def default_mismatches(cls) -> dict:
    """``{name: (constructor default, config default)}`` where a component's constructor
    and its golden config (the dataclass that :meth:`Checked.check` returns) give one
    parameter different defaults."""
    config = type(cls.check())
    fields = {f.name: f.default for f in dataclasses.fields(config)
              if f.default is not dataclasses.MISSING}  # fmt: skip
    own = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
           if p.default is not inspect.Parameter.empty}  # fmt: skip
    return {name: (own[name], fields[name]) for name in own.keys() & fields.keys()
            if own[name] != fields[name]}  # fmt: skip


def test_constructor_defaults_are_the_golden_configs():
    """Each catalog top's RTL constructor repeats its golden config's defaults (the
    catalog's own defaults come from the config, hwprof.block.golden_params); they agree."""
    from hwprof.catalog import TOPS

    classes = {t.build for t in TOPS.values() if inspect.isclass(t.build)}
    checked = [cls for cls in classes if dataclasses.is_dataclass(cls.check())]
    assert len(checked) >= 12
    assert {cls.__name__: default_mismatches(cls) for cls in checked
            if default_mismatches(cls)} == {}  # fmt: skip


def test_the_default_check_finds_a_mismatch():
    class Wider(Lfsr):
        def __init__(self, width=24, seed=1, steps=1, form="fibonacci", taps=None,
                     lockup_escape=True):  # fmt: skip
            super().__init__(width, seed, steps, form, taps, lockup_escape)

    assert default_mismatches(Lfsr) == {}
    assert default_mismatches(Wider) == {"width": (24, 20)}
