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
    "check_names",
    "check_number",
    "user_stacklevel",
]


def _show(value: Any) -> str:
    """``repr`` of a value, with numpy scalars shown as plain Python numbers."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


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
        if (
            not isinstance(value, bool | np.bool_)
            and isinstance(value, numbers.Real)
            and float(value).is_integer()
        ):
            value = int(value)
        else:
            raise TypeError(
                f"{name} must be an integer{bounds}; got {name}={_show(value)} of type "
                f"{type(value).__name__}."
            )
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
    >>> check_number("lam", np.float64(-1.5), min=0)
    Traceback (most recent call last):
    ...
    ValueError: lam must be a finite number >= 0; got lam=-1.5.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a finite number{_range_text(min, max, min_inclusive, max_inclusive)}; "
            f"got {name}={_show(value)} of type {type(value).__name__}."
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
            f"got {name}={_show(value)}."
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
        raise ValueError(f"{name} must be one of {opts}; got {name}={_show(value)}.")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Check that ``value`` is a boolean (Python or numpy)."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False; got {name}={_show(value)}.")
    return bool(value)


def check_names(name: str, value: Any) -> list[str] | None:
    """Normalise a column-name list argument (None, one name or an iterable of names).

    Names are returned as strings (the data front names every column by ``str(label)``),
    so integer column labels such as ``0`` may be given as ``0`` or ``"0"``.

    Examples
    --------
    >>> check_names("categorical", "sex")
    ['sex']
    >>> check_names("numeric", [0, "age"])
    ['0', 'age']
    >>> check_names("numeric", 3.5)
    Traceback (most recent call last):
    ...
    TypeError: numeric must be a column name or a list of column names; got numeric=3.5. Use e.g. numeric=['age', 'income'].
    """
    if value is None:
        return None
    if _is_label(value):
        return [str(value)]
    if not isinstance(value, Iterable) or isinstance(value, bytes | dict):
        raise TypeError(
            f"{name} must be a column name or a list of column names; got {name}={_show(value)}. "
            f"Use e.g. {name}=['age', 'income']."
        )
    out = list(value)
    for v in out:
        if not _is_label(v):
            raise TypeError(
                f"{name} must be a list of column names (strings); got {_show(v)} in "
                f"{name}={out!r}. Use the column names, not positions or masks."
            )
    return [str(v) for v in out]


def _is_label(v: Any) -> bool:
    return isinstance(v, str) or (
        isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_)
    )


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
            raise ValueError(
                f"rng must be a non-negative integer seed; got rng={int(rng)}. Use e.g. rng=0."
            )
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be None, an int seed or a numpy.random.Generator; got rng={_show(rng)}. "
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
    """Stack level of the first frame outside the sparseclust package.

    Pass it as ``stacklevel=`` to ``warnings.warn`` called directly from a sparseclust
    function, so the warning points at the user's line.
    """
    frame = inspect.currentframe()
    level = 0  # this frame; 1 is the caller of warnings.warn
    while frame is not None:
        if not is_package_module(frame.f_globals.get("__name__", "")):
            return level
        frame = frame.f_back
        level += 1
    return 2


def is_package_module(module_name: str) -> bool:
    """Whether ``module_name`` is sparseclust or one of its submodules (not ``sparseclust_x``)."""
    return module_name == "sparseclust" or module_name.startswith("sparseclust.")
