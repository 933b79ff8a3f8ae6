"""One module per block; each defines ``TOPS``, a list of :class:`hwprof.block.Top`, and
what the flows need of it (formal properties, trace check, native bench).

A block's larger benches have a module of their own beside it (``<block>_bench.py``, no
``TOPS``), and their C++ harnesses are in ``native/`` (package data, built by
:func:`hwprof.sim.native.build_native`). :mod:`hwprof.tops.sva` holds the SystemVerilog
property text that several blocks share.
"""
