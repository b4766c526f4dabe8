"""Numeric / categorical detection for the data front.

How a column is read, by its pandas dtype (overrides with ``categorical=`` /
``numeric=`` or, in formulas, ``C(x)`` / ``N(x)`` always win):

==============================================  ===========  ===========================
dtype                                           kind         levels / values
==============================================  ===========  ===========================
float16/32/64, int8..64, uint8..64              numeric      float64
nullable ``Int64``, ``UInt8``.., ``Float64``    numeric      float64, ``<NA>`` is missing
``bool``, nullable ``boolean``                  categorical  ``[False, True]``
``category`` (unordered)                        categorical  the declared categories
``category`` (ordered)                          categorical  the declared order (``ordinal``)
``object`` of scalars, ``str`` / ``string``     categorical  sorted distinct values
datetime, timedelta, period, interval, complex  --           ``TypeError``
``object`` holding lists, dicts, arrays ...     --           ``TypeError``
==============================================  ===========  ===========================

Integers are numeric (R's convention); no cardinality heuristics are applied.
Missing values are ``NaN``/``None``/``<NA>``/``NaT`` in any of the above.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api import types as pdt

__all__ = ["ColumnInfo", "detect_kind", "encode_categorical", "to_float"]


@dataclass(frozen=True)
class ColumnInfo:
    """What the front decided about one variable."""

    name: str
    dtype: str
    kind: str  # "numeric" or "categorical"
    reason: str  # "detected", "categorical=", "numeric=", "C()", "N()"
    ordered: bool = False


_REJECT_HINT = (
    "convert them to numeric or categorical, or drop them (e.g. formula='~ . - {first}')."
)


def unsupported_reason(s: pd.Series) -> str | None:
    """Return a short description when ``s`` has a dtype the front cannot use."""
    dt = s.dtype
    if isinstance(dt, pd.CategoricalDtype):
        return None
    if (
        pdt.is_datetime64_any_dtype(dt)
        or pdt.is_timedelta64_dtype(dt)
        or isinstance(dt, pd.PeriodDtype | pd.IntervalDtype)
    ):
        return str(dt)
    if pdt.is_complex_dtype(dt):
        return str(dt)
    if pdt.is_object_dtype(dt):
        vals = s.dropna()
        bad = vals.map(lambda v: not _is_scalar_level(v))
        if bool(bad.any()):
            example = vals[bad].iloc[0]
            return f"object holding {type(example).__name__} values"
    if isinstance(dt, pd.SparseDtype):
        return str(dt)
    return None


def _is_scalar_level(v: object) -> bool:
    if isinstance(v, str | bool | np.bool_ | int | np.integer | float | np.floating):
        return True
    return isinstance(v, bytes)


def detect_kind(s: pd.Series) -> str:
    """Kind a column takes by its dtype: ``"numeric"`` or ``"categorical"``.

    Call :func:`unsupported_reason` first; this function assumes a supported dtype.

    Examples
    --------
    >>> detect_kind(pd.Series([1, 2, 3]))
    'numeric'
    >>> detect_kind(pd.Series([True, False]))
    'categorical'
    >>> detect_kind(pd.Series(["a", "b"]))
    'categorical'
    >>> detect_kind(pd.Series([1, None], dtype="Int64"))
    'numeric'
    """
    dt = s.dtype
    if isinstance(dt, pd.CategoricalDtype) or pdt.is_bool_dtype(dt):
        return "categorical"
    if pdt.is_numeric_dtype(dt):
        return "numeric"
    return "categorical"


def to_float(s: pd.Series, name: str) -> np.ndarray:
    """Convert a column to a float64 array (missing -> NaN) or raise ``TypeError``."""
    dt = s.dtype
    try:
        if isinstance(dt, pd.CategoricalDtype):
            cats = dt.categories
            if not pdt.is_numeric_dtype(cats.dtype) and not pdt.is_bool_dtype(cats.dtype):
                cats = pd.to_numeric(pd.Series(cats), errors="raise")
            codes = s.cat.codes.to_numpy()
            vals = np.asarray(cats, dtype=np.float64)
            out = np.where(codes >= 0, vals[np.clip(codes, 0, None)], np.nan)
            return out.astype(np.float64)
        if pdt.is_bool_dtype(dt) or pdt.is_numeric_dtype(dt):
            return s.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
        return pd.to_numeric(s, errors="raise").astype("Float64").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
    except (ValueError, TypeError) as err:
        raise TypeError(
            f"Column {name!r} (dtype {dt}) cannot be used as numeric: {err}. "
            f"Remove it from numeric= or convert it first."
        ) from None


def encode_categorical(
    s: pd.Series, levels: pd.Index | None = None
) -> tuple[np.ndarray, pd.Index, bool]:
    """Integer codes (``-1`` for missing), the level labels and whether ordered.

    With ``levels`` given (prediction on new data) the codes refer to those levels
    and a value outside them raises ``ValueError``.

    Examples
    --------
    >>> codes, levels, ordered = encode_categorical(pd.Series(["b", "a", None, "b"]))
    >>> codes.tolist(), list(levels), ordered
    ([1, 0, -1, 1], ['a', 'b'], False)
    """
    dt = s.dtype
    ordered = bool(isinstance(dt, pd.CategoricalDtype) and dt.ordered)
    if levels is None:
        if isinstance(dt, pd.CategoricalDtype):
            levels = pd.Index(dt.categories)
        elif pdt.is_bool_dtype(dt):
            levels = pd.Index([False, True], dtype=object)
        else:
            uniq = pd.unique(s.dropna().to_numpy(dtype=object))
            levels = pd.Index(_sorted_levels(list(uniq)), dtype=object)
    cat = pd.Categorical(s.astype(object) if not isinstance(dt, pd.CategoricalDtype) else s,
                         categories=levels)
    codes = np.asarray(cat.codes, dtype=np.int64)
    unseen = (codes < 0) & s.notna().to_numpy()
    if unseen.any():
        bad = pd.unique(s[unseen].astype(object))[:5]
        raise ValueError(
            f"Column {s.name!r} has values not among its fitted levels: {list(bad)}; "
            f"known levels: {list(levels)[:20]}."
        )
    return codes, levels, ordered


def _sorted_levels(values: list) -> list:
    try:
        return sorted(values)
    except TypeError:  # mixed types: sort by type name then text
        return sorted(values, key=lambda v: (type(v).__name__, str(v)))
