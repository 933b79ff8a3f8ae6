"""One module per block; each defines ``TOPS``, a list of :class:`hwprof.block.Top`, and
what the flows need of it (formal properties, trace check, native bench).

:mod:`hwprof.tops.sva` holds the SystemVerilog property text that several blocks share.
"""
