"""Sampling stream compressors of Sastry, Bodik & Smith, "Rapid Profiling via
Stratified Sampling" (sections 3.1-3.5), as golden models.

Every component consumes a stream of *tuples* (one integer ``key`` of
``key_bits`` bits; a ``<pc, value>`` tuple is ``(pc << value_bits) | value`` as in
:func:`hwprof.golden.hashing.pack_key`) and produces a stream of *messages*
``(key, count)``: "``count`` occurrences of ``key``" for software.

Components (paper notation):

``RandomSampler`` -- ``R_r``
    Selects each tuple independently with probability ``1/r``; message
    ``(key, r)`` (the count is implied, sec. 3.3). Randomness: a 32-bit
    Fibonacci LFSR (:mod:`hwprof.golden.lfsr`) advanced 16 steps per accepted
    tuple, so every decision reads 16 fresh bits ``u`` (the low 16 stages of the
    state shown in that cycle); selected when ``u < threshold`` with
    ``threshold = round(65536 / r)``, i.e. probability ``threshold / 65536``.
``CountdownSampler`` -- the countdown random sampler of [2, 15, 33]
    A countdown register "initialized with a random number from the interval
    ``<1, 2r>``" (sec. 3.1): at reset and on each selection it is loaded with a
    random gap ``1 + ((u * 2r) >> 16)`` in ``<1, 2r>``, ``2r`` folded to ``r``
    (:func:`countdown_reload`; the LFSR advances 16 steps after each draw and at
    no other time). Each tuple decrements it; the tuple that finds it at 1 is
    selected (message ``(key, r)``) and the register is reloaded. The draw at
    reset reads the LFSR after ``COUNTDOWN_WARMUP`` (2) advances: the first two
    16-bit windows are the seed's own low and high halves, not random (a seed
    below 3277 would give the gap 1 at ``r = 10``), the third is the first the
    LFSR's feedback fills. The reload value is the gap to the next selection,
    so its mean must be ``r`` for the implied count ``r`` to be unbiased: the
    paper's interval ``<1, 2r>`` (sec. 3.1, quoting [2, 15, 33]) read as the
    integers ``1..2r`` has mean ``r + 1/2`` (a ``-1/(2r + 1)`` bias of every
    estimate, -4.8% at ``r = 10``); folding ``2r`` onto ``r`` makes the mean
    exactly ``r`` (for a power-of-two ``r``) at the cost of a compare and a mux.
``PeriodicSampler`` -- ``P_r``
    Selects every ``r``-th tuple: a counter ``0..r-1``; the tuple that brings it
    to ``r`` is selected (message ``(key, r)``) and the counter returns to 0.
``Counter`` -- ``C``
    Counts the input stream. Stand-alone it reports only when its
    ``count_bits``-bit counter saturates: the tuple that brings the count to
    ``2**count_bits - 1`` is sent with that count and the counter restarts.
``CountingRandomSampler`` -- ``CR_r``
    ``R_r`` (same LFSR rule) with a ``C``: a selected tuple is sent with the
    number of tuples since the previous message, itself included (sec. 3.3,
    "the count since the last sample was taken"); a saturating counter sends the
    tuple that saturates it the same way.
``Stratified`` -- ``H[X_r]_n``
    The shared profiler hash (:class:`hwprof.golden.hashing.HashFunction`, table
    seed ``hash_seed``) splits the stream into ``n = entries`` substreams, each
    with its own sampler ``X``: ``"periodic"`` (``H[P_r]_n``: a table of ``n``
    counters, a message ``(key, r)`` when a counter reaches ``r``, then it resets
    to 0; sec. 3.5), ``"random"`` (``H[R_r]_n``: one LFSR serves every substream,
    the sampler being stateless) or ``"cr"`` (``H[CR_r]_n``: one LFSR and a table
    of ``n`` counters of ``count_bits`` bits).

Count preservation: ``C``, ``P_r``, ``CR_r``, ``H[P_r]_n``, ``H[CR_r]_n`` (and the
tagged compressor, ``A_k``) keep the exact length of the stream: the counts of
all messages plus :meth:`residual` (what the tables still hold) is the number of
tuples consumed. ``R_r``, the countdown sampler and ``H[R_r]_n`` estimate it.

Cycle model (shared with the RTL): one tuple per cycle through a one-message
output register (:class:`StreamStage`). In a cycle, ``in_ready = ~out_valid |
out_ready``; an accepted tuple updates the sampler at the clock edge and its
message, if any, is in the output register (``out_valid``) from the next cycle.
So the input stalls only while a message waits in the register and the consumer
does not take it. Pipelined blocks (``latency`` > 1: ``H[X]_n``, ``A_k``, the
tagged compressor) update their tables at acceptance, in order, and their
messages reach the output register ``latency`` cycles later; ``skid`` adds a
:class:`SkidBuffer` after it (registered handshake, one more cycle).

:func:`figure4_estimates` is the vectorized (numpy) Monte Carlo of Figure 4.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hashing import HashFunction
from .lfsr import Lfsr, check_int

__all__ = [
    "RAND_BITS",
    "random_bits",
    "LFSR_WIDTH",
    "StreamStage",
    "SkidBuffer",
    "RandomSampler",
    "CountdownSampler",
    "PeriodicSampler",
    "Counter",
    "CountingRandomSampler",
    "Stratified",
    "Pipeline",
    "same_index_keys",
    "random_threshold",
    "check_latency",
    "countdown_reload",
    "COUNTDOWN_WARMUP",
    "check_int",
    "figure4_estimates",
    "FIGURE4_SAMPLERS",
    "FIGURE4_EXTRA",
]

#: Random bits per decision, and the LFSR that supplies them (advanced RAND_BITS steps).
RAND_BITS = 16
LFSR_WIDTH = 32
MAX_KEY_BITS = 128


def check_power_of_two(name: str, value, low: int, high: int) -> int:
    check_int(name, value, low, high)
    if value & (value - 1):
        raise ValueError(f"{name} must be a power of two, not {value!r}")
    return value


def check_latency(latency, allowed: tuple[int, ...]) -> int:
    """A pipeline latency option: one of ``allowed`` (the text the RTL shares)."""
    if latency not in allowed:
        choices = " or ".join(str(a) for a in allowed)
        raise ValueError(f"latency must be {choices}, not {latency!r}")
    return latency


def random_threshold(rate: int) -> int:
    """``R_r`` selects when the 16 random bits are below this (probability ~ 1/r)."""
    return max(1, round((1 << RAND_BITS) / rate))


def countdown_reload(u: int, rate: int) -> int:
    """A random gap from the 16 random bits ``u``: ``<1, 2r>`` with ``2r`` folded to ``r``.

    ``g = 1 + floor(u 2r / 2**16)`` is the paper's interval ``<1, 2r>`` (sec. 3.1),
    uniform when ``2r`` divides ``2**16``; its mean ``r + 1/2`` would make every
    message's claimed count ``r`` low by ``1/(2r + 1)``. The top value ``2r`` is
    replaced by ``r``: the gaps are ``1..2r - 1``, ``r`` twice as likely as the
    others, and the mean is ``r + 1/2 - r/(2r) = r`` exactly (for a power-of-two
    ``r``; within ``2r/2**16`` otherwise). In hardware a compare and a mux.
    """
    gap = 1 + ((u * 2 * rate) >> RAND_BITS)
    return rate if gap == 2 * rate else gap


#: LFSR advances the countdown sampler makes at reset before it draws its first countdown:
#: the 16-bit windows ``u`` of the seed itself (its low, then its high half) are skipped.
COUNTDOWN_WARMUP = 2


def _lfsr(seed: int) -> Lfsr:
    return Lfsr(width=LFSR_WIDTH, seed=seed, steps=RAND_BITS)


def random_bits(lfsr: Lfsr) -> int:
    """The ``RAND_BITS`` low bits of ``lfsr``'s state: the number a sampler draws."""
    return lfsr.state & ((1 << RAND_BITS) - 1)


class StreamStage:
    """Cycle model of a stream-in/stream-out component with a one-message output register.

    Subclasses implement :meth:`process` (one accepted input -> a message or None)
    and :meth:`residual`. ``messages`` logs every message produced.
    """

    count_bits: int

    def __init__(self, latency: int = 1, skid: bool = False):
        self.out_valid = 0
        self.out_key = 0
        self.out_count = 0
        self.messages: list[tuple[int, int]] = []
        self.consumed = 0
        #: cycles from a tuple's acceptance to its message in the output register
        self.latency = latency
        self.in_flight: list = [None] * (latency - 1)  # messages (or None) of the tuples ahead
        #: ``skid``: a :class:`SkidBuffer` after the output register (registered handshake)
        self.skid = SkidBuffer() if skid else None

    def process(self, key: int, count: int = 1):  # pragma: no cover - abstract
        raise NotImplementedError

    def residual(self) -> int:
        """Total count still held in the component's tables (not yet reported)."""
        return 0

    def feed(self, key: int, count: int = 1):
        """Functional use (no cycles): process one input, log and return its message."""
        self.consumed += count
        message = self.process(key, count)
        if message is not None:
            self.messages.append(message)
        return message

    def in_ready(self, out_ready: int) -> int:
        return int(not self.out_valid or out_ready)

    def _register_outputs(self, out_ready: int) -> dict:
        return {
            "in_ready": self.in_ready(out_ready),
            "out_valid": self.out_valid,
            "out_key": self.out_key,
            "out_count": self.out_count,
        }

    def outputs(self, out_ready: int) -> dict:
        """The outputs shown in a cycle (before the edge), from the state alone."""
        if self.skid is None:
            return self._register_outputs(out_ready)
        shown = self.skid.outputs(out_ready)
        return {**shown, "in_ready": self.in_ready(shown["in_ready"])}

    def step(self, in_valid=0, in_key=0, in_count=1, out_ready=1) -> dict:
        """One clock cycle; returns the outputs shown during it (before the edge).

        The input is accepted when ``in_ready = ~out_valid | out_ready``, i.e. when
        the output register is free after the edge; then every stage advances: the
        accepted tuple is processed at once (the tables are updated in order) and
        its message, if any, enters the output register ``latency`` cycles after
        acceptance (``latency - 1`` cycles in ``in_flight``, which moves only
        with the input). With ``skid`` the output register feeds a
        :class:`SkidBuffer`, whose registered ``in_ready`` stands for
        ``out_ready``.
        """
        if self.skid is not None:
            shown = self.skid.outputs(out_ready)
            inner = self._step_register(in_valid, in_key, in_count, shown["in_ready"])
            self.skid.step(inner["out_valid"], inner["out_key"], inner["out_count"], out_ready)
            return {**shown, "in_ready": inner["in_ready"]}
        return self._step_register(in_valid, in_key, in_count, out_ready)

    def _step_register(self, in_valid, in_key, in_count, out_ready) -> dict:
        shown = self._register_outputs(out_ready)
        if shown["in_ready"]:  # the output register is free after this edge
            self.in_flight.append(self.feed(in_key, in_count) if in_valid else None)
            message = self.in_flight.pop(0)
            self.out_valid = int(message is not None)
            if message is not None:
                self.out_key, self.out_count = message
        return shown


class SkidBuffer:
    """Two-entry skid buffer: a stream stage whose handshake outputs are flops.

    ``in_ready = ~skid_valid`` and ``out_valid = main_valid`` are registers, so no
    combinational path runs from ``out_ready`` to ``in_ready`` or from ``in_valid``
    to ``out_valid``. A message taken in cycle c is shown from c + 1. The main
    register is the output; a message that arrives while the main register is held
    (``out_valid`` and not ``out_ready``) waits in the skid register, and then
    ``in_ready`` falls for as long as the skid register is full. Messages leave in
    order, none lost or duplicated.
    """

    def __init__(self):
        self.main = None  # (key, count) shown on the output, or None
        self.spare = None  # the skid register
        self.last = (0, 0)

    def outputs(self, out_ready: int) -> dict:
        head = self.main if self.main is not None else self.last
        return {"in_ready": int(self.spare is None), "out_valid": int(self.main is not None),
                "out_key": head[0], "out_count": head[1]}  # fmt: skip

    def step(self, in_valid=0, in_key=0, in_count=1, out_ready=1) -> dict:
        shown = self.outputs(out_ready)
        incoming = (in_key, in_count) if in_valid and shown["in_ready"] else None
        if self.main is None or out_ready:  # the main register is free after the edge
            if self.main is not None:
                self.last = self.main
            self.main, self.spare = (self.spare, None) if self.spare is not None \
                else (incoming, None)
        elif incoming is not None:
            self.spare = incoming
        return shown


@dataclass(frozen=True)
class SamplerConfig:
    """Validated parameters shared by the samplers.

    Parameters
    ----------
    rate : int
        Sampling rate ``r``, 2..65536 (unused by ``C``).
    key_bits : int
        Tuple width, 1..128.
    seed : int
        Reset state of the 32-bit LFSR (random samplers), non-zero.
    count_bits : int
        Counter width of ``C`` and ``CR_r``, 2..32; ``CR_r`` needs
        ``2**count_bits - 1 >= rate``.
    """

    rate: int = 256
    key_bits: int = 64
    seed: int = 1
    count_bits: int = 16

    def __post_init__(self):
        check_int("rate", self.rate, 2, 1 << 16)
        check_int("key_bits", self.key_bits, 1, MAX_KEY_BITS)
        check_int("seed", self.seed, 1, (1 << LFSR_WIDTH) - 1)
        check_int("count_bits", self.count_bits, 2, 32)

    @property
    def rate_bits(self) -> int:
        """Width of a message count ``r``."""
        return self.rate.bit_length()


class RandomSampler(StreamStage):
    """``R_r``: each tuple selected with probability ``random_threshold(r) / 2**16``."""

    def __init__(self, rate=256, key_bits=64, seed=1):
        super().__init__()
        self.config = SamplerConfig(rate=rate, key_bits=key_bits, seed=seed)
        self.count_bits = self.config.rate_bits
        self.threshold = random_threshold(rate)
        self.lfsr = _lfsr(seed)

    def process(self, key, count=1):
        selected = random_bits(self.lfsr) < self.threshold
        self.lfsr.step(enable=True)
        return (key, self.config.rate) if selected else None


class CountdownSampler(StreamStage):
    """Countdown random sampler: register loaded at reset and on every selection with a
    random gap in ``<1, 2r - 1>`` (mean r)."""

    def __init__(self, rate=256, key_bits=64, seed=1):
        super().__init__()
        self.config = SamplerConfig(rate=rate, key_bits=key_bits, seed=seed)
        self.count_bits = self.config.rate_bits
        self.lfsr = _lfsr(seed)
        for _ in range(COUNTDOWN_WARMUP):
            self.lfsr.step(enable=True)
        self.countdown = self._draw()

    def _draw(self) -> int:
        """A random gap from the LFSR's 16 bits, then the LFSR advances (reset, reload)."""
        gap = countdown_reload(random_bits(self.lfsr), self.config.rate)
        self.lfsr.step(enable=True)
        return gap

    def process(self, key, count=1):
        if self.countdown == 1:
            self.countdown = self._draw()
            return key, self.config.rate
        self.countdown -= 1
        return None


class PeriodicSampler(StreamStage):
    """``P_r``: every ``r``-th tuple, message ``(key, r)``."""

    def __init__(self, rate=256, key_bits=64):
        super().__init__()
        self.config = SamplerConfig(rate=rate, key_bits=key_bits)
        self.count_bits = self.config.rate_bits
        self.counter = 0

    def process(self, key, count=1):
        self.counter += 1
        if self.counter == self.config.rate:
            self.counter = 0
            return key, self.config.rate
        return None

    def residual(self):
        return self.counter


class Counter(StreamStage):
    """``C``: counts the stream; reports ``(key, 2**count_bits - 1)`` when it saturates."""

    def __init__(self, count_bits=16, key_bits=64):
        super().__init__()
        self.config = SamplerConfig(key_bits=key_bits, count_bits=count_bits)
        self.count_bits = count_bits
        self.counter = 0

    def process(self, key, count=1):
        self.counter += 1
        if self.counter == (1 << self.count_bits) - 1:
            self.counter = 0
            return key, (1 << self.count_bits) - 1
        return None

    def residual(self):
        return self.counter


class CountingRandomSampler(StreamStage):
    """``CR_r``: ``R_r`` plus a counter; a message carries the count since the last one."""

    def __init__(self, rate=256, count_bits=16, key_bits=64, seed=1):
        super().__init__()
        self.config = SamplerConfig(rate=rate, key_bits=key_bits, seed=seed,
                                    count_bits=count_bits)  # fmt: skip
        if (1 << count_bits) - 1 < rate:
            raise ValueError(f"count_bits must hold the rate {rate}, not {count_bits}")
        self.count_bits = count_bits
        self.threshold = random_threshold(rate)
        self.lfsr = _lfsr(seed)
        self.counter = 0

    def process(self, key, count=1):
        selected = random_bits(self.lfsr) < self.threshold
        self.lfsr.step(enable=True)
        self.counter += 1
        if selected or self.counter == (1 << self.count_bits) - 1:
            message, self.counter = (key, self.counter), 0
            return message
        return None

    def residual(self):
        return self.counter


STRATIFIED_SAMPLERS = ("periodic", "random", "cr")


@dataclass(frozen=True)
class StratifiedConfig:
    """Validated parameters of ``H[X_r]_n``.

    Parameters
    ----------
    rate : int
        ``r``, 2..65536.
    entries : int
        ``n`` substreams (counters), a power of two, 2..2**20.
    key_bits, pc_bits : int
        Tuple width and the width of its pc field (top bits; 0: a plain value).
    hash_seed : int
        Table seed of the shared hash (:class:`hwprof.golden.hashing.HashFunction`).
    sampler : str
        ``"periodic"`` (default), ``"random"`` or ``"cr"``.
    seed, count_bits : int
        LFSR seed (``random``, ``cr``) and counter width (``cr``).
    """

    rate: int = 256
    entries: int = 2048
    key_bits: int = 64
    pc_bits: int = 32
    hash_seed: int = 1
    sampler: str = "periodic"
    seed: int = 1
    count_bits: int = 16

    def __post_init__(self):
        SamplerConfig(rate=self.rate, key_bits=self.key_bits, seed=self.seed,
                      count_bits=self.count_bits)  # fmt: skip
        check_power_of_two("entries", self.entries, 2, 1 << 20)
        check_int("pc_bits", self.pc_bits, 0, self.key_bits - 1)
        check_int("hash_seed", self.hash_seed, 0)
        if self.sampler not in STRATIFIED_SAMPLERS:
            raise ValueError(
                f"sampler must be one of {', '.join(STRATIFIED_SAMPLERS)}, not {self.sampler!r}"
            )

    @property
    def index_bits(self) -> int:
        return self.entries.bit_length() - 1

    @property
    def counter_bits(self) -> int:
        """Width of one ``H[P_r]_n`` counter (0..r-1)."""
        return (self.rate - 1).bit_length()


class Stratified(StreamStage):
    """``H[X_r]_n``: hash-split into ``n`` substreams, one sampler ``X`` each.

    ``latency`` (3, the RTL's default, or 1) and ``skid`` are the cycle model's
    options (:class:`StreamStage`); they change when a message appears, never which
    messages (the table is updated in the accept order). ``H[R_r]_n`` has no table
    and its latency is 1 whatever ``latency`` says (as in the RTL).
    """

    def __init__(self, rate=256, entries=2048, key_bits=64, pc_bits=32, hash_seed=1,
                 sampler="periodic", seed=1, count_bits=16, latency=3, skid=False):  # fmt: skip
        check_latency(latency, (1, 3))
        super().__init__(latency=1 if sampler == "random" else latency, skid=skid)
        self.config = c = StratifiedConfig(rate, entries, key_bits, pc_bits, hash_seed,
                                           sampler, seed, count_bits)  # fmt: skip
        self.hash = HashFunction(c.index_bits, c.key_bits, c.hash_seed, c.pc_bits)
        self.table = [0] * entries
        self.count_bits = count_bits if sampler == "cr" else c.rate.bit_length()
        self.threshold = random_threshold(rate)
        self.lfsr = _lfsr(seed)

    def process(self, key, count=1):
        c = self.config
        index = self.hash(key)
        if c.sampler == "periodic":
            self.table[index] += 1
            if self.table[index] == c.rate:
                self.table[index] = 0
                return key, c.rate
            return None
        selected = random_bits(self.lfsr) < self.threshold
        self.lfsr.step(enable=True)
        if c.sampler == "random":
            return (key, c.rate) if selected else None
        self.table[index] += 1
        if selected or self.table[index] == (1 << c.count_bits) - 1:
            message, self.table[index] = (key, self.table[index]), 0
            return message
        return None

    def residual(self):
        return 0 if self.config.sampler == "random" else sum(self.table)


def same_index_keys(hash_function, count: int, start: int) -> list[int]:
    """``count`` keys from ``start`` upward that ``hash_function`` maps to one index
    (``start``'s): tuples that share one counter of ``H[X]_n`` (back-to-back hazards)."""
    target, keys, key = hash_function(start), [start], start + 1
    while len(keys) < count:
        if hash_function(key) == target:
            keys.append(key)
        key += 1
    return keys


class Pipeline:
    """Cycle model of components chained by valid/ready streams (``H[P_r]_n A_k`` + buffer).

    ``stages`` are :class:`StreamStage`-like objects with ``outputs(out_ready)`` and
    ``step(...)``. Ready is combinational from the last stage backwards, as in the
    RTL; every transfer of a cycle is computed from the state before the edge.
    """

    def __init__(self, stages):
        self.stages = list(stages)

    def step(self, in_valid=0, in_key=0, in_count=1, out_ready=1) -> dict:
        readies = [0] * len(self.stages)
        shown = [None] * len(self.stages)
        ready = out_ready
        for i in range(len(self.stages) - 1, -1, -1):
            readies[i] = ready
            shown[i] = self.stages[i].outputs(ready)
            ready = shown[i]["in_ready"]
        inputs = [(in_valid, in_key, in_count)]
        for s in shown[:-1]:
            inputs.append((s["out_valid"], s["out_key"], s["out_count"]))
        for stage, (valid, key, count), ready in zip(self.stages, inputs, readies, strict=True):
            stage.step(in_valid=valid, in_key=key, in_count=count, out_ready=ready)
        result = dict(shown[-1])
        result["in_ready"] = shown[0]["in_ready"]
        result["stages"] = shown
        return result


# --- Figure 4: vectorized Monte Carlo ---------------------------------------------------

FIGURE4_SAMPLERS = ("R", "P", "CR", "H[R]", "H[P]", "H[CR]")
#: The paper's scoring of the counter samplers (sec. 3.3: "the sum of *count*'s from all
#: messages that contain the tuple p", see :func:`_cr_estimate`), reported beside the
#: ratio estimator.
FIGURE4_EXTRA = ("CR-gaps", "H[CR]-gaps")


def _cr_estimate(is_p: np.ndarray, selected: np.ndarray, ratio: bool = True) -> np.ndarray:
    """``CR_r`` estimates of ``p``'s count, per row (one run per row).

    A ``CR_r`` message carries the number of tuples since the previous message,
    itself included, so software knows the exact length ``L`` of the stream it has
    seen reported (the sum of all counts) and the number ``K`` of samples.
    ``ratio=True`` (Figure 4's ``CR``, sec. 3.1: "``CR_r`` has access to the same
    information as ``P``"): ``EST = i * L / K`` for ``i`` samples of ``p``.
    ``ratio=False``: the literal "sum of the counts of the messages that contain
    ``p``" of sec. 3.3 (each sample credited with its own gap). Tuples after the
    last sample stay in the counter, unreported.
    """
    runs, length = is_p.shape
    positions = np.broadcast_to(np.arange(length), (runs, length))
    marks = np.where(selected, positions, -1)
    last = np.maximum.accumulate(marks, axis=1)
    if not ratio:
        previous = np.concatenate([np.full((runs, 1), -1), last[:, :-1]], axis=1)
        return np.where(selected & is_p, positions - previous, 0).sum(axis=1)
    reported = last[:, -1] + 1
    samples = selected.sum(axis=1)
    hits = (selected & is_p).sum(axis=1)
    return np.where(samples > 0, hits * reported / np.maximum(samples, 1), 0.0)


def _permuted_rows(rng, runs: int, ones: int, length: np.ndarray | int) -> np.ndarray:
    """``runs`` random permutations of ``ones`` True and ``length - ones`` False.

    ``length`` may vary per row (then rows are padded with False after their end).
    """
    length = np.broadcast_to(np.asarray(length), (runs,))
    width = int(length.max())
    keys = rng.random((runs, width))
    keys[np.arange(width)[None, :] >= length[:, None]] = 2.0  # padding sorts last
    order = np.argsort(keys, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(width)[None, :].repeat(runs, 0), axis=1)
    return rank < ones


def figure4_estimates(sampler: str, length: int, rate: int, runs: int, rng,
                      substreams: int = 4, share: float = 0.3) -> np.ndarray:  # fmt: skip
    """Estimates ``EST`` of ``t = share * length`` over ``runs`` random permutations.

    The stream: ``t`` copies of the tuple ``p`` and ``length - t`` other tuples,
    randomly permuted (sec. 3.3). The others are distinct, so a uniform hash puts
    each into ``p``'s substream with probability ``1/substreams``: ``m ~
    Binomial(length - t, 1/substreams)`` of them. Only ``p``'s substream (a random
    permutation of its ``t + m`` tuples) matters for ``p``'s estimate. Exact
    shortcuts: ``P_r`` selects positions ``r, 2r, ...`` of a random permutation, a
    uniformly random subset, so its ``p`` count is hypergeometric; ``R_r`` and
    ``H[R_r]_n`` select each tuple independently (binomial). ``CR_r`` and
    ``H[CR_r]_n`` are simulated tuple by tuple (:func:`_cr_estimate`);
    ``"CR-gaps"`` and ``"H[CR]-gaps"`` are ``CR_r`` and ``H[CR_r]_n`` scored the
    paper's way (the sum of the message counts of ``p``).
    """
    known = FIGURE4_SAMPLERS + FIGURE4_EXTRA
    if sampler not in known:
        raise ValueError(f"sampler must be one of {', '.join(known)}, not {sampler!r}")
    t = int(round(share * length))
    others = length - t
    if sampler.startswith("H["):
        m = rng.binomial(others, 1.0 / substreams, size=runs)
        close = sampler.index("]")
        base = sampler[2:close] + sampler[close + 1 :]
    else:
        m = np.full(runs, others)
        base = sampler
    if base == "R":
        return rng.binomial(t, 1.0 / rate, size=runs) * rate
    if base == "P":
        size = (t + m) // rate
        return rng.hypergeometric(t, m, size) * rate
    is_p = _permuted_rows(rng, runs, t, t + m)
    selected = rng.random(is_p.shape) < 1.0 / rate
    return _cr_estimate(is_p, selected, ratio=base == "CR")
