"""Stimulus shared by the sampler pysim tests: random and adversarial streams."""

from __future__ import annotations


def key_stream(rng, kind, n, key_bits=64, aliases=None):
    """Keys of one of the stream kinds (``aliases``: keys that share one table entry)."""
    a, b = rng.getrandbits(key_bits), rng.getrandbits(key_bits)
    if aliases:
        a, b = aliases[0], aliases[1]
    hot = [rng.getrandbits(key_bits) for _ in range(6)]
    for i in range(n):
        if kind == "random":
            yield rng.getrandbits(key_bits)
        elif kind == "one-key":
            yield a
        elif kind == "ping-pong":
            yield a if i % 2 else b
        elif kind == "alias":
            yield rng.choice(aliases)
        else:
            yield rng.choice(hot) if rng.random() < 0.8 else rng.getrandbits(key_bits)


def cycles(rng, keys, valid_p=0.9, ready_p=0.7, max_count=None):
    """Per cycle: (in_valid, key, count, out_ready); a key is held until accepted.

    Stream rule: once ``valid`` is raised it stays up with the same payload until
    the tuple is accepted.
    """
    pending = None
    holding = False
    keys = iter(keys)
    while True:
        if pending is None:
            try:
                pending = (next(keys), rng.randrange(1, max_count + 1) if max_count else 1)
            except StopIteration:
                return
        valid = int(holding or rng.random() < valid_p)
        accepted = yield (valid, pending[0], pending[1], int(rng.random() < ready_p))
        holding = bool(valid and not accepted)
        if accepted:
            pending = None
