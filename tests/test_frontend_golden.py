"""The golden front-end pipeline model: architectural equivalence and bookkeeping."""

import random

import pytest

from hwprof.golden.frontend import (
    FrontEnd,
    basic_block_program,
    directed_programs,
    mixed_type_program,
)  # fmt: skip
from hwprof.golden.isa_profile import MAX_FLAGS, decode


def check_front_end(frontend: FrontEnd, seed):
    frontend.run(4000)
    n = len(frontend.path_log)
    assert n > 3900, f"seed {seed}: only {n} instructions decoded"
    # The pipeline decodes exactly the oracle's correct path and makes the same
    # dispatch decision as one-at-a-time architectural execution.
    assert frontend.path_log == frontend.oracle.log[:n], f"seed {seed}"
    c = frontend.counts
    assert c["decoded"] <= c["fetched"] and c["pi_dispatched"] <= c["pi_decoded"]
    dispatched = sum(len(r.dispatched) for r in frontend.records)
    dropped = sum(len(r.dropped) for r in frontend.records)
    assert (dispatched, dropped) == (c["dispatched"], c["dropped"])
    for step in frontend.trace:  # a squash cycle decodes nothing
        assert not (step.squash and step.out.take)


@pytest.mark.parametrize("name", sorted(directed_programs()))
@pytest.mark.parametrize("lanes", [1, 4])
def test_directed_programs_follow_the_oracle(name, lanes, seed):
    program, rate = directed_programs()[name]
    check_front_end(FrontEnd(program, lanes=lanes, mispredict_rate=rate, seed=seed), seed)


@pytest.mark.parametrize("lanes, n_flags", [(1, 1), (2, 3), (4, 8)])
def test_random_programs_follow_the_oracle(lanes, n_flags, seed):
    program = basic_block_program(random.Random(seed), n_flags=n_flags)
    check_front_end(FrontEnd(program, lanes=lanes, n_flags=n_flags, seed=seed), seed)


def test_profiling_off_drops_every_profile_instruction(seed):
    program, _ = directed_programs()["fig3_off"]
    frontend = FrontEnd(program, lanes=4, seed=seed)
    frontend.run(2000)
    assert frontend.counts["pi_dispatched"] == 0 and frontend.counts["pi_decoded"] > 500
    on, _ = directed_programs()["fig3_on"]
    frontend = FrontEnd(on, lanes=4, seed=seed)
    frontend.run(2000)
    assert frontend.counts["dropped"] == 0


def test_call_graph_misfetch_happens_and_recovers(seed):
    """Fig. 4 with profiling off: a predicted-taken, dropped jal/b is a profile mis-fetch."""
    program, _ = directed_programs()["fig4_off_misfetch"]
    frontend = FrontEnd(program, lanes=2, mispredict_rate=0.5, seed=seed)
    frontend.run(3000)
    causes = [r for r in frontend.records if r.cause == "misfetch"]
    assert causes, f"seed {seed}"
    for r in causes:
        # redirected to the fall-through of the jal/b
        assert decode(program.word(r.redirect - 4)).is_cti


@pytest.mark.parametrize("n_flags", range(1, MAX_FLAGS + 1))
def test_mixed_type_program_types_fit_the_type_field(n_flags, seed):
    """PI types run over 0..n_flags - 1, plus the type n_flags (which names no flag)
    where the 3-bit type field holds it: with 8 flags there is none (seed 778406832 of
    the dispatch filter's soak test built a type 8 and failed)."""
    types = set()
    for s in range(seed, seed + 5):
        program = mixed_type_program(random.Random(s), n_flags=n_flags)
        types |= {decode(w).k for w in program.words.values() if decode(w).is_pi}
    expected = set(range(n_flags + (n_flags < MAX_FLAGS)))
    assert types == expected, f"seeds {seed}..{seed + 4}: types {sorted(types)}"
