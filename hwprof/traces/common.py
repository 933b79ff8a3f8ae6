"""What the trace format's writer, its reader and a capture share, without numpy.

The error type, the record kinds and their names, and the temporary file a
trace is written to. :mod:`hwprof.traces.tracefile` re-exports all of it; this
module exists so that ``hwprof trace capture`` can check its arguments, create
the output's temporary file and start valgrind before it imports numpy and the
writer (about 0.1-0.2 s of imports that then overlap valgrind's own start-up;
docs/traces.md, capture speed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from glob import escape as glob_escape
from pathlib import Path

__all__ = [
    "TraceError",
    "LOAD",
    "COND_NOT_TAKEN",
    "COND_TAKEN",
    "JUMP",
    "CALL",
    "RETURN",
    "INDIRECT",
    "BLOCK",
    "EDGE",
    "KIND_NAMES",
    "KIND_CODES",
    "BRANCH_KINDS",
    "KIND_GROUPS",
    "COLUMNS",
    "parse_kinds",
    "temporary_path",
    "create_temporary",
    "discard_temporary",
]


class TraceError(ValueError):
    """A trace file is malformed or cannot be captured (one line for the user)."""


LOAD, COND_NOT_TAKEN, COND_TAKEN, JUMP, CALL, RETURN, INDIRECT, BLOCK, EDGE = range(9)
KIND_NAMES = {
    LOAD: "load",
    COND_NOT_TAKEN: "cond_not_taken",
    COND_TAKEN: "cond_taken",
    JUMP: "jump",
    CALL: "call",
    RETURN: "return",
    INDIRECT: "indirect",
    BLOCK: "block",
    EDGE: "edge",
}
KIND_CODES = {name: code for code, name in KIND_NAMES.items()}
#: Every control-transfer kind.
BRANCH_KINDS = (COND_NOT_TAKEN, COND_TAKEN, JUMP, CALL, RETURN, INDIRECT)
#: The groups of the command line's ``--kinds`` / ``--kind``.
KIND_GROUPS = {"loads": (LOAD,), "branches": BRANCH_KINDS, "blocks": (BLOCK,), "edges": (EDGE,)}
#: A record's fields, the format's columns, in the order of a chunk.
COLUMNS = ("kind", "size", "pc", "addr", "value")


def parse_kinds(text: str | Iterable[str]) -> tuple[int, ...]:
    """Kind codes of ``"loads,branches"`` style names (groups or single kind names)."""
    names = text.split(",") if isinstance(text, str) else list(text)
    codes: list[int] = []
    for name in (n.strip() for n in names):
        if name in KIND_GROUPS:
            codes.extend(KIND_GROUPS[name])
        elif name in KIND_CODES:
            codes.append(KIND_CODES[name])
        else:
            known = ", ".join([*KIND_GROUPS, *KIND_CODES])
            raise ValueError(f"unknown record kind {name!r} (known: {known})")
    return tuple(sorted(set(codes)))


def temporary_path(path: Path) -> Path:
    """The hidden name next to ``path`` that a trace is written to before its rename."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _remove_stale_temporaries(path: Path) -> None:
    """Delete ``.NAME.PID.tmp`` files next to ``path`` left by writers that were killed."""
    for stale in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
        pid = stale.name[len(path.name) + 2 : -4]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:  # that writer is gone: its file can never be finished
            try:
                stale.unlink()
            except OSError:
                pass
        except (PermissionError, OverflowError):
            pass  # alive (another user's), or not a pid


def create_temporary(path) -> tuple[Path, object]:
    """Create the temporary file of the trace ``path``: ``(its path, the open binary file)``.

    Stale temporaries of killed writers next to ``path`` are removed first.

    Raises
    ------
    TraceError
        The file cannot be created (``PATH: cannot write (reason)``).
    """
    path = Path(path)
    tmp = temporary_path(path)
    _remove_stale_temporaries(path)
    try:
        return tmp, open(tmp, "wb")  # noqa: SIM115 (the writer closes it)
    except OSError as exc:
        raise TraceError(f"{path}: cannot write ({exc.strerror})") from None


def discard_temporary(temporary) -> None:
    """Close and delete a temporary file of :func:`create_temporary` (errors ignored)."""
    tmp, file = temporary
    try:
        file.close()
    except (OSError, AttributeError):
        pass
    try:
        tmp.unlink()
    except OSError:
        pass
