"""One module per block; each defines ``TOPS``, a list of :class:`hwprof.catalog.Top`."""
