"""Parameter validation shared by every RTL component."""

from __future__ import annotations

import inspect

__all__ = ["Checked"]


class Checked:
    """Mixin (before ``wiring.Component``): parameters checked before the object exists.

    A component that rejected its parameters in ``__init__`` would already exist,
    and Amaranth would warn that it was "created but never used" when it is dropped.
    Here ``__new__`` calls the class's :meth:`check_params` with the constructor's
    arguments (by name, defaults applied) first: a bad parameter raises its
    ``TypeError``/``ValueError`` and nothing is created; a good one's result is the
    new object's ``config`` when ``__init__`` runs.
    """

    #: The configuration class whose fields are the constructor's parameters, by name
    #: (the default :meth:`check_params`).
    config_class = None

    @classmethod
    def check_params(cls, **params):
        """The component's configuration; raises on a bad parameter."""
        return cls.config_class(**params)

    @classmethod
    def check(cls, *args, **kwargs):
        """What ``cls(*args, **kwargs)`` would get as ``config``, without creating it:
        :meth:`check_params` on the constructor's arguments (by name, defaults
        applied); a bad parameter raises its ``TypeError``/``ValueError``."""
        bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
        bound.apply_defaults()
        params = dict(list(bound.arguments.items())[1:])  # without self
        return cls.check_params(**params)

    def __new__(cls, *args, **kwargs):
        config = cls.check(*args, **kwargs)
        self = super().__new__(cls, *args, src_loc_at=1, **kwargs)
        self.config = config
        return self

