"""Multi-hash interval profiler with conservative update, one tuple per cycle.

Narayanasamy et al., sections 5-6; the rules are those of
:mod:`hwprof.golden.multihash`. :func:`MultiHash` builds one of two designs from
the same parameters: the paper's fully associative accumulator as a CAM in flops
(``ways = 0``, :class:`hwprof.rtl.multihash_cam.MultiHashCam`, two stages) or a
set-associative accumulator in block RAM (``ways > 0``, the default,
:class:`hwprof.rtl.multihash_bram.MultiHashBram`, five stages). Both take one
tuple per cycle and give the same records at every interval end as the golden
model with the same ``ways``. See docs/multihash.md for the block diagrams.
"""

from __future__ import annotations

from .multihash_bram import LATENCY, MultiHashBram
from .multihash_cam import MultiHashCam
from .multihash_config import (
    PREFIX_PICK_SETS,
    multihash_config,
    readout_pick_for,
    record_layout,
    tuple_layout,
)

__all__ = ["MultiHash", "MultiHashBram", "MultiHashCam", "tuple_layout", "record_layout",
           "LATENCY", "PREFIX_PICK_SETS"]


def MultiHash(tables=4, counters=2048, counter_bits=24, accumulator=100,
              interval_length=10_000, threshold=100, pc_bits=32, value_bits=32,
              retain=True, reset=False, conservative=True, hash_seed=1, ways=4, *,
              bypass=True, readout_pick=None):  # fmt: skip
    """The interval-based multi-hash profiler (C/R/P options), 1 tuple/cycle.

    Every parameter is checked before a component is built; the component is a
    :class:`~hwprof.rtl.multihash_cam.MultiHashCam` (``ways = 0``) or a
    :class:`~hwprof.rtl.multihash_bram.MultiHashBram` (``ways > 0``).

    Parameters
    ----------
    tables : int
        Number of hash tables ``n`` (1 = single-hash profiler).
    counters : int
        Total counters, ``counters / tables`` per table (a power of two).
    counter_bits : int
        Width of every counter (tables, accumulator, configuration registers).
    accumulator : int
        Accumulator entries.
    interval_length, threshold : int
        Reset values of the two configuration registers.
    pc_bits, value_bits : int
        Tuple field widths.
    retain, reset, conservative : bool
        P1, R1, C1 of the paper.
    hash_seed : int
        Table seed of hash function 0 (function ``i``: ``hash_seed + i``).
    ways : int
        Accumulator organisation. ``ways > 0`` (default 4): ``accumulator / ways``
        sets in block RAM, the five-stage pipeline of :mod:`hwprof.rtl.multihash_bram`
        (latency :data:`LATENCY` = 4 from accept to the writes). ``0``: the paper's
        fully associative accumulator as a CAM in flops, the two-stage design of
        :mod:`hwprof.rtl.multihash_cam` (latency 1). The golden model takes the same
        ``ways`` (which tuples are kept differs).
    bypass : bool
        Forward the writes a read misses (default). ``False`` builds a broken
        design for the checker's mutant test only.
    readout_pick : str or None
        ``ways > 0`` only: how the readout picks its next pending entry, the same
        entry every cycle either way (:mod:`hwprof.rtl.multihash_bram`).
        ``"prefix"``: the first set with a pending way by a prefix OR over the sets;
        ``"address"``: from the readout's set address register ``ro_set`` (no
        prefix), with "anything pending" a flop too (``ro_any``). ``None``
        (default): ``"prefix"`` up to :data:`PREFIX_PICK_SETS` sets (the
        defaults' 25), else ``"address"`` (:func:`readout_pick_for`). The same
        cycles and latency either way (no golden model parameter).

    Returns
    -------
    MultiHashCam or MultiHashBram
        A component with the ports below.

    Attributes of the component
    ---------------------------
    tuples : In(stream.Signature(tuple_layout(pc_bits, value_bits)))
        Input tuples ``<pc, value>``; ``ready`` is low only during the stalls
        described in each design's module docstring.
    records : Out(stream.Signature(record_layout(pc_bits + value_bits, counter_bits)))
        At every interval end: the candidate entries ``(key, count)`` in entry
        order, then one marker with ``end = 1`` (key and count 0).
    cfg_we : In(1)
        Write ``cfg_interval``/``cfg_threshold``; they take effect at the next
        interval boundary (software writes 1 <= threshold <= interval).
    cfg_interval, cfg_threshold : In(counter_bits)

    Latency (``ways = 0``): a tuple is accepted in S0 and updates the
    tables/accumulator at the end of S1 (the next cycle). The first record of an
    interval is valid the cycle after the interval's last tuple leaves S1.
    ``ways > 0``: accepted in cycle c, tables and accumulator written at the end
    of c + 4; the first record of an interval (through a 4-entry FIFO) is valid
    in c + 8 when its last tuple was accepted in c, one record per cycle after.
    The golden model compares interval readouts, which latency does not change.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.multihash.MultiHashConfig`)
        or an unknown ``readout_pick``; no component is built then.
    """
    config = multihash_config(
        tables=tables, counters=counters, counter_bits=counter_bits,
        accumulator=accumulator, interval_length=interval_length, threshold=threshold,
        pc_bits=pc_bits, value_bits=value_bits, retain=retain, reset=reset,
        conservative=conservative, hash_seed=hash_seed, ways=ways)  # fmt: skip
    pick = readout_pick_for(config, readout_pick)
    if config.ways:
        return MultiHashBram(config, bypass=bypass, readout_pick=pick)
    return MultiHashCam(config, bypass=bypass)
