"""Golden model of the deterministic brr (Lee & Zilles, CGO 2008, section 3.4).

The paper: the LFSR is updated speculatively at decode, so squashed brr lose
LFSR transitions. A deterministic implementation keeps "the bits that would
have shifted off the end of the LFSR (one additional bit per speculative
branch-on-random allowed)" and shifts back after a squash; how far is known
from "a counter of number of branch-on-randoms that have been decoded" (its
precision: the number of brr in flight), checkpointed with the rename state;
or, with reverse-execution recovery, the LFSR "shift[s] back once each time a
branch-on-random is removed from the ROB". For testing the LFSR is on a scan
chain; for software determinism it is readable and writable (context switch).

This model does **not** shift anything back. It is a bookkeeping model over the
reference sequence of a core that never squashes: ``ref(k)`` is the LFSR state
after ``k`` brr from the last reset or write (:class:`hwprof.golden.lfsr.Lfsr`
stepping once per brr). The unit is at position ``index`` = committed +
in flight, and shows ``ref(index)``. So the
property "committed brr number ``k`` saw ``ref(k)``" follows from the
bookkeeping alone, whatever the RTL does inside.

Cycle semantics (one :meth:`BrrDeterministic.step` = one clock):

* Priority: ``reset`` (seed, nothing in flight) > ``write_valid`` (CSR write:
  state <- ``write_data``) > ``scan_enable`` (state shifts one stage toward bit
  0, ``scan_in`` enters the top stage, ``scan_out`` is stage 0) > the pipeline
  inputs. A write or a scan shift is serializing: it forgets the in-flight
  brr (they must have committed or been squashed first; the counter clears).
* ``decode_valid`` with ``freq``: the brr is *accepted* unless the unit is
  ``full`` (``max_inflight`` brr in flight), a write or scan shift happens in
  the same cycle, or a squash is signalled in the same cycle (the decode-stage
  brr is younger than the squashed ones and is flushed with them). Refused for
  capacity: ``overflow`` is set (the core must stall decode); the LFSR does not move.
* ``commit`` = n: the n oldest in-flight brr retire (``n <= in flight``).
* ``squash`` = n: the n youngest in-flight brr (after this cycle's commits) are
  squashed; the state is back at the first squashed brr's position at the next
  edge. Default: the core gives the count from the checkpointed counter, any
  ``n`` per cycle (a barrel shift back). ``rob_walk`` (reverse-execution
  recovery): ``squash`` is a strobe, at most one brr per cycle, as the ROB walk
  removes them one by one (a one-step shift back).
* ``commit + squash`` greater than the brr in flight breaks the contract (the
  core lost count): ``protocol_error`` is set, and the cycle's commit, squash
  and decode take no effect (nothing is accepted, the state and the counter
  hold), so the unit never walks into a state it cannot explain.
"""

from __future__ import annotations

from dataclasses import dataclass

from .brr import Brr, BrrConfig, adopt_layout
from .lfsr import Lfsr, check_int

__all__ = [
    "MAX_INFLIGHT", "BrrDeterministicConfig", "BrrDeterministic", "ProtocolError", "count_bits",
]

MAX_INFLIGHT = 64


def count_bits(max_inflight: int) -> int:
    """Bits of a counter of 0..max_inflight."""
    return max_inflight.bit_length()


@dataclass(frozen=True)
class BrrDeterministicConfig:
    """Parameters of ``brr_deterministic``.

    Parameters
    ----------
    width, seed, positions, taps
        As :class:`hwprof.golden.brr.BrrConfig` (no lock-up escape: an escape
        from 0 is not a shift and could not be shifted back).
    max_inflight : int
        brr that may be decoded and not yet committed, 1..64 (history bits).
    rob_walk : bool
        False: shift back by any squash count at once (checkpointed counter);
        True: ``squash`` is at most 1 per cycle (a reverse-execution ROB walk).
    """

    width: int = 20
    seed: int = 1
    max_inflight: int = 8
    rob_walk: bool = False
    positions: tuple[int, ...] | None = None
    taps: tuple[int, ...] | None = None

    def __post_init__(self):
        check_int("max_inflight", self.max_inflight, 1, MAX_INFLIGHT)
        if not isinstance(self.rob_walk, bool):
            raise TypeError(f"rob_walk must be a bool, not {self.rob_walk!r}")
        adopt_layout(self, self.brr_config)

    @property
    def brr_config(self) -> BrrConfig:
        # One LFSR step per brr: the shift-back keeps one bit per brr in flight
        # (sec. 3.4), so this variant keeps the paper's register (docs/brr.md).
        return BrrConfig(width=self.width, seed=self.seed, lockup_escape=False,
                         positions=self.positions, taps=self.taps, lfsr_steps=1)  # fmt: skip


class ProtocolError(ValueError):
    """A request the ports cannot carry (a ROB walk squashing more than one brr)."""


class BrrDeterministic:
    """Cycle model of ``brr_deterministic`` (module docstring).

    Outputs of :meth:`step`: ``taken``, ``accept``, ``redirect`` (accept and
    taken), ``overflow``, ``protocol_error``, ``full``, ``inflight``, ``state``,
    ``scan_out``.
    """

    def __init__(self, config: BrrDeterministicConfig | None = None, **params):
        self.config = config if config is not None else BrrDeterministicConfig(**params)
        self._outcome = Brr(self.config.brr_config).outcome
        self._restart(self.config.seed)

    def _restart(self, base: int) -> None:
        self._ref = Lfsr(self.config.brr_config.lfsr)
        self._ref.state = base
        self._states = [base]  # ref(0), ref(1), ... as far as needed
        self._index = 0  # committed + in flight + pending, since the restart
        self.inflight = 0

    def ref(self, k: int) -> int:
        """State after ``k`` brr of a core that never squashes."""
        while len(self._states) <= k:
            self._ref.step(enable=True)
            self._states.append(self._ref.state)
        return self._states[k]

    @property
    def state(self) -> int:
        return self.ref(self._index)

    def step(self, *, decode_valid=0, freq=0, commit=0, squash=0, write_valid=0,
             write_data=0, scan_enable=0, scan_in=0, reset=0) -> dict:  # fmt: skip
        cfg = self.config
        state = self.state
        full = self.inflight >= cfg.max_inflight
        taken = self._outcome(state, freq)
        serial = write_valid or scan_enable  # software access owns this cycle
        if cfg.rob_walk and squash > 1:
            raise ProtocolError(f"a ROB walk removes one brr per cycle, not {squash}")
        lost_count = not serial and commit + squash > self.inflight
        accept = int(bool(decode_valid) and not full and not squash and not serial
                     and not lost_count)  # fmt: skip
        out = {
            "taken": taken, "accept": accept, "redirect": int(accept and taken),
            "overflow": int(bool(decode_valid) and full),
            "protocol_error": int(lost_count), "full": int(full),
            "inflight": self.inflight, "state": state,
            "scan_out": state & 1,
        }  # fmt: skip
        if reset:
            self._restart(cfg.seed)
            return out
        if write_valid:
            self._restart(write_data & ((1 << cfg.width) - 1))
            return out
        if scan_enable:
            self._restart((state >> 1) | ((scan_in & 1) << (cfg.width - 1)))
            return out
        if lost_count:
            return out
        self.inflight -= commit + squash
        self._index -= squash
        if accept:
            self.inflight += 1
            self._index += 1
        return out
