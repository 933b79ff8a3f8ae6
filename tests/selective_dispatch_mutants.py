"""Mutants of the selective-dispatch RTL that the pysim and cocotb checks must catch."""

from hwprof.rtl.dispatch_filter import DispatchFilter
from hwprof.rtl.profile_flag_predictor import ProfileFlagPredictor


class NoPopHazard(DispatchFilter):
    """A flag reader after a poppf in the same cycle does not stall."""

    def _hazard(self, reads, popped, onehot):
        return 0


class NoOverflowTrap(DispatchFilter):
    """A pushpf on a full stack raises nothing (and its push is lost)."""

    def _full(self, sp, depth):
        return 0


class LockIgnored(ProfileFlagPredictor):
    """Entries are read (skipped) while still locked."""

    def _readable(self, entry):
        return ~entry.pred


class UntypedLeaderRTL(ProfileFlagPredictor):
    """The leader register ignores the profile type (the bug of issue 12)."""

    def _new_leader(self, leader_valid, leader_k, k):
        return ~leader_valid


class ValidGatedOutputs(ProfileFlagPredictor):
    """skip/not_taken gated by fetch_valid: a combinational path fetch_valid -> skip."""

    def _output_gate(self, lane_valid):
        return lane_valid
