"""Parameter checks for the public entry points.

Every message names the parameter, gives the value received and the requirement,
and ends with a fix. Methods call these helpers; they never build messages of
their own for the checks below.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "as_rng",
    "check_bool",
    "check_choice",
    "check_int",
    "check_number",
]


def check_int(name: str, value: Any, *, min: int | None = None, max: int | None = None) -> int:
    """Return ``value`` as ``int`` after checking it is an integer in ``[min, max]``.

    Examples
    --------
    >>> check_int("k", 3, min=1)
    3
    >>> check_int("k", 0, min=1)
    Traceback (most recent call last):
    ...
    ValueError: k must be an integer >= 1; got k=0.
    """
    bounds = _bounds_text(min, max)
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer{bounds}; got {name}={value!r}.")
    value = int(value)
    if (min is not None and value < min) or (max is not None and value > max):
        raise ValueError(f"{name} must be an integer{bounds}; got {name}={value}.")
    return value


def check_number(
    name: str,
    value: Any,
    *,
    min: float | None = None,
    max: float | None = None,
    min_inclusive: bool = True,
    max_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite ``float`` inside the stated range.

    Examples
    --------
    >>> check_number("lam", 2, min=0, min_inclusive=False)
    2.0
    >>> check_number("lam", -1, min=0, min_inclusive=False)
    Traceback (most recent call last):
    ...
    ValueError: lam must be a finite number > 0; got lam=-1.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a finite number{_range_text(min, max, min_inclusive, max_inclusive)}; "
            f"got {name}={value!r} of type {type(value).__name__}."
        )
    x = float(value)
    bad = not np.isfinite(x)
    if min is not None:
        bad |= x < min if min_inclusive else x <= min
    if max is not None:
        bad |= x > max if max_inclusive else x >= max
    if bad:
        raise ValueError(
            f"{name} must be a finite number{_range_text(min, max, min_inclusive, max_inclusive)}; "
            f"got {name}={value!r}."
        )
    return x


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """Check that ``value`` is one of ``choices`` (strings).

    Examples
    --------
    >>> check_choice("init", "mean", ["mean", "random"])
    'mean'
    >>> check_choice("init", "kmeans++", ["mean", "random"])
    Traceback (most recent call last):
    ...
    ValueError: init must be one of 'mean', 'random'; got init='kmeans++'.
    """
    if not isinstance(value, str) or value not in choices:
        opts = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {opts}; got {name}={value!r}.")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Check that ``value`` is a boolean (Python or numpy)."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False; got {name}={value!r}.")
    return bool(value)


def check_names(name: str, value: Any) -> list[str] | None:
    """Normalise a column-name list argument (None, a string or an iterable of strings)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a list of column names; got {name}={value!r}.")
    out = list(value)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(
                f"{name} must be a list of column names (strings); got {v!r} in {name}={out!r}."
            )
    return out


def as_rng(rng: Any) -> np.random.Generator:
    """Normalise ``rng`` (None, int, SeedSequence or Generator) to a Generator (SPEC 7).

    Examples
    --------
    >>> g = as_rng(0)
    >>> isinstance(g, np.random.Generator)
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool | np.bool_):
        if int(rng) < 0:
            raise ValueError(f"rng must be a non-negative integer seed; got rng={rng}.")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be None, an int seed or a numpy.random.Generator; got rng={rng!r}. "
        "Use rng=0 for a reproducible run."
    )


def _bounds_text(min: Any, max: Any) -> str:
    if min is not None and max is not None:
        return f" in [{min}, {max}]"
    if min is not None:
        return f" >= {min}"
    if max is not None:
        return f" <= {max}"
    return ""


def _range_text(min: Any, max: Any, min_inc: bool, max_inc: bool) -> str:
    parts = []
    if min is not None:
        parts.append(f"{'>=' if min_inc else '>'} {min}")
    if max is not None:
        parts.append(f"{'<=' if max_inc else '<'} {max}")
    return (" " + " and ".join(parts)) if parts else ""


def user_stacklevel() -> int:
    """Stack level of the first frame outside the sparseclust package."""
    frame = inspect.currentframe()
    level = 0  # this frame; 1 is the caller of warnings.warn
    while frame is not None:
        mod = frame.f_globals.get("__name__", "")
        if not mod.startswith("sparseclust"):
            return level
        frame = frame.f_back
        level += 1
    return 2
