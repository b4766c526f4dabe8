"""Numeric / categorical detection for the data front.

How a column is read, by its pandas dtype (overrides with ``categorical=`` /
``numeric=`` or, in formulas, ``C(x)`` / ``N(x)`` always win):

==============================================  ===========  ===========================
dtype                                           kind         levels / values
==============================================  ===========  ===========================
float16/32/64, int8..64, uint8..64              numeric      float64
nullable ``Int64``, ``UInt8``.., ``Float64``    numeric      float64, ``<NA>`` is missing
``Sparse[...]``                                 as its dense subtype
``bool``, nullable ``boolean``                  categorical  ``[False, True]``
``category`` (unordered)                        categorical  the declared categories
``category`` (ordered)                          categorical  the declared order (``ordered``)
``object`` of scalars, ``str`` / ``string``     categorical  sorted distinct values
datetime, timedelta, period, interval, complex  --           ``TypeError``
``object`` holding lists, dicts, arrays ...     --           ``TypeError``
==============================================  ===========  ===========================

Integers are numeric (R's convention); no cardinality heuristics are applied.
Missing values are ``NaN``/``None``/``<NA>``/``NaT`` in any of the above.

Details:

* Levels of an ``object`` column holding several types sort numbers first (by
  value), then strings, then anything else (by type name and text). Values equal
  in Python (``1``, ``1.0``, ``True``) are one level.
* ``numeric=`` (or ``N()``) converts strings and categories that spell numbers
  (``"1.5"``), and ``bool`` to 0/1; an *ordered* category whose labels are not
  numbers becomes its codes ``0 .. k-1`` (its rank). Anything else is a
  ``TypeError`` naming the column.
* ``categorical=`` (or ``C()``) on numbers uses the sorted distinct values as
  levels; ``C(x, levels=[...])`` fixes the levels and their order.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as pdt

__all__ = [
    "ColumnInfo",
    "NamesByKind",
    "densify",
    "detect_kind",
    "encode_categorical",
    "numeric_infos",
    "to_float",
    "unsupported_reason",
]


@dataclass(frozen=True)
class ColumnInfo:
    """What the front decided about one variable."""

    name: str
    dtype: str
    kind: str  # "numeric" or "categorical"
    reason: str  # "detected", "categorical=", "numeric=", "C()", "N()"
    ordered: bool = False  # an ordered pandas category read as categorical


def numeric_infos(names: list[str], dtypes: list[str]) -> tuple[ColumnInfo, ...]:
    """``ColumnInfo(name, dtype, "numeric", "detected")`` for each name: the front's wide
    case (every column a plain number). Each is a copy of one template per dtype with
    its name set: the frozen dataclass's ``__init__`` costs about a microsecond a
    column, and a wide array has thousands. The tuple of the last few (names, dtypes)
    is kept (its records are frozen): a wide table read again, or arrays of the same
    width, make none.

    Examples
    --------
    >>> numeric_infos(["a"], ["float64"])[0] == ColumnInfo("a", "float64", "numeric", "detected")
    True
    >>> numeric_infos(["a"], ["float64"]) is numeric_infos(["a"], ["float64"])
    True
    """
    return _numeric_infos(tuple(names), tuple(dtypes))


@functools.lru_cache(maxsize=16)
def _numeric_infos(names: tuple[str, ...], dtypes: tuple[str, ...]) -> tuple[ColumnInfo, ...]:
    templates: dict[str, dict[str, Any]] = {}
    out = []
    for name, dt in zip(names, dtypes, strict=True):
        tmpl = templates.get(dt)
        if tmpl is None:
            tmpl = templates[dt] = vars(ColumnInfo("", dt, "numeric", "detected", False))
        info = object.__new__(ColumnInfo)
        vars(info).update(tmpl, name=name)
        out.append(info)
    return tuple(out)


#: (all, numeric, categorical) names of the last few tuples of records, by identity
#: (each entry keeps its tuple alive, so an id is not reused while it is here)
_BY_KIND: dict[int, tuple[tuple[ColumnInfo, ...], tuple[tuple[str, ...], ...]]] = {}


def names_by_kind(
    infos: tuple[ColumnInfo, ...],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(all, numeric, categorical) names of ``infos``; made once for a tuple that the
    stages of a fit share (a table, its spec and its detected types).

    Examples
    --------
    >>> infos = (ColumnInfo("a", "float64", "numeric", "detected"),
    ...          ColumnInfo("g", "object", "categorical", "detected"))
    >>> names_by_kind(infos)
    (('a', 'g'), ('a',), ('g',))
    """
    hit = _BY_KIND.get(id(infos))
    if hit is not None and hit[0] is infos:
        return hit[1]  # type: ignore[return-value]
    got = (
        tuple(c.name for c in infos),
        tuple(c.name for c in infos if c.kind == "numeric"),
        tuple(c.name for c in infos if c.kind == "categorical"),
    )
    if isinstance(infos, tuple):
        if len(_BY_KIND) >= 32:
            _BY_KIND.clear()
        _BY_KIND[id(infos)] = (infos, got)
    return got


class NamesByKind:
    """The variable names, all or of one kind, of a record describing variables by
    their :class:`ColumnInfo` (:attr:`column_infos`)."""

    @property
    def column_infos(self) -> tuple[ColumnInfo, ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _by_kind(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """(all, numeric, categorical) names, made once per record (the records are
        frozen; a wide table's names are read by every stage of a fit)."""
        got = self.__dict__.get("_names_by_kind")
        if got is None:
            got = names_by_kind(self.column_infos)
            object.__setattr__(self, "_names_by_kind", got)  # a cache, not a field
        return got

    @property
    def names(self) -> list[str]:
        return list(self._by_kind()[0])

    @property
    def numeric_names(self) -> list[str]:
        return list(self._by_kind()[1])

    @property
    def categorical_names(self) -> list[str]:
        return list(self._by_kind()[2])


def densify(s: pd.Series) -> pd.Series:
    """A ``Sparse[...]`` column as its dense equivalent (other columns unchanged)."""
    if isinstance(s.dtype, pd.SparseDtype):
        return s.sparse.to_dense()
    return s


def unsupported_reason(s: pd.Series) -> str | None:
    """Return a short description when ``s`` has a dtype the front cannot use.

    Examples
    --------
    >>> unsupported_reason(pd.Series(pd.date_range("2024-01-01", periods=2, unit="s")))
    'datetime64[s]'
    >>> unsupported_reason(pd.Series([[1], [2]]))
    'object holding list values'
    >>> unsupported_reason(pd.Series(["a", None])) is None
    True
    """
    s = densify(s)
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
    return None


def _is_scalar_level(v: object) -> bool:
    if isinstance(v, str | bytes | bool | np.bool_):
        return True
    return isinstance(v, numbers.Real)


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


def to_float(s: pd.Series, name: str, *, source: str = "numeric=") -> np.ndarray:
    """Convert a column to a float64 array (missing -> NaN) or raise ``TypeError``.

    ``source`` says why the column is numeric (``"numeric="``, ``"N()"``,
    ``"detected"``, or ``"newdata"`` when reading new data with a fitted spec); it
    picks the fix offered in the error message.

    Examples
    --------
    >>> to_float(pd.Series(["1.5", None, "2"]), "x").tolist()
    [1.5, nan, 2.0]
    >>> to_float(pd.Series(["12,345.5", "$7", "n/a"]), "x").tolist()
    [12345.5, 7.0, nan]
    >>> to_float(pd.Series(pd.Categorical(["lo", "hi"], ["lo", "hi"], ordered=True)), "g")
    array([0., 1.])
    >>> to_float(pd.Series(["1", "two"]), "x")
    Traceback (most recent call last):
    ...
    TypeError: Column 'x' (dtype ...) cannot be read as numeric: Unable to parse string 'two' at position 1. Remove 'x' from numeric= (it is then categorical), or convert it first, e.g. df['x'] = pd.to_numeric(df['x'], errors='coerce').
    """
    s = densify(s)
    dt = s.dtype
    if isinstance(dt, np.dtype) and dt.kind in "fiu":  # plain numpy numbers: no parsing
        return s.to_numpy(dtype=np.float64)
    parsed = s  # what pd.to_numeric reads, to locate the value it cannot read
    codes = None  # for a category: the codes mapping rows to entries of ``parsed``
    try:
        if isinstance(dt, pd.CategoricalDtype):
            cats = dt.categories
            codes = s.cat.codes.to_numpy()
            if pdt.is_numeric_dtype(cats.dtype) or pdt.is_bool_dtype(cats.dtype):
                vals = np.asarray(cats, dtype=np.float64)
            else:
                parsed = pd.Series(cats)
                try:
                    vals = pd.to_numeric(parsed, errors="raise").to_numpy(dtype=np.float64)
                except (ValueError, TypeError):
                    if not dt.ordered:
                        raise
                    vals = np.arange(len(cats), dtype=np.float64)  # an ordinal's rank
            out = np.full(len(codes), np.nan)
            ok = codes >= 0
            out[ok] = vals[codes[ok]]
            return out
        if pdt.is_bool_dtype(dt) or pdt.is_numeric_dtype(dt):
            return s.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
        if pdt.is_object_dtype(dt):
            s = s.map(lambda v: int(v) if isinstance(v, bool | np.bool_) else v)
            parsed = s
        try:
            return (
                pd.to_numeric(s, errors="raise")
                .astype("Float64")
                .to_numpy(dtype=np.float64, na_value=np.nan)
            )
        except (ValueError, TypeError):
            marked = _marked_numbers(s)  # "12,345.6", "$1,200", "7 %": as readr reads them
            if marked is None:
                raise
            return marked
    except (ValueError, TypeError) as err:
        problem = _parse_problem(parsed, codes) or str(err)
        if source == "newdata":
            fix = f"The fit read {name!r} as numeric; give newdata the same kind of column"
        elif source == "N()":
            fix = f"Use C({name}) or the plain column instead of N({name})"
        elif source == "numeric=":
            fix = f"Remove {name!r} from numeric= (it is then categorical)"
        else:
            fix = f"Pass categorical=[{name!r}] to read it as categories"
        raise TypeError(
            f"Column {name!r} (dtype {dt}) cannot be read as numeric: {problem}. {fix}, or "
            f"convert it first, e.g. df[{name!r}] = pd.to_numeric(df[{name!r}], errors='coerce')."
        ) from None


def _marked_numbers(s: pd.Series) -> np.ndarray | None:
    """Text holding numbers with grouping marks, currency or percent signs, read as
    :func:`~sparseclust._data.numbers.parse_numbers` reads them (text meaning "missing",
    such as ``"n/a"``, is missing); ``None`` when some other value is not a number."""
    from .numbers import NA_TEXT, column_unit, parse_numbers

    present = s.notna().to_numpy()
    if not s[present].map(lambda v: isinstance(v, str)).all():
        return None
    x, _ = parse_numbers(s, unit=column_unit(list(s[present])))
    na_text = s.map(lambda v: isinstance(v, str) and v.strip().lower() in NA_TEXT).to_numpy()
    if (present & ~na_text & ~np.isfinite(x)).any():
        return None
    return np.where(present & ~na_text, x, np.nan)


def _parse_problem(parsed: pd.Series, codes: np.ndarray | None) -> str | None:
    """Our own text naming the first value ``pd.to_numeric`` cannot read, or ``None``.

    The text quotes the value with ``repr`` and gives its position in the column (for a
    category: the first row holding it), so it does not depend on the pandas version.
    """
    found = _first_unparsable(parsed)
    if found is None:
        return None
    i, value = found
    what = f"string {value!r}" if isinstance(value, str) else f"{type(value).__name__} {value!r}"
    if codes is None:
        return f"Unable to parse {what} at position {i}"
    rows = np.flatnonzero(codes == i)
    if rows.size:
        return f"Unable to parse {what} at position {int(rows[0])}"
    return f"Unable to parse the category {what} (held by no row)"


def _first_unparsable(values: pd.Series) -> tuple[int, Any] | None:
    """Position and value of the first non-missing entry ``pd.to_numeric`` rejects."""
    present = values.notna().to_numpy()
    try:
        coerced = pd.to_numeric(values, errors="coerce")
    except (ValueError, TypeError):
        suspects = present
    else:
        suspects = present & coerced.isna().to_numpy()
    raw = values.to_numpy(dtype=object)
    for i in np.flatnonzero(suspects):
        try:
            pd.to_numeric(pd.Series([raw[i]], dtype=object), errors="raise")
        except (ValueError, TypeError):
            return int(i), raw[i]
    return None


def encode_categorical(
    s: pd.Series,
    levels: Any = None,
    *,
    name: str | None = None,
    unseen_hint: str = "Recode or drop those rows first.",
    unseen: str = "raise",
) -> tuple[np.ndarray, pd.Index, bool]:
    """Integer codes (``-1`` for missing), the level labels and whether ordered.

    With ``levels`` given (prediction on new data, or ``C(x, levels=[...])``) the codes
    refer to those levels and a value outside them raises ``ValueError`` naming the
    column, the values and the levels, then ``unseen_hint``; with ``unseen="na"`` such
    a value gets code ``-1`` (missing) instead.

    Examples
    --------
    >>> codes, levels, ordered = encode_categorical(pd.Series(["b", "a", None, "b"]))
    >>> codes.tolist(), list(levels), ordered
    ([1, 0, -1, 1], ['a', 'b'], False)
    >>> encode_categorical(pd.Series(["b", "c"], name="g"), ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: Column 'g' has values not among its levels: ['c'] (levels: ['a', 'b']). Recode or drop those rows first.
    """
    s = densify(s)
    name = str(s.name) if name is None else name
    dt = s.dtype
    is_cat = isinstance(dt, pd.CategoricalDtype)
    ordered = bool(is_cat and dt.ordered)
    if levels is None:
        if is_cat:
            return s.cat.codes.to_numpy().astype(np.int64), pd.Index(dt.categories), ordered
        if pdt.is_bool_dtype(dt):
            levels = pd.Index([False, True], dtype=object)
        else:
            uniq = pd.unique(s.dropna().to_numpy(dtype=object))
            levels = pd.Index(_sorted_levels(list(uniq)), dtype=object)
    else:
        if isinstance(levels, str) or not np.iterable(levels):
            raise TypeError(
                f"levels for column {name!r} must be a list of values; got {levels!r}. "
                f"Use e.g. levels=['low', 'high']."
            )
        levels = levels if isinstance(levels, pd.Index) else pd.Index(list(levels), dtype=object)
        if not levels.is_unique:
            dup = list(pd.unique(levels[levels.duplicated()].to_numpy(dtype=object)))
            raise ValueError(
                f"levels for column {name!r} repeat {dup}; give each level once (got "
                f"{list(levels)})."
            )
    if is_cat:
        raw = s.cat.codes.to_numpy()
        pos = levels.get_indexer(dt.categories) if len(dt.categories) else np.empty(0, int)
        codes = np.full(len(raw), -1, dtype=np.int64)
        ok = raw >= 0
        codes[ok] = pos[raw[ok]]
    else:
        codes = levels.get_indexer(s.to_numpy(dtype=object)).astype(np.int64)
    new = (codes < 0) & s.notna().to_numpy()
    if new.any() and unseen == "raise":
        bad = list(pd.unique(s[new].to_numpy(dtype=object)))
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        lv = list(levels)
        lv_text = f"{lv[:20]}" + (f" and {len(lv) - 20} more" if len(lv) > 20 else "")
        raise ValueError(
            f"Column {name!r} has values not among its levels: {bad[:5]}{more} "
            f"(levels: {lv_text}). {unseen_hint}"
        )
    return codes, levels, ordered


def _sorted_levels(values: list) -> list:
    try:
        return sorted(values)
    except TypeError:  # mixed types: numbers by value, then strings, then the rest
        return sorted(values, key=_mixed_key)


def _mixed_key(v: Any) -> tuple:
    if isinstance(v, numbers.Real):
        return (0, float(v), "")
    if isinstance(v, str):
        return (1, 0.0, v)
    return (2, 0.0, f"{type(v).__name__}:{v}")
