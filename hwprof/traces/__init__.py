"""Traces of real programs: the file format (reader and writer), capture with hwprof's
valgrind tool, the workload registry, and the profile keys of a trace."""
