"""Shared formatting: numbers, the ``Call:`` line, text tables."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import pandas as pd

from .._data.params import given_arguments

__all__ = ["call_context", "call_string", "fmt", "fmt_list"]

#: Set by :func:`call_context`: how the ``Call:`` line names the data, and which
#: arguments it shows even at their defaults.
_CALL_CONTEXT: ContextVar[tuple[str | None, frozenset[str]]] = ContextVar(
    "sparseclust_call_context", default=(None, frozenset())
)


@contextmanager
def call_context(data_name: str | None = None, show: Iterable[str] = ()) -> Iterator[None]:
    """Within the block, ``Call:`` lines name the data ``data_name`` (a front such as
    the command line, whose data have no variable name) and always show the
    arguments in ``show``."""
    token = _CALL_CONTEXT.set((data_name, frozenset(show)))
    try:
        yield
    finally:
        _CALL_CONTEXT.reset(token)


def fmt(x: Any, digits: int = 4) -> str:
    """Format a number with ``digits`` significant digits (R's ``print`` style).

    Examples
    --------
    >>> fmt(3.14159265), fmt(12345678.9), fmt(2), fmt(None)
    ('3.142', '1.235e+07', '2', 'NA')
    """
    if x is None or (isinstance(x, float) and np.isnan(x)) or x is pd.NA:
        return "NA"
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        return f"{float(x):.{digits}g}"
    return str(x)


def fmt_list(values: Any, digits: int = 4, limit: int = 10) -> str:
    """``"50, 48, 52"``, truncated with ``", ..."`` after ``limit`` values."""
    vals = list(values)
    text = ", ".join(fmt(v, digits) for v in vals[:limit])
    return text + (", ..." if len(vals) > limit else "")


def _data_name(x: Any) -> str:
    if isinstance(x, str):
        return repr(x)
    given = _CALL_CONTEXT.get()[0]
    if given is not None:
        return given
    frame = inspect.currentframe()
    while frame is not None and frame.f_globals.get("__name__", "").startswith("sparseclust"):
        frame = frame.f_back
    if frame is not None:
        for name, val in list(frame.f_locals.items()) + list(frame.f_globals.items()):
            if val is x and not name.startswith("_"):
                return name
    return "data"


def call_string(func: Callable, values: dict[str, Any], first: str = "x") -> str:
    """Render the call as R's ``Call:`` line: the arguments the caller wrote (also
    those equal to their defaults) and any that differ from their defaults.

    ``values`` is the public function's ``locals()`` at entry (the arguments its
    :func:`~sparseclust._data.params.rules` declaration checked are shown as the
    caller passed them, not normalised); ``first`` names its positional data
    argument, rendered as the caller's variable name when it can be found (else
    ``data``).
    """
    sig = inspect.signature(func)
    show = _CALL_CONTEXT.get()[1]
    given = given_arguments(func)
    show = show | set(given)  # the arguments the user wrote, even at their defaults
    values = {**values, **given}  # as the user wrote them
    parts = []
    for name, p in sig.parameters.items():
        if name not in values:
            continue
        v = values[name]
        if name == first:
            if v is not None:
                parts.append(_data_name(v))
            continue
        if p.default is not inspect.Parameter.empty and _same(v, p.default) and name not in show:
            continue
        if name == "data" and v is not None:
            parts.append(f"data={_data_name(v)}")
            continue
        parts.append(f"{name}={_short_repr(v)}")
    return f"{func.__name__}({', '.join(parts)})"


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a is b or (type(a) is type(b) and a == b))
    except Exception:  # noqa: BLE001 - arrays etc. compare ambiguously: not the default
        return False


def _plain(v: Any) -> Any:
    """``v`` with numpy scalars, also inside lists, tuples and dicts, as Python numbers
    (so ``[np.float64(3.0)]`` prints as ``[3.0]``, as the user wrote it)."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, list | tuple):
        out = [_plain(e) for e in v]
        return out if isinstance(v, list) else tuple(out)
    if isinstance(v, dict):
        return {_plain(a): _plain(b) for a, b in v.items()}
    return v


def _short_repr(v: Any) -> str:
    """The ``Call:`` line's text of an argument.

    Examples
    --------
    >>> _short_repr([np.float64(3.0), np.int64(2)]), _short_repr((np.float32(0.5),))
    ('[3.0, 2]', '(0.5,)')
    """
    if isinstance(v, np.random.Generator):
        return "<Generator>"
    if isinstance(v, pd.DataFrame | np.ndarray | pd.Series):
        return f"<{type(v).__name__} {'x'.join(map(str, np.shape(v)))}>"
    r = repr(_plain(v))
    return r if len(r) <= 60 else r[:57] + "..."
