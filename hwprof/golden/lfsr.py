"""Golden model of a maximal-length linear feedback shift register (LFSR).

Conventions (shared by the RTL in ``hwprof.rtl.lfsr``, which reads only the tap
table from here):

* ``TAPS[n]`` lists the exponents of the feedback polynomial
  ``p(x) = x^n + sum(x^t for t in taps[1:]) + 1``; ``taps[0] == n``. The numbers
  are those of the table of Xilinx application note XAPP052 (Alfke, 1996) for
  3..64 bits, read as exponents; every entry is checked to be primitive by
  ``tests/test_lfsr_golden.py``. XAPP052 numbers the *stages* XORed into the
  input stage, counting from the input, and so do Lee & Zilles (sec. 4.2: the
  bits "XORed to compute the input to the LFSR (bit 0)", e.g. (32, 31, 30, 10));
  stage ``s`` is exponent ``n - s`` here, so stage numbers read as exponents give
  the reciprocal polynomial (the same sequence run backwards). The paper's
  (32, 31, 30, 10) is our ``TAPS[32]`` = (32, 22, 2, 1);
  ``hwprof.experiments.brr_accuracy.paper_stage_taps`` converts.
* The state is an ``n``-bit integer; bit ``i`` is stage ``i``.
* **Fibonacci** form: all stages shift toward bit 0 and bit ``n-1`` takes the XOR
  of stage 0 and of stage ``t`` for every middle exponent ``t`` (this is the
  recurrence ``a[k+n] = a[k] + sum a[k+t]`` whose characteristic polynomial is
  ``p``). The paper's Figure 6 shifts the same way (right, the XOR entering the
  left-most bit), but its taps are "the right two bits": exponents (4, 1), which
  update 0110 to 1011 as the figure shows; ``TAPS[4] = (4, 3)`` gives 0011.
  (Read as stage numbers, XAPP052's 4-bit (4, 3) is Figure 6's register.)
* **Galois** form: the state is a polynomial ``r(x)`` and one step computes
  ``r(x) * x mod p(x)``: shift toward bit ``n-1``; when bit ``n-1`` falls out, XOR
  the low terms of ``p`` back in.
* Both forms visit all ``2^n - 1`` non-zero states. The all-zero state is the
  lock-up state: a plain LFSR stays in it forever. With ``lockup_escape`` the
  register leaves it on the next advance by going to state 1.
* ``steps`` (k) is how many LFSR steps one *advance* (one enabled clock) makes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .gf2 import is_primitive

__all__ = [
    "TAPS",
    "check_int",
    "MIN_WIDTH",
    "MAX_WIDTH",
    "FORMS",
    "polynomial",
    "LfsrConfig",
    "Lfsr",
    "fibonacci_step",
    "galois_step",
]

#: Feedback taps, XAPP052 table: ``TAPS[n] = (n, t1, t2, ...)``.
TAPS: dict[int, tuple[int, ...]] = {
    3: (3, 2), 4: (4, 3), 5: (5, 3), 6: (6, 5), 7: (7, 6), 8: (8, 6, 5, 4),
    9: (9, 5), 10: (10, 7), 11: (11, 9), 12: (12, 6, 4, 1), 13: (13, 4, 3, 1),
    14: (14, 5, 3, 1), 15: (15, 14), 16: (16, 15, 13, 4), 17: (17, 14),
    18: (18, 11), 19: (19, 6, 2, 1), 20: (20, 17), 21: (21, 19), 22: (22, 21),
    23: (23, 18), 24: (24, 23, 22, 17), 25: (25, 22), 26: (26, 6, 2, 1),
    27: (27, 5, 2, 1), 28: (28, 25), 29: (29, 27), 30: (30, 6, 4, 1),
    31: (31, 28), 32: (32, 22, 2, 1), 33: (33, 20), 34: (34, 27, 2, 1),
    35: (35, 33), 36: (36, 25), 37: (37, 5, 4, 3, 2, 1), 38: (38, 6, 5, 1),
    39: (39, 35), 40: (40, 38, 21, 19), 41: (41, 38), 42: (42, 41, 20, 19),
    43: (43, 42, 38, 37), 44: (44, 43, 18, 17), 45: (45, 44, 42, 41),
    46: (46, 45, 26, 25), 47: (47, 42), 48: (48, 47, 21, 20), 49: (49, 40),
    50: (50, 49, 24, 23), 51: (51, 50, 36, 35), 52: (52, 49),
    53: (53, 52, 38, 37), 54: (54, 53, 18, 17), 55: (55, 31),
    56: (56, 55, 35, 34), 57: (57, 50), 58: (58, 39), 59: (59, 58, 38, 37),
    60: (60, 59), 61: (61, 60, 46, 45), 62: (62, 61, 6, 5), 63: (63, 62),
    64: (64, 63, 61, 60),
}  # fmt: skip

MIN_WIDTH = min(TAPS)
MAX_WIDTH = max(TAPS)
FORMS = ("fibonacci", "galois")


def polynomial(taps: tuple[int, ...]) -> int:
    """The feedback polynomial of ``taps`` as an int (bit i = coefficient of x^i)."""
    poly = 1
    for t in taps:
        poly |= 1 << t
    return poly


def fibonacci_step(state: int, width: int, taps: tuple[int, ...]) -> int:
    """One Fibonacci step: shift toward bit 0, feedback into bit ``width-1``."""
    feedback = state & 1
    for t in taps[1:]:
        feedback ^= (state >> t) & 1
    return (state >> 1) | (feedback << (width - 1))


def galois_step(state: int, width: int, taps: tuple[int, ...]) -> int:
    """One Galois step: ``state * x mod p(x)``."""
    carry = (state >> (width - 1)) & 1
    state = (state << 1) & ((1 << width) - 1)
    if carry:
        state ^= polynomial(taps) & ((1 << width) - 1)
    return state


_STEP = {"fibonacci": fibonacci_step, "galois": galois_step}


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    """``value`` if it is an integer in ``low..high`` (no upper bound if None), else a
    ``TypeError``/``ValueError`` with the project's text ("width must be between 3
    and 64, not 2")."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {bound}, not {value!r}")
    return value


@dataclass(frozen=True)
class LfsrConfig:
    """Validated parameters of one LFSR.

    Parameters
    ----------
    width : int
        Number of stages, ``MIN_WIDTH..MAX_WIDTH`` (3..64).
    seed : int
        Reset state; any non-zero ``width``-bit value.
    steps : int
        LFSR steps made per advance (``k >= 1``), for superscalar use.
    form : str
        ``"fibonacci"`` or ``"galois"``.
    taps : tuple of int, optional
        Feedback exponents, ``taps[0] == width``; default ``TAPS[width]``. Custom
        taps must give a primitive polynomial.
    lockup_escape : bool
        Leave the all-zero state on the next advance (go to state 1).

    Raises
    ------
    TypeError, ValueError
        On any parameter outside the ranges above.
    """

    width: int = 20
    seed: int = 1
    steps: int = 1
    form: str = "fibonacci"
    taps: tuple[int, ...] | None = None
    lockup_escape: bool = True

    def __post_init__(self):
        check_int("width", self.width, MIN_WIDTH, MAX_WIDTH)
        check_int("steps", self.steps, 1)
        check_int("seed", self.seed, 0, (1 << self.width) - 1)
        if self.seed == 0:
            raise ValueError(
                "seed must be non-zero: the all-zero state is the LFSR's lock-up state"
            )
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {', '.join(FORMS)}, not {self.form!r}")
        if not isinstance(self.lockup_escape, bool):
            raise TypeError(f"lockup_escape must be a bool, not {self.lockup_escape!r}")
        if self.taps is None:
            object.__setattr__(self, "taps", TAPS[self.width])
        else:
            taps = tuple(self.taps)
            if (
                not taps
                or taps[0] != self.width
                or any(isinstance(t, bool) or not isinstance(t, int) for t in taps)
                or any(not 0 < t < self.width for t in taps[1:])
                or len(set(taps)) != len(taps)
            ):
                raise ValueError(
                    f"taps must start with the width {self.width} and list distinct "
                    f"exponents between 1 and {self.width - 1}, not {self.taps!r}"
                )
            if not is_primitive(polynomial(taps)):
                raise ValueError(f"taps {taps!r} do not give a primitive polynomial")
            object.__setattr__(self, "taps", taps)

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def step(self, state: int) -> int:
        """One single LFSR step of ``state`` (no lock-up escape)."""
        return _STEP[self.form](state, self.width, self.taps)

    def advance(self, state: int) -> int:
        """The state after one advance: ``steps`` single steps, with the escape."""
        if state == 0 and self.lockup_escape:
            return 1
        for _ in range(self.steps):
            state = self.step(state)
        return state


class Lfsr:
    """Cycle model of the LFSR component.

    One call of :meth:`step` is one clock edge. Priority: ``reset`` (state <- seed),
    then ``load`` (state <- ``load_data``, any value including 0), then
    ``enable`` (one advance). :attr:`state` is the register value before the edge,
    which is what the RTL's ``state`` port shows during that cycle.
    """

    def __init__(self, config: LfsrConfig | None = None, **params):
        self.config = config if config is not None else LfsrConfig(**params)
        self.state = self.config.seed

    def step(self, *, enable=False, load=False, load_data=0, reset=False) -> int:
        """Clock once; return the state shown during the cycle (before the edge)."""
        shown = self.state
        if reset:
            self.state = self.config.seed
        elif load:
            self.state = load_data & self.config.mask
        elif enable:
            self.state = self.config.advance(self.state)
        return shown

    def sequence(self, count: int) -> list[int]:
        """The next ``count`` states shown while advancing every cycle."""
        return [self.step(enable=True) for _ in range(count)]
