"""The multi-hash profiler's run-time configuration registers, shared by both designs."""

from __future__ import annotations

from amaranth.hdl import Module, Signal

__all__ = ["RuntimeConfig"]


class RuntimeConfig:
    """``interval`` and ``threshold`` registers written through the ``cfg_*`` ports.

    A write (``cfg_we``) is held pending and takes effect at the next interval
    boundary (:meth:`apply`), so an interval never changes length or threshold
    half-way. Reset values: the configuration's ``interval_length`` and
    ``threshold``. Signal names (``interval``, ``threshold``, ``pend``) are those
    the formal properties read.
    """

    def __init__(self, m: Module, component, width: int):
        c = component.config
        self._component = component
        self.interval = Signal(width, init=c.interval_length, name="interval")
        self.threshold = Signal(width, init=c.threshold, name="threshold")
        self.pend = Signal(name="pend")
        self._interval = Signal(width, name="pend_interval")
        self._threshold = Signal(width, name="pend_threshold")
        with m.If(component.cfg_we):
            m.d.sync += [self.pend.eq(1), self._interval.eq(component.cfg_interval),
                         self._threshold.eq(component.cfg_threshold)]  # fmt: skip

    @property
    def pending_interval(self):
        """The written ``interval`` waiting for the next boundary (with ``pend``)."""
        return self._interval

    @property
    def pending_threshold(self):
        """The written ``threshold`` waiting for the next boundary (with ``pend``)."""
        return self._threshold

    def apply(self, m: Module, boundary) -> None:
        """At ``boundary`` (the interval's last tuple), a pending write takes effect."""
        with m.If(boundary & self.pend):
            m.d.sync += [self.interval.eq(self._interval), self.threshold.eq(self._threshold)]
            with m.If(~self._component.cfg_we):
                m.d.sync += self.pend.eq(0)
