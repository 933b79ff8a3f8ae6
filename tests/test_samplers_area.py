"""Area of the stratified sampler vs the tagged compressor, synthesized (yosys): the
memory bits are the paper's per-entry accounting (sec. 4.2), so with 1-bit tags the
tagged table is 62.5% larger than the stratified one ("at least a 62% increase")."""

from hwprof.catalog import get_top
from hwprof.report import area_record

ENTRIES = 64  # small tables synthesize fast; bits per entry do not depend on the size


def memory_bits(name, overrides):
    top = get_top(name)
    return area_record(top, top.resolve(overrides), top.construct(overrides))["memory_bits"]


def test_tagged_is_62_percent_larger_than_stratified():
    stratified = memory_bits("stratified", {"entries": ENTRIES})
    tagged = memory_bits("tagged_compressor", {"entries": ENTRIES, "tag_bits": 1})
    assert stratified == ENTRIES * 8  # an 8-bit counter per entry at r = 256
    assert tagged == ENTRIES * (8 + 3 + 1 + 1)  # hit, miss, state bit, 1-bit tag
    assert (tagged - stratified) / stratified == 0.625
