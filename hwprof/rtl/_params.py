"""Parameter validation shared by every RTL component."""

from __future__ import annotations

__all__ = ["checked_config"]


def checked_config(component, make_config):
    """Return ``make_config()``; on a bad parameter, re-raise its error.

    The component object already exists when its ``__init__`` validates, and
    Amaranth would later warn that it was "created but never used"; a component
    rejected for its parameters is silenced first, so the user sees only the
    ``TypeError``/``ValueError`` that names the bad parameter.
    """
    try:
        return make_config()
    except (TypeError, ValueError):
        component._MustUse__silence = True
        raise
