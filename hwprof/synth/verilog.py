"""Verilog generation with Amaranth's backend."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from amaranth.back import verilog

__all__ = ["to_verilog", "write_atomically"]


def to_verilog(component, name: str) -> str:
    """Verilog text of ``component`` with top module ``name``.

    Ports are the component's signature members (flattened with ``_``), plus
    ``clk`` and ``rst`` (synchronous, active high) when it has sequential logic.
    """
    return verilog.convert(component, name=name, emit_src=False)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
