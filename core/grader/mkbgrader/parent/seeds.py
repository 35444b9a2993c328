"""Fresh unpredictable seeds from the OS entropy pool, so a candidate cannot guess the next draw; the validation's
parent draws them for its children, and every child draws its own."""

from __future__ import annotations

import secrets


def fresh_seed() -> int:
    return secrets.randbits(63)
