"""Golden models of brr in a real core: decode integration and superscalar decode.

Lee & Zilles, CGO 2008, section 3.3.

* **Decode** (paper's summary, items 1-7): the decoder recognises the brr
  (:mod:`.brr_isa`), the existing branch-target datapath computes ``pc +
  offset``, the LFSR is clocked at the end of a cycle in which a brr decodes,
  the AND/mux gives the outcome, a taken brr uses the front-end
  misprediction (redirect) path, and a brr never enters the BTB. Any other
  instruction passes with no effect: no redirect, no LFSR step.
* **Replicated** ("replicate the hardware at each instruction decoder ...
  multiple, completely decoupled LFSRs"): lane ``i`` owns an LFSR whose seed is
  the reset seed advanced ``i * lane_spacing(W, lanes)`` single steps: nearly
  equally spaced around the one maximal-length cycle, moved down from the even
  split until every pair of lanes is independent at reset (:func:`lane_spacing`).
* **Shared** (footnote 3: "multiple decoders can arbitrate (using a priority
  encoder based on program order) for a single LFSR. If more branch-on-randoms
  are present in a fetch packet than LFSRs, the fetch packet will have to be
  split, with the additional branch-on-randoms decoded the following cycle").
  ``steps`` is how many brr one cycle serves. The ``j``-th brr of the packet in
  program order (``j = 0, 1, ...``, lane 0 oldest) reads the register advanced
  ``j`` times (``j * lfsr_steps`` single LFSR steps: 8 per advance at W = 20),
  and the register advances once per brr served. With ``steps = 1`` this is the
  paper's single LFSR with a priority encoder; with ``steps = lanes`` every brr of
  a packet is served and no packet is ever split; the brr sequence is then
  exactly the one of a single-issue core that decodes the same brr in program
  order. When a packet holds more than ``steps`` brr, ``split`` is set and
  ``split_at`` names the lane of the first brr not served: that lane and every
  younger one decode again the following cycle (they get no redirect and no LFSR
  step now).

The superscalar tops have no software write port, so the all-zero lock-up state
is unreachable from a non-zero seed; ``lockup_escape`` (default off) adds the
foundation unit's escape to each LFSR of ``brr_decode``/``brr_replicated``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from .brr import Brr, BrrConfig, _compose, adopt_layout, outcome_positions
from .brr_isa import b_immediate, decode_brr
from .gf2 import gf2_apply, gf2_rank
from .lfsr import TAPS, LfsrConfig, check_int

__all__ = [
    "XLEN",
    "MAX_LANES",
    "jump_matrix",
    "jump",
    "lane_seeds",
    "lane_spacing",
    "lanes_independent",
    "lane_distance_profile",
    "lane_distance_categories",
    "pack",
    "unpack",
    "BrrDecodeConfig",
    "BrrDecode",
    "BrrReplicatedConfig",
    "BrrReplicated",
    "BrrSharedConfig",
    "BrrShared",
]

XLEN = 32  # pc and instruction width
MAX_LANES = 16


def jump_matrix(config: LfsrConfig, distance: int) -> list[int]:
    """Row masks of the single-step LFSR matrix raised to ``distance`` (square and multiply)."""
    width = config.width
    single = [config.step(1 << j) for j in range(width)]  # column j = image of stage j
    # Turn columns into rows: row i has bit j when stage j feeds stage i.
    base = [sum(((single[j] >> i) & 1) << j for j in range(width)) for i in range(width)]
    result = [1 << i for i in range(width)]
    while distance:
        if distance & 1:
            result = _compose(base, result)
        base = _compose(base, base)
        distance >>= 1
    return result


def jump(config: LfsrConfig, state: int, distance: int) -> int:
    """``state`` advanced ``distance`` single steps (no lock-up escape)."""
    return gf2_apply(jump_matrix(config, distance), state)


def lanes_independent(config: LfsrConfig, positions, distance: int) -> bool:
    """Whether two brr reading states ``distance`` steps apart are exactly independent.

    The GF(2) rank test of :mod:`hwprof.golden.brr` at lag ``distance``, for every
    freq with ``2(freq+1) <= width`` (no larger freq can be independent).
    """
    rows = jump_matrix(config, distance)
    for freq in range(min(len(positions), config.width // 2)):
        chosen = positions[: freq + 1]
        if gf2_rank([1 << p for p in chosen] + [rows[p] for p in chosen]) < 2 * len(chosen):
            return False
    return True


@cache
def lane_spacing(width: int, lanes: int, taps=None, positions=None) -> int:
    """Steps between the seeds of adjacent replicated lanes.

    The first spacing from ``floor((2^W-1)/lanes)`` down whose every lane
    distance ``d * spacing`` passes :func:`lanes_independent`. (The even
    split is not always safe: for W=20 and 4 lanes, lanes 0 and 1 sit
    ``floor((2^20 - 1) / 4) = 262143`` single steps apart, where two freq-3 brr
    are never both taken, and lanes 0 and 2 ``2^19 - 2``, never both taken from
    freq 4. At W = 20 the spacing is 524266 for 2 lanes, 262083 for 4 and 130671
    for 8, every lane pair exactly independent at reset for freq 0..9.)
    """
    config = LfsrConfig(width=width, taps=taps)
    positions = outcome_positions(width, config.taps) if positions is None else positions
    spacing = ((1 << width) - 1) // lanes
    while not all(lanes_independent(config, positions, d * spacing) for d in range(1, lanes)):
        spacing -= 1
    return spacing


def lane_seeds(width: int, seed: int, lanes: int, taps=None, positions=None) -> tuple[int, ...]:
    """Seeds of the replicated lanes: ``seed`` jumped ``i * lane_spacing(...)`` steps."""
    config = LfsrConfig(width=width, seed=seed, taps=taps)
    spacing = lane_spacing(width, lanes, config.taps, positions)
    return tuple(jump(config, seed, i * spacing) for i in range(lanes))


def pack(values, bits: int) -> int:
    """Lane values as one flat vector, lane 0 in the low bits (the Verilog ports)."""
    return sum((int(v) & ((1 << bits) - 1)) << (i * bits) for i, v in enumerate(values))


def unpack(value: int, bits: int, lanes: int) -> list[int]:
    return [(value >> (i * bits)) & ((1 << bits) - 1) for i in range(lanes)]


def _check_bool(name, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {value!r}")


def _check_lanes(lanes) -> None:
    check_int("lanes", lanes, 1, MAX_LANES)


@dataclass(frozen=True)
class BrrDecodeConfig:
    """Parameters of the single-lane decode-stage brr (``brr_decode``).

    Parameters
    ----------
    width, seed, lockup_escape, positions, taps
        As :class:`hwprof.golden.brr.BrrConfig` (``lockup_escape`` defaults off:
        no write port, so state 0 is unreachable).
    target_adder : bool
        Compute ``redirect_target = pc + offset`` here. Off: the core's existing
        B-type target adder does it (the brr immediate sits in the B-type bits).
    """

    width: int = 20
    seed: int = 1
    lockup_escape: bool = False
    target_adder: bool = True
    positions: tuple[int, ...] | None = None
    taps: tuple[int, ...] | None = None

    def __post_init__(self):
        _check_bool("target_adder", self.target_adder)
        adopt_layout(self, self.brr_config(self.seed))

    def brr_config(self, seed: int) -> BrrConfig:
        return BrrConfig(width=self.width, seed=seed, lockup_escape=self.lockup_escape,
                         positions=self.positions, taps=self.taps)  # fmt: skip


def _lane_outputs(word: int, pc: int, valid: int, taken_of, target_adder: bool) -> dict:
    """Decode one lane; ``taken_of(freq)`` is asked only for a valid brr."""
    inst = decode_brr(word) if valid else None
    out = {"is_brr": int(inst is not None), "redirect_valid": 0, "btb_inhibit": 0,
           "request": 0}  # fmt: skip
    if target_adder:
        # pc + B-type immediate for every word (the target adder is not gated);
        # it names the redirect target only while redirect_valid is set.
        out["redirect_target"] = (pc + b_immediate(word)) % (1 << XLEN)
    if inst is not None:
        taken = taken_of(inst.freq)
        out.update(request=1, btb_inhibit=1, redirect_valid=taken)
    return out


class BrrDecode:
    """Cycle model of ``brr_decode``: one decode lane with its own LFSR.

    :meth:`step` shows the outputs of one cycle and then applies the clock edge.
    Outputs: ``is_brr`` (a valid brr word), ``request`` (the LFSR steps at the
    edge), ``redirect_valid`` (a taken brr), ``redirect_target`` (``pc + offset``
    with the B-type immediate, meaningful with ``redirect_valid``; only with
    ``target_adder``),
    ``btb_inhibit`` (never allocate a BTB entry for this instruction), ``state``.
    """

    def __init__(self, config: BrrDecodeConfig | None = None, **params):
        self.config = config if config is not None else BrrDecodeConfig(**params)
        self.unit = Brr(self.config.brr_config(self.config.seed))

    def step(self, *, insn=0, pc=0, valid=0, reset=0) -> dict:
        state = self.unit.state
        out = _lane_outputs(insn, pc, valid, lambda f: self.unit.outcome(state, f),
                            self.config.target_adder)  # fmt: skip
        out["state"] = state
        self.unit.step(decode_valid=out["request"], reset=reset)
        return out


@dataclass(frozen=True)
class BrrReplicatedConfig(BrrDecodeConfig):
    """``brr_decode`` parameters plus ``lanes`` (1..16): one LFSR per lane."""

    lanes: int = 4

    def __post_init__(self):
        _check_lanes(self.lanes)
        super().__post_init__()

    @property
    def seeds(self) -> tuple[int, ...]:
        return lane_seeds(self.width, self.seed, self.lanes, self.taps, self.positions)


def _multi_lane(step_lane, lanes, insn, pc, valid, target_adder) -> dict:
    """Per-lane outputs as flat packed ints (lane 0 in the low bits)."""
    outs = [step_lane(i, insn[i], pc[i], valid[i]) for i in range(lanes)]
    result = {name: pack([o[name] for o in outs], 1)
              for name in ("is_brr", "request", "redirect_valid", "btb_inhibit")}
    if target_adder:
        result["redirect_target"] = pack([o["redirect_target"] for o in outs], XLEN)
    return result


class BrrReplicated:
    """Cycle model of ``brr_replicated``: ``lanes`` decoupled brr units.

    :meth:`step` takes per-lane lists ``insn``, ``pc``, ``valid`` and returns the
    outputs packed as the Verilog ports (lane 0 in the low bits), plus ``state``
    (the lanes' LFSR states, ``width`` bits each).
    """

    def __init__(self, config: BrrReplicatedConfig | None = None, **params):
        self.config = cfg = config if config is not None else BrrReplicatedConfig(**params)
        self.units = [Brr(cfg.brr_config(s)) for s in cfg.seeds]

    def step(self, *, insn, pc, valid, reset=0) -> dict:
        cfg = self.config
        states = [u.state for u in self.units]

        def lane(i, word, pc_i, valid_i):
            return _lane_outputs(word, pc_i, valid_i,
                                 lambda f: self.units[i].outcome(states[i], f),
                                 cfg.target_adder)  # fmt: skip

        result = _multi_lane(lane, cfg.lanes, insn, pc, valid, cfg.target_adder)
        result["state"] = pack(states, cfg.width)
        for i, unit in enumerate(self.units):
            unit.step(decode_valid=(result["request"] >> i) & 1, reset=reset)
        return result


@dataclass(frozen=True)
class BrrSharedConfig:
    """Parameters of ``brr_shared``: ``lanes`` decoders, one LFSR.

    Parameters
    ----------
    lanes : int
        Decode width, 1..16.
    steps : int
        brr served per cycle, 1..lanes (1: the paper's priority encoder with
        packet split; ``lanes``: multi-step LFSR, never a split).
    width, seed, target_adder, positions, taps
        As :class:`BrrDecodeConfig` (no lock-up escape: no write port).
    """

    lanes: int = 4
    steps: int = 1
    width: int = 20
    seed: int = 1
    target_adder: bool = True
    positions: tuple[int, ...] | None = None
    taps: tuple[int, ...] | None = None

    def __post_init__(self):
        _check_lanes(self.lanes)
        if isinstance(self.steps, bool) or not isinstance(self.steps, int):
            raise TypeError(f"steps must be an integer, not {self.steps!r}")
        if not 1 <= self.steps <= self.lanes:
            raise ValueError(f"steps must be between 1 and lanes={self.lanes}, not {self.steps!r}")
        _check_bool("target_adder", self.target_adder)
        adopt_layout(self, self.brr_config)

    @property
    def brr_config(self) -> BrrConfig:
        return BrrConfig(width=self.width, seed=self.seed, lockup_escape=False,
                         positions=self.positions, taps=self.taps)  # fmt: skip


class BrrShared:
    """Cycle model of ``brr_shared`` (see the module docstring for the semantics).

    Outputs as :class:`BrrReplicated` (``request``: the lane's brr is *served*
    this cycle), plus ``split`` (a brr of the packet is left for the next cycle),
    ``split_at`` (lane of the first brr not served; 0 without a split) and
    ``state`` (the shared LFSR).
    """

    def __init__(self, config: BrrSharedConfig | None = None, **params):
        self.config = config if config is not None else BrrSharedConfig(**params)
        self.unit = Brr(self.config.brr_config)
        self._lfsr = self.unit.config.lfsr

    def step(self, *, insn, pc, valid, reset=0) -> dict:
        cfg = self.config
        lfsr = self._lfsr
        served = 0
        split_at = None
        state = self.unit.state

        def lane(i, word, pc_i, valid_i):
            nonlocal served, split_at, state
            if split_at is not None:  # younger than an unserved brr: decodes next cycle
                valid_i = 0
            elif valid_i and decode_brr(word) is not None and served == cfg.steps:
                split_at = i
                valid_i = 0
            out = _lane_outputs(word, pc_i, valid_i, lambda f: self.unit.outcome(state, f),
                                cfg.target_adder)  # fmt: skip
            if out["request"]:
                served += 1
                state = lfsr.advance(state)  # the next brr reads one advance further
            # is_brr and btb_inhibit describe the word even when it waits a cycle.
            if valid[i] and decode_brr(word) is not None:
                out["is_brr"] = out["btb_inhibit"] = 1
            return out

        shown = self.unit.state
        result = _multi_lane(lane, cfg.lanes, insn, pc, valid, cfg.target_adder)
        result["split"] = int(split_at is not None)
        result["split_at"] = split_at or 0
        result["state"] = shown
        if reset:
            self.unit.step(reset=1)
        elif served:
            self.unit.step(load_valid=1, load_data=state)
        return result


def _distance_profile_kernel():
    from numba import njit

    @njit(cache=True)
    def kernel(width, middle_taps, positions, count):
        """category[D, f]: deficiency of the freq-f pair at distance D in 0..count-1
        (0, 1; 2 = two or more, or never both taken)."""
        rows = np.empty(width, dtype=np.uint64)
        for i in range(width):
            rows[i] = np.uint64(1) << np.uint64(i)
        freqs = positions.shape[0]
        category = np.zeros((count, freqs), dtype=np.int8)
        basis = np.zeros(width + 1, dtype=np.uint64)
        for distance in range(count):
            for b in range(width + 1):
                basis[b] = 0
            rank = 0
            inconsistent = False
            for f in range(freqs):
                p = positions[f]
                for which in range(2):
                    coeffs = (np.uint64(1) << np.uint64(p)) if which == 0 else rows[p]
                    v = (coeffs << np.uint64(1)) | np.uint64(1)  # bit 0: right-hand side 1
                    while v > np.uint64(1):
                        top = 63
                        while (v >> np.uint64(top)) == np.uint64(0):
                            top -= 1
                        if basis[top] == np.uint64(0):
                            basis[top] = v
                            rank += 1
                            break
                        v ^= basis[top]
                    if v == np.uint64(1):
                        inconsistent = True
                deficiency = 2 * (f + 1) - rank
                category[distance, f] = 2 if inconsistent or deficiency >= 2 else deficiency
            # One single step of the distance: rows of M^(D+1) from those of M^D.
            feedback = rows[0]
            for t in middle_taps:
                feedback ^= rows[t]
            for i in range(width - 1):
                rows[i] = rows[i + 1]
            rows[width - 1] = feedback
        return category

    return kernel


def lane_distance_categories(width: int, taps=None, positions=None, freqs: int = 10,
                             count: int | None = None) -> np.ndarray:
    """``category[D, f]`` for ``D < count`` (default all ``2^W - 1``): see
    :func:`lane_distance_profile`."""
    taps = TAPS[width] if taps is None else tuple(taps)
    positions = outcome_positions(width, taps) if positions is None else positions
    count = (1 << width) - 1 if count is None else count
    kernel = _distance_profile_kernel()
    return kernel(width, np.array(taps[1:], dtype=np.int64),
                  np.array(positions[:freqs], dtype=np.int64), count)  # fmt: skip


def lane_distance_profile(width: int, taps=None, positions=None, freqs: int = 10) -> np.ndarray:
    """Exact dependence of two lanes over every relative position of their LFSRs.

    Two lanes of one polynomial read states ``D`` single steps apart; as the
    lanes drift (each steps only on its own brr) ``D`` moves by ``lfsr_steps``
    per brr of difference, which is coprime with the period, so every ``D`` in
    ``0 .. 2^W - 2`` is reachable. ``counts[f, c]`` is the number of ``D`` whose
    freq-``f`` pair system has deficiency ``c`` (0: exactly independent; 1:
    factor 2; 2: worse or never both taken), for ``f < freqs``; rows sum to
    ``2^W - 1``. Compiled (numba), about a second for W = 20.
    """
    category = lane_distance_categories(width, taps, positions, freqs)
    return np.stack([np.bincount(category[:, f], minlength=3) for f in range(freqs)])
