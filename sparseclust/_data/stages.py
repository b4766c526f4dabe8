"""The stages of :func:`~sparseclust._data.table.build_table`, each testable alone.

``build_table`` runs them in this order; each takes and returns explicit values or
one of the small frozen records below:

1. :func:`read_input` -- ``x`` / ``data`` (a table, a 2-D array, or a formula with its
   data) -> :class:`InputData` (the frame read, the formula if any);
2. :func:`apply_formula` -- the formula (if any) and the response (``y=``) ->
   :class:`Variables` (one string-named column per variable);
3. :func:`resolve_overrides` -- ``C()`` / ``N()`` in the formula, ``categorical=`` and
   ``numeric=`` -> :class:`Overrides` (the kinds the user fixed, and why);
4. :func:`detect_types` -- each variable's kind (fixed, or detected from its dtype) ->
   :class:`ColumnTypes`;
5. :func:`encode_columns` -- the numeric block, the categorical codes and levels ->
   :class:`Encoded`;
6. :func:`apply_missing` -- the missing-value policy (``"raise"``, ``"drop"``,
   ``"native"``) -> the :class:`Encoded` of the kept rows, with ``dropped``; then
   :func:`check_kept_rows` -- enough rows left, the constant columns found, and
   :func:`drop_columns` -- those dropped where the method drops them; then
   :func:`check_magnitudes` -- no numeric column too large for the methods' sums of
   squares (:func:`magnitude_limit`);
7. :func:`~sparseclust._data.table.assemble_table` (in ``table.py``, beside the
   :class:`~sparseclust._data.table.ColumnTable` it builds).

Examples
--------
>>> df = pd.DataFrame({"x": [1.0, None, 4.0], "g": ["b", "a", "b"]})
>>> var = apply_formula(read_input(df, None))
>>> types = detect_types(var.frame, resolve_overrides(list(var.frame.columns)))
>>> [(i.name, i.kind) for i in types.infos]
[('x', 'numeric'), ('g', 'categorical')]
>>> enc = apply_missing(encode_columns(var.frame, types), missing="native")
>>> enc.numeric.ravel().tolist(), enc.codes.ravel().tolist(), enc.dropped.tolist()
([1.0, nan, 4.0], [1, 0, 1], [False, False, False])
"""

from __future__ import annotations

import ast
import functools
import inspect
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataWarning, FormulaError
from .dtypes import (
    ColumnInfo,
    NamesByKind,
    densify,
    detect_kind,
    encode_categorical,
    numeric_infos,
    to_float,
    unsupported_reason,
)
from .formula import ParsedFormula, _quote, evaluate_formula
from .params import is_package_module, user_stacklevel, written

__all__ = [
    "DROP_WARN_FRACTION",
    "SMALL_SD",
    "SPREAD_RATIO",
    "ColumnTypes",
    "Encoded",
    "InputData",
    "Overrides",
    "Variables",
    "apply_formula",
    "apply_missing",
    "as_frame",
    "check_kept_rows",
    "check_kinds",
    "check_magnitudes",
    "check_unique_names",
    "column_max_abs",
    "detect_types",
    "drop_hint",
    "encode_columns",
    "is_dask_collection",
    "magnitude_limit",
    "read_input",
    "repair_sd",
    "resolve_overrides",
    "warn_spread",
]

#: Fraction of rows dropped above which ``missing="drop"`` warns (the count is always reported).
DROP_WARN_FRACTION = 0.1


# ------------------------------------------------------------------------ records
@dataclass(frozen=True)
class InputData:
    """Stage 1: the caller's input read as a table.

    Attributes
    ----------
    frame : DataFrame
        The table as given (columns not yet renamed): the variables themselves, or
        for a formula the data the formula reads. Column names are unique as strings.
    formula : str or None
        The formula text; ``None`` when ``frame`` holds the variables.
    """

    frame: pd.DataFrame
    formula: str | None = None


@dataclass(frozen=True)
class Variables:
    """Stage 2: the variables to cluster, and the response.

    Attributes
    ----------
    frame : DataFrame
        One column per variable, named by ``str(label)``, on the input's index
        (at least one row and one column).
    response : Series or None
        The left-hand side of a two-sided formula, or ``y=``, on the same index.
    parsed : ParsedFormula or None
        The evaluated formula (forced kinds, given levels, term codes, names used);
        ``None`` without a formula.
    inputs : tuple of str or None
        The data columns the formula reads, in data order (checked on new data).
    """

    frame: pd.DataFrame
    response: pd.Series | None = None
    parsed: ParsedFormula | None = None
    inputs: tuple[str, ...] | None = None

    @property
    def from_formula(self) -> bool:
        """Whether a formula gave the variables (the error hints then speak of it)."""
        return self.parsed is not None


@dataclass(frozen=True)
class Overrides:
    """Stage 3: the kinds the user fixed.

    Attributes
    ----------
    kinds : dict
        Variable name -> ``"numeric"`` or ``"categorical"``.
    reasons : dict
        Variable name -> what fixed it: ``"C()"`` or ``"N()"`` (formula),
        ``"categorical="`` or ``"numeric="``.
    """

    kinds: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ColumnTypes(NamesByKind):
    """Stage 4: how each variable is read.

    Attributes
    ----------
    infos : tuple of ColumnInfo
        One per variable, in data order: name, dtype, kind, reason, ordered.
    plain : frozenset of str
        Plain numpy number columns read as numeric: converted to float64 as one block.
    series : dict
        Every other variable's column (sparse columns made dense), by name.
    """

    infos: tuple[ColumnInfo, ...]
    plain: frozenset[str] = frozenset()
    series: dict[str, pd.Series] = field(default_factory=dict)

    @property
    def column_infos(self) -> tuple[ColumnInfo, ...]:
        return self.infos


@dataclass(frozen=True, eq=False)
class Encoded:
    """Stages 5 and 6: the typed blocks.

    Attributes
    ----------
    numeric : ndarray (n_rows, p_num) float64
        The numeric block, NaN where missing.
    codes : ndarray (n_rows, p_cat) int64
        Codes into ``levels[name]``, ``-1`` where missing.
    levels : dict
        Categorical variable name -> its levels (an Index), in ``categorical_names`` order.
    numeric_names, categorical_names : tuple of str
        The variables of the columns of ``numeric`` and of ``codes``.
    dropped : ndarray bool
        One entry per input row, True where the missing-value policy dropped it
        (``numeric`` and ``codes`` hold the other rows). All False out of
        :func:`encode_columns`.
    """

    numeric: np.ndarray
    codes: np.ndarray
    levels: dict[str, pd.Index]
    numeric_names: tuple[str, ...]
    categorical_names: tuple[str, ...]
    dropped: np.ndarray


# ---------------------------------------------------------------- 1. read input
def read_input(x: Any, data: Any) -> InputData:
    """Stage 1: ``x`` / ``data`` -> the table read (a DataFrame, 2-D array, dict, Series,
    dataframe-interchange object or Dask DataFrame), and the formula if ``x`` is one.

    Examples
    --------
    >>> read_input(np.zeros((2, 2)), None).frame.columns.tolist()
    ['x0', 'x1']
    >>> read_input("~ a", pd.DataFrame({"a": [1.0]})).formula
    '~ a'
    """
    formula = None
    if isinstance(x, str):
        formula = x
        if data is None:
            raise TypeError(
                f"the formula {x!r} needs its data: pass data=, e.g. f({x!r}, data=df)."
            )
    elif x is None:
        if data is None:
            raise TypeError(
                "no data given (got None); pass a DataFrame, a 2-D array, or a formula "
                "with data=, e.g. f(df) or f('~ .', data=df)."
            )
    elif data is not None:
        raise TypeError(
            f"data= is for formulas (f('~ x1 + C(x2)', data=df)); got both a "
            f"{type(x).__name__} and data=. Pass the table alone, f(df), or a formula."
        )
    else:
        data = x
    frame = as_frame(data, "data")
    check_unique_names(frame, "data")
    return InputData(frame, formula)


# ------------------------------------------------------------- 2. apply formula
def _str_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """A shallow copy of ``frame`` with its column labels as ``str`` (the caller's frame
    untouched). Labels already held as strings keep their Index (rebuilding a wide
    one costs more than the rest of the front's reading)."""
    cols = frame.columns
    if isinstance(cols.dtype, pd.StringDtype) and not cols.hasnans:
        return frame.copy(deep=False)
    return frame.set_axis([str(c) for c in cols.tolist()], axis=1)


def apply_formula(
    inp: InputData,
    *,
    response: bool = False,
    y: Any = None,
    eval_env: dict[str, Any] | None = None,
) -> Variables:
    """Stage 2: evaluate the formula (if any) on the data, read the response (the
    formula's left-hand side or ``y=``, only when the method takes one: ``response``)
    and check there is at least one row and one variable.

    ``eval_env`` is the namespace for the formula's functions (default: the globals
    and locals of the first caller outside sparseclust).

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1.0, 2.0], "b": ["u", "v"], "id": [1, 2]})
    >>> var = apply_formula(read_input("~ . - id", df))
    >>> list(var.frame.columns), var.inputs
    (['a', 'b'], ('a', 'b'))
    """
    if inp.formula is not None:
        if eval_env is None:
            eval_env = _caller_namespace()
        parsed = evaluate_formula(inp.formula, inp.frame, response=response, eval_env=eval_env)
        df, resp = parsed.variables, parsed.response
        inputs = _formula_inputs(parsed.codes, inp.frame)
    else:
        parsed, inputs, resp = None, None, None
        df = _str_columns(inp.frame)
    if y is not None:
        if not response:
            raise ValueError(
                "y= was given, but this method takes no response; remove y= (the method "
                "clusters the columns of the data only)."
            )
        if resp is not None:
            raise ValueError(
                "the response is given twice (the formula's left-hand side and y=); use one."
            )
        resp = _response_series(y, df)
    if resp is not None and not response:
        raise FormulaError("this method takes no response (left-hand side / y=); remove it.")
    if df.shape[0] == 0:
        raise ValueError(
            f"data has no rows (shape {df.shape}); clustering needs at least one observation."
        )
    if df.shape[1] == 0:
        raise ValueError(
            f"data has no columns (shape {df.shape}); pass at least one variable to cluster on."
        )
    return Variables(df, resp, parsed, inputs)


# --------------------------------------------------------- 3. resolve overrides
def resolve_overrides(
    names: Sequence[str],
    categorical: Sequence[str] | None = None,
    numeric: Sequence[str] | None = None,
    formula_forced: Mapping[str, str] | None = None,
) -> Overrides:
    """Stage 3: the kinds fixed by ``C()`` / ``N()`` in the formula (``formula_forced``:
    name -> kind) and by ``categorical=`` / ``numeric=`` (lists of names, already
    normalised), checked against the variable ``names`` and against each other.

    Examples
    --------
    >>> resolve_overrides(["a", "b"], categorical=["b"]).kinds
    {'b': 'categorical'}
    >>> resolve_overrides(["a"], numeric=["z"])
    Traceback (most recent call last):
    ...
    ValueError: numeric= names not in data: ['z']. Available columns: ['a'].
    """
    names = list(names)
    for arg_name, given in (("categorical", categorical), ("numeric", numeric)):
        unknown = [n for n in given or [] if n not in names]
        if unknown:
            raise ValueError(
                f"{arg_name}= names not in data: {unknown}. Available columns: {names}."
            )
    both = sorted(set(categorical or []) & set(numeric or []))
    if both:
        raise ValueError(
            f"Columns {both} are in both categorical= and numeric=; keep each in one list."
        )
    reasons: dict[str, str] = {}  # name -> reason
    kinds: dict[str, str] = {}  # name -> kind
    for n, kind in (formula_forced or {}).items():
        kinds[n], reasons[n] = kind, ("C()" if kind == "categorical" else "N()")
        other = "numeric" if kind == "categorical" else "categorical"
        if n in ((numeric if other == "numeric" else categorical) or []):
            raise ValueError(
                f"{n!r} is {reasons[n][0]}({n}) in the formula but listed in {other}=; "
                f"keep one: remove it from {other}= or write it without {reasons[n]}."
            )
    for n in categorical or []:
        kinds[n], reasons[n] = "categorical", "categorical="
    for n in numeric or []:
        kinds[n], reasons[n] = "numeric", "numeric="
    return Overrides(kinds, reasons)


# -------------------------------------------------------------- 4. detect types
def detect_types(
    frame: pd.DataFrame,
    overrides: Overrides,
    *,
    allow_categorical: bool = True,
    allow_numeric: bool = True,
    formula: bool = False,
) -> ColumnTypes:
    """Stage 4: each variable's kind, fixed by ``overrides`` or detected from its dtype
    (:func:`~sparseclust._data.dtypes.detect_kind`). Unsupported dtypes are reported
    all at once; a kind the method does not take is an error (``allow_*``).
    ``formula``: whether the variables came from a formula (for the hints).

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1, 2], "b": ["u", "v"]})
    >>> types = detect_types(df, resolve_overrides(["a", "b"], categorical=["a"]))
    >>> [(i.name, i.kind, i.reason) for i in types.infos]
    [('a', 'categorical', 'categorical='), ('b', 'categorical', 'detected')]
    """
    forced, forced_by = overrides.kinds, overrides.reasons
    names = frame.columns.tolist()  # tolist: no per-label Index iteration
    dtypes = frame.dtypes.tolist()
    # Plain numpy number columns (the common wide case) skip the per-column Series work:
    # they are numeric unless forced categorical, and convert to float64 as one block.
    # Each distinct dtype is classified (and named) once.
    dtype_names = {
        dt: str(dt) for dt in set(dtypes) if isinstance(dt, np.dtype) and dt.kind in "fiu"
    }
    if not forced and len(dtype_names) == len(set(dtypes)):  # all plain, none forced
        types = ColumnTypes(
            numeric_infos(names, [dtype_names[dt] for dt in dtypes]), frozenset(names)
        )
        check_kinds(types, allow_categorical, allow_numeric, formula)
        return types
    plain = {c: dt in dtype_names for c, dt in zip(names, dtypes, strict=True)}
    for c, kind in forced.items():
        if kind == "categorical" and c in plain:
            plain[c] = False
    columns = {c: densify(frame[c]) for c in names if not plain[c]}
    _check_supported(columns, forced, formula)
    infos: list[ColumnInfo] = []
    for c, dt in zip(names, dtypes, strict=True):
        if plain[c]:
            infos.append(
                ColumnInfo(c, dtype_names[dt], "numeric", forced_by.get(c, "detected"), False)
            )
            continue
        s = columns[c]
        if c in forced:
            kind, reason = forced[c], forced_by[c]
        else:
            kind, reason = detect_kind(s), "detected"
        ordered = bool(
            kind == "categorical" and isinstance(s.dtype, pd.CategoricalDtype) and s.dtype.ordered
        )
        infos.append(ColumnInfo(c, str(s.dtype), kind, reason, ordered))
    types = ColumnTypes(tuple(infos), frozenset(c for c in names if plain[c]), columns)
    check_kinds(types, allow_categorical, allow_numeric, formula)
    return types


def _check_supported(columns: dict[str, pd.Series], forced: dict[str, str], formula: bool) -> None:
    """Unsupported dtypes, all at once (so the user fixes them in one go). A datetime
    column explicitly declared categorical is allowed (its distinct timestamps)."""
    bad = {}
    for c, s in columns.items():
        why = unsupported_reason(s)
        if why is not None and not (forced.get(c) == "categorical" and why.startswith("datetime")):
            bad[c] = why
    if bad:
        detail = ", ".join(f"{c}: {why}" for c, why in bad.items())
        raise TypeError(
            f"Columns {list(bad)} have unsupported dtypes ({detail}); convert them to numeric "
            f"or categorical, or drop them ({drop_hint(list(bad), formula)})."
        )


def check_kinds(
    types: ColumnTypes, allow_categorical: bool, allow_numeric: bool, formula: bool
) -> None:
    """A method for numeric (or categorical) data only rejects the other kind."""
    num_names, cat_names = types.numeric_names, types.categorical_names
    if cat_names and not allow_categorical:
        raise TypeError(
            f"this method clusters numeric data only; columns {cat_names} are categorical. "
            f"Drop them ({drop_hint(cat_names, formula)}), use craft() for "
            f"mixed numeric and categorical data, or pass numeric={cat_names} if they hold "
            "numbers."
        )
    if num_names and not allow_numeric:
        raise TypeError(
            f"this method clusters categorical data only; columns {num_names} are numeric. "
            f"Pass categorical={num_names} to treat them as categories, or drop them "
            f"({drop_hint(num_names, formula)})."
        )


# ------------------------------------------------------------------- 5. encode
def encode_columns(
    frame: pd.DataFrame,
    types: ColumnTypes,
    *,
    given_levels: Mapping[str, Any] | None = None,
) -> Encoded:
    """Stage 5: the float64 numeric block (an infinite value is an error) and the
    categorical codes with their levels (``given_levels``: those of
    ``C(x, levels=[...])`` in the formula, by name; the others are detected).

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1, 2], "b": ["v", "u"]})
    >>> enc = encode_columns(df, detect_types(df, Overrides()))
    >>> enc.numeric.ravel().tolist(), enc.codes.ravel().tolist(), list(enc.levels["b"])
    ([1.0, 2.0], [1, 0], ['u', 'v'])
    """
    num_names, cat_names = types.numeric_names, types.categorical_names
    n = len(frame)
    if len(types.plain) == frame.shape[1] == len(num_names):
        # all plain numbers, in frame order: one block conversion (a copy, never a view)
        num = frame.to_numpy(dtype=np.float64, copy=True)
    else:
        num = _numeric_block(frame, types, num_names)
    inf = np.isinf(num)
    if inf.any():  # the per-column counts only when there is something to report
        n_inf = inf.sum(axis=0)
        inf_counts = {c: int(n_inf[j]) for j, c in enumerate(num_names) if n_inf[j]}
        raise ValueError(
            f"Columns {list(inf_counts)} contain infinite values (per column: {inf_counts}); "
            f"replace them with finite values or NaN (missing), e.g. "
            f"df.replace([np.inf, -np.inf], np.nan)."
        )
    codes = np.empty((n, len(cat_names)), dtype=np.int64)
    levels: dict[str, pd.Index] = {}
    for j, c in enumerate(cat_names):
        given = given_levels.get(c) if given_levels else None
        codes[:, j], levels[c], _ = encode_categorical(
            types.series[c],
            given,
            name=c,
            unseen_hint=f"Add them to C({c}, levels=[...]), or recode or drop those rows first.",
        )
    return Encoded(num, codes, levels, tuple(num_names), tuple(cat_names), np.zeros(n, dtype=bool))


def _numeric_block(frame: pd.DataFrame, types: ColumnTypes, num_names: list[str]) -> np.ndarray:
    """The float64 numeric block of ``encode_columns``: the plain columns as one
    block, the others column by column."""
    reasons = {i.name: i.reason for i in types.infos}
    num = np.empty((len(frame), len(num_names)), dtype=np.float64)
    fast = [j for j, c in enumerate(num_names) if c in types.plain]
    if fast:
        pos = frame.columns.get_indexer([num_names[j] for j in fast])
        num[:, fast] = frame.iloc[:, pos].to_numpy(dtype=np.float64)
    for j, c in enumerate(num_names):
        if c not in types.plain:
            num[:, j] = to_float(types.series[c], c, source=reasons[c])
    return num


# ------------------------------------------------------------------ 6. missing
def apply_missing(
    enc: Encoded,
    *,
    missing: str,
    missing_choices: Sequence[str] = ("raise", "drop"),
    response: pd.Series | None = None,
    formula: bool = False,
) -> Encoded:
    """Stage 6: the missing-value policy.

    A variable entirely missing is an error. Rows with a missing cell (or a missing
    ``response``) raise under ``"raise"`` (the message names the other
    ``missing_choices`` as the fix), are dropped under ``"drop"`` (counted; a
    :class:`~sparseclust.exceptions.DataWarning` when more than
    :data:`DROP_WARN_FRACTION` go) or stay under ``"native"`` (NaN and ``-1``; a
    missing response is still an error). Returns ``enc`` on the kept rows, with
    ``dropped`` set.

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1.0, np.nan, 3.0]})
    >>> enc = encode_columns(df, detect_types(df, Overrides()))
    >>> apply_missing(enc, missing="native").numeric.ravel().tolist()
    [1.0, nan, 3.0]
    >>> apply_missing(enc, missing="raise")
    Traceback (most recent call last):
    ...
    ValueError: missing='raise': 1 of 3 rows have missing values (per column: {'a': 1}); pass missing='drop', or impute them first.
    """
    num_names, cat_names = enc.numeric_names, enc.categorical_names
    n = enc.numeric.shape[0]
    miss_num = np.isnan(enc.numeric)
    miss_cat = enc.codes < 0
    miss_row = miss_num.any(axis=1) | miss_cat.any(axis=1)
    resp_na = np.zeros(n, dtype=bool) if response is None else response.isna().to_numpy()
    miss_row |= resp_na
    na_num, na_cat = miss_num.sum(axis=0), miss_cat.sum(axis=0)
    all_na = [num_names[j] for j in np.flatnonzero(na_num == n).tolist()] + [
        cat_names[j] for j in np.flatnonzero(na_cat == n).tolist()
    ]
    if all_na:
        raise ValueError(
            f"Columns {all_na} are entirely missing (all {n} values); drop them "
            f"({drop_hint(all_na, formula)})."
        )
    if not miss_row.any():
        return enc
    counts = {num_names[j]: int(na_num[j]) for j in np.flatnonzero(na_num).tolist()}
    counts.update({cat_names[j]: int(na_cat[j]) for j in np.flatnonzero(na_cat).tolist()})
    if resp_na.any():
        counts[f"{response.name} (response)"] = int(resp_na.sum())
    if missing == "raise":
        others = [m for m in missing_choices if m != "raise"]
        fix = " or ".join(f"missing={m!r}" for m in others)
        fix = f"pass {fix}, or impute them first" if fix else "impute them first"
        raise ValueError(
            f"missing='raise': {int(miss_row.sum())} of {n} rows have missing values "
            f"(per column: {counts}); {fix}."
        )
    if missing == "drop":
        return _drop_rows(enc, miss_row, counts)
    if missing == "native" and resp_na.any():
        raise ValueError(
            f"the response {response.name!r} has {int(resp_na.sum())} missing values; "
            f"drop those rows first, or pass missing='drop'."
        )
    return enc


def _drop_rows(enc: Encoded, dropped: np.ndarray, counts: dict[str, int]) -> Encoded:
    """``missing="drop"``: the rows left (an error if none is), a warning above the fraction."""
    n = dropped.size
    if dropped.all():
        raise ValueError(
            f"missing='drop' leaves no data: every one of the {n} rows has a missing "
            f"value (per column: {counts}); drop the sparsest columns or impute first."
        )
    frac = dropped.mean()
    if frac > DROP_WARN_FRACTION:
        warnings.warn(
            f"missing='drop' dropped {int(dropped.sum())} of {n} rows ({frac:.0%}) "
            f"with missing values (per column: {counts}).",
            DataWarning,
            stacklevel=user_stacklevel(),
        )
    return replace(enc, numeric=enc.numeric[~dropped], codes=enc.codes[~dropped], dropped=dropped)


def constant_columns(enc: Encoded, names: Sequence[str]) -> list[str]:
    """The variables with one distinct observed value on the kept rows, in data order
    (``names``); none when at most one row is kept (one row is never constant).

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1.0, 1.0], "b": [1.0, 2.0], "g": ["u", "u"]})
    >>> constant_columns(encode_columns(df, detect_types(df, Overrides())), ["a", "b", "g"])
    ['a', 'g']
    """
    num, codes = enc.numeric, enc.codes
    if int((~enc.dropped).sum()) <= 1:
        return []
    with warnings.catch_warnings():  # all-NaN columns were rejected by apply_missing
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanmin(num, axis=0), np.nanmax(num, axis=0)
    const = {enc.numeric_names[j] for j in np.flatnonzero(lo == hi).tolist()}
    const |= {
        c
        for j, c in enumerate(enc.categorical_names)
        if np.unique(codes[:, j][codes[:, j] >= 0]).size <= 1
    }
    return [c for c in names if c in const]


def check_kept_rows(
    enc: Encoded,
    names: Sequence[str],
    *,
    min_rows: int = 1,
    constant: str = "raise",
    formula: bool = False,
    dotted: Sequence[str] = (),
) -> list[str]:
    """Stage 6, end: at least ``min_rows`` rows kept, and the constant variables
    (listed in data order, ``names``) as ``constant`` says: ``"raise"`` (an error
    naming them), ``"keep"``, or ``"drop"`` (returned, for :func:`drop_columns`). A
    constant variable the user named in a formula (not one that ``.`` expanded to,
    ``dotted``) is an error under ``"drop"`` too: it was asked for.

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1.0, 1.0], "b": [1.0, 2.0]})
    >>> enc = encode_columns(df, detect_types(df, Overrides()))
    >>> check_kept_rows(enc, ["a", "b"], constant="drop")
    ['a']
    >>> check_kept_rows(enc, ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: Columns ['a'] are constant (one distinct value) and carry no clustering information; drop them (e.g. df.drop(columns=['a']), or the formula '~ . - a' with data=df).
    """
    dropped = enc.dropped
    n_obs = int((~dropped).sum())
    if n_obs < min_rows:
        after = (
            f" after dropping {int(dropped.sum())} of {dropped.size} rows with missing values"
            if dropped.any()
            else ""
        )
        raise ValueError(
            f"n_obs={n_obs} must be >= {min_rows}{after}; pass more rows"
            + (", or impute the missing values instead of dropping them." if dropped.any() else ".")
        )
    if constant == "keep":
        return []
    const = constant_columns(enc, names)
    asked = [c for c in const if constant == "raise" or (formula and c not in dotted)]
    if asked:
        raise ValueError(
            f"Columns {asked} are constant (one distinct value"
            + (" among the rows kept" if dropped.any() else "")
            + f") and carry no clustering information; drop them "
            f"({drop_hint(asked, formula)})."
        )
    return const


def _shown(names: list[str]) -> list[str]:
    """The first ten names, then how many there are in all."""
    return names if len(names) <= 10 else [*names[:10], f"... ({len(names)} in all)"]


#: Numeric columns whose standard deviations differ by more than this factor (three
#: orders of magnitude) dominate an unscaled fit: the default ``scale=False`` warns.
SPREAD_RATIO = 1e3


def warn_spread(numeric: np.ndarray, names: Sequence[str], *, scale: bool) -> None:
    """A :class:`~sparseclust.exceptions.DataWarning` when a fit runs on unscaled numeric
    columns (``scale=False`` by default, not written by the caller) whose standard
    deviations differ by more than :data:`SPREAD_RATIO`, naming the widest and the
    narrowest column. A caller who wrote ``scale=False`` chose raw units: no warning.

    Examples
    --------
    >>> import warnings
    >>> X = np.array([[1.0, 1000.0], [2.0, 5000.0], [3.0, 9000.0]])
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_spread(X, ["a", "b"], scale=False)
    >>> print(str(w[0].message)[:60])
    Numeric columns differ in spread by 4000x (sd of 'b' 4000, o
    """
    if scale or written("scale") or numeric.shape[1] < 2 or numeric.shape[0] < 2:
        return
    if not np.isnan(numeric).any():  # complete data: the plain sd (nanstd copies)
        if _spread_bounded(numeric):
            return
        sd = numeric.std(axis=0, ddof=1)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            sd = np.nanstd(numeric, axis=0, ddof=1)
    ok = np.isfinite(sd) & (sd > 0)
    if ok.sum() < 2:
        return
    hi = int(np.flatnonzero(ok)[np.argmax(sd[ok])])
    lo = int(np.flatnonzero(ok)[np.argmin(sd[ok])])
    ratio = sd[hi] / sd[lo]
    if ratio <= SPREAD_RATIO:
        return
    warnings.warn(
        f"Numeric columns differ in spread by {ratio:.0f}x (sd of {names[hi]!r} "
        f"{sd[hi]:.4g}, of {names[lo]!r} {sd[lo]:.4g}): unscaled, the widest columns "
        "decide the clustering. Standardise them with scale=True; writing scale=False "
        "keeps raw units on purpose, without this warning.",
        DataWarning,
        stacklevel=user_stacklevel(),
    )


def _spread_bounded(numeric: np.ndarray) -> bool:
    """Whether the ranges of complete columns already rule the spread warning out (no sd
    needed: two reductions instead of a pass through a centred copy). A column of ``n``
    values and range ``R`` has its sample sd between ``R / sqrt(2 (n - 1))`` (both
    extremes once, the rest at the mean) and ``R sqrt(n / (n - 1)) / 2`` (half at each
    extreme), so the sds differ by at most ``sqrt(n / 2)`` times the ranges' ratio. The
    ratio is compared in logs: ranges of 1e-300 and 1e10 overflow a quotient, not a
    difference of logs (and a range too wide for a float is no bound: ``False``).

    Examples
    --------
    >>> _spread_bounded(np.array([[0.0, 0.0], [1.0, 3.0], [2.0, 1.0]]))
    True
    >>> _spread_bounded(np.array([[0.0, 0.0], [1.0, 3e6], [2.0, 1.0]]))
    False
    """
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing range is inf
        ranges = np.ptp(numeric, axis=0)
    if not np.isfinite(ranges).all():
        return False
    pos = ranges[ranges > 0]
    if pos.size < 2:
        return True
    log_ratio = np.log(pos.max()) - np.log(pos.min())
    return bool(log_ratio + np.log(np.sqrt(numeric.shape[0] / 2.0) * 1.01) <= np.log(SPREAD_RATIO))


def warn_constant(names: list[str], *, among_kept: bool = False) -> None:
    """The :class:`~sparseclust.exceptions.DataWarning` of constant columns dropped."""
    warnings.warn(
        f"Columns {_shown(names)} are constant (one distinct value"
        + (" among the rows kept" if among_kept else "")
        + ") and carry no clustering information: dropped (pass data without them, or "
        "name them in a formula to make this an error).",
        DataWarning,
        stacklevel=user_stacklevel(),
    )


def drop_columns(
    var: Variables, types: ColumnTypes, enc: Encoded, drop: Sequence[str]
) -> tuple[Variables, ColumnTypes, Encoded]:
    """Stage 6, last: the constant variables ``drop`` removed from the variables, the
    kinds and the blocks, with a :class:`~sparseclust.exceptions.DataWarning` naming
    them (the fit's :class:`~sparseclust._data.table.VariableSpec` lists them in
    ``dropped_constant``; new data need not have them).

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1.0, 1.0], "b": [1.0, 2.0]})
    >>> var = Variables(df)
    >>> types = detect_types(df, Overrides())
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # the DataWarning naming "a"
    ...     var, types, enc = drop_columns(var, types, encode_columns(df, types), ["a"])
    >>> types.names, enc.numeric.tolist(), list(var.frame.columns)
    (['b'], [[1.0], [2.0]], ['b'])
    """
    if not drop:
        return var, types, enc
    gone = set(drop)
    shown = _shown(list(drop))
    if gone >= set(types.names):
        kept = " among the rows kept" if enc.dropped.any() else ""
        raise ValueError(
            f"every column is constant (one distinct value{kept}): {shown}; there is "
            "nothing to cluster on."
        )
    warn_constant(list(drop), among_kept=bool(enc.dropped.any()))
    num = [j for j, c in enumerate(enc.numeric_names) if c not in gone]
    cat = [j for j, c in enumerate(enc.categorical_names) if c not in gone]
    enc = replace(
        enc,
        numeric=enc.numeric[:, num],
        codes=enc.codes[:, cat],
        levels={c: lv for c, lv in enc.levels.items() if c not in gone},
        numeric_names=tuple(enc.numeric_names[j] for j in num),
        categorical_names=tuple(enc.categorical_names[j] for j in cat),
    )
    var, types = remove_variables(var, types, list(drop))
    return var, types, enc


def remove_variables(
    var: Variables, types: ColumnTypes, drop: Sequence[str]
) -> tuple[Variables, ColumnTypes]:
    """The variables ``drop`` removed from the variables (frame, formula terms, inputs)
    and from the kinds (constant columns, and columns the screen drops)."""
    gone = set(drop)
    types = replace(
        types,
        infos=tuple(i for i in types.infos if i.name not in gone),
        plain=frozenset(types.plain - gone),
        series={c: v for c, v in types.series.items() if c not in gone},
    )
    parsed = var.parsed
    if parsed is not None:
        codes = {c: code for c, code in parsed.codes.items() if c not in gone}
        parsed = replace(
            parsed,
            variables=parsed.variables.drop(columns=list(drop)),
            codes=codes,
            forced={c: k for c, k in parsed.forced.items() if c not in gone},
            levels={c: lv for c, lv in parsed.levels.items() if c not in gone},
        )
    inputs = var.inputs
    if inputs is not None:
        used = set().union(*(_names_in(code) for code in parsed.codes.values()))
        inputs = tuple(c for c in inputs if c in used or c not in gone)
    var = replace(var, frame=var.frame.drop(columns=list(drop)), parsed=parsed, inputs=inputs)
    return var, types


# ------------------------------------------------------------ 6b. magnitudes
#: The fourth root of float64's largest value (1.16e77).
_ROOT4_MAX = float(np.sqrt(np.sqrt(np.finfo(np.float64).max)))

#: Below this sd, a column's squared deviations are below float64's smallest normal
#: number (2.2e-308) and lose digits, down to 0 at 1e-162: :func:`repair_sd` then
#: recomputes the sd from deviations divided by their largest magnitude.
SMALL_SD = 1e-150


def magnitude_limit(n_rows: int, n_vars: int) -> float:
    """The largest magnitude a numeric column may hold, ``DBL_MAX^(1/4) / (2 n p^(1/4))``
    for ``n`` rows and ``p`` variables.

    The methods form sums of squared differences -- per feature over all pairs of
    rows at most (sparse hierarchical clustering's dissimilarity totals, ``a_j <=
    n^2 (2 M)^2 / 2`` for values of magnitude ``M``; k-means, DP-means and CRAFT sum
    over rows only) -- and the sparse methods square those again (the norms of the
    weight projection, ``sum_j a_j^2 <= 4 p n^4 M^4``, and of ``D w``). The limit keeps
    the largest at a quarter of float64's largest value (headroom for intermediate
    terms such as ``|x|^2 + |c|^2`` in distances by matrix products). It is far above
    any measured quantity: 1.7e75 for 24 rows x 4 variables, 1e70 for a million rows
    x 1,000 variables.

    Examples
    --------
    >>> f"{magnitude_limit(24, 4):.1e}", f"{magnitude_limit(10**6, 1000):.1e}"
    ('1.7e+75', '1.0e+70')
    """
    n, p = max(int(n_rows), 1), max(int(n_vars), 1)
    return _ROOT4_MAX / (2.0 * n * float(np.sqrt(np.sqrt(p))))


def column_max_abs(num: np.ndarray) -> np.ndarray:
    """Each column's largest magnitude over its observed cells (0 with none).

    Examples
    --------
    >>> column_max_abs(np.array([[1.0, np.nan], [-3.0, np.nan]])).tolist()
    [3.0, 0.0]
    """
    num = np.asarray(num, dtype=np.float64)
    # max(largest, -smallest) with 0 as start: no copy of the data (fmax skips NaN;
    # + 0.0 makes the zero of a column of -0.0s positive, as abs would)
    top = np.fmax.reduce(num, axis=0, initial=0.0)
    return np.fmax(top, np.negative(np.fmin.reduce(num, axis=0, initial=0.0))) + 0.0


def check_magnitudes(
    max_abs: np.ndarray,
    names: Sequence[str],
    n_rows: int,
    n_vars: int,
    *,
    formula: bool = False,
    newdata: bool = False,
) -> None:
    """Stage 6b, after the constant columns are gone: a numeric column whose largest
    magnitude (``max_abs``, one per name) exceeds :func:`magnitude_limit` for
    ``n_rows`` rows and ``n_vars`` variables is an error naming it, its largest
    magnitude and the fix (the methods' sums of squares would overflow float64). The
    data front, the Dask reader (over all partitions) and the reading of new data for
    ``predict`` (``newdata``) apply this one rule.

    Examples
    --------
    >>> check_magnitudes(np.array([1.0, 3e300]), ["a", "big"], 24, 2)
    Traceback (most recent call last):
    ...
    ValueError: Columns ['big'] hold values too large to cluster (largest magnitude: {'big': '3e+300'}): above 2.0e+75 in magnitude, the sums of squared differences over 24 rows and 2 variables (and their squares) overflow float64. Rescale them first, e.g. df['big'] / 1e300, or divide by the largest magnitude, df['big'] / df['big'].abs().max() (their sd overflows too).
    """
    limit = magnitude_limit(n_rows, n_vars)
    large = {c: float(m) for c, m in zip(names, max_abs, strict=True) if m > limit}
    if not large:
        return
    cols = list(large)
    shown = {c: f"{m:.3g}" for c, m in large.items()}
    first = cols[0]
    power = f"1e{int(np.floor(np.log10(large[first])))}"
    if formula:
        fix = f"e.g. I({first} / {power}) in the formula, or rescale the data's column"
    else:
        fix = (
            f"e.g. df[{first!r}] / {power}, or divide by the largest magnitude, "
            f"df[{first!r}] / df[{first!r}].abs().max() (their sd overflows too)"
        )
    what = "newdata columns" if newdata else "Columns"
    hint = " as the data of the fit were" if newdata else " first"
    raise ValueError(
        f"{what} {cols} hold values too large to cluster (largest magnitude: {shown}): "
        f"above {limit:.1e} in magnitude, the sums of squared differences over "
        f"{int(n_rows)} rows and {int(n_vars)} variables (and their squares) overflow "
        "float64. "
        f"Rescale them{hint}, {fix}."
    )


def repair_sd(x: np.ndarray, center: np.ndarray, sd: np.ndarray, ddof: int = 1) -> np.ndarray:
    """``sd`` (the sds of the columns of ``x`` about ``center``, NaN missing) with every
    sd below :data:`SMALL_SD` (squared deviations underflowed) recomputed from the
    deviations divided by their largest magnitude: scale before squaring. A column of
    magnitude 1e-300 is then standardised like any other instead of keeping a zero sd
    (which standardising leaves at 1, the column unscaled). Other sds are returned
    bit for bit; ``sd`` itself is not changed.

    Examples
    --------
    >>> x = np.array([[1e-300], [3e-300]])
    >>> sd = np.nanstd(x, axis=0, ddof=1)
    >>> sd.tolist(), (repair_sd(x, np.nanmean(x, axis=0), sd) / 1e-300).round(6).tolist()
    ([0.0], [1.414214])
    """
    small = np.flatnonzero(np.asarray(sd) < SMALL_SD)
    if not small.size:
        return sd
    sd = np.array(sd, dtype=np.float64, copy=True)
    for j in small.tolist():
        col = x[:, j][~np.isnan(x[:, j])]
        if col.size <= ddof or col.min() == col.max():  # constant: its sd stays as given
            continue
        dev = col - center[j]
        top = float(np.abs(dev).max())
        if top > 0:
            unit = dev / top
            sd[j] = top * float(np.sqrt(np.dot(unit, unit) / (dev.size - ddof)))
    return sd


# ----------------------------------------------------------------- input helpers
def as_frame(data: Any, name: str) -> pd.DataFrame:
    """``data`` as a DataFrame: a DataFrame as is, a Series or dict as a frame, a Dask
    DataFrame computed (with a :class:`~sparseclust.exceptions.DataWarning` unless
    ``name`` is ``"newdata"``), a 2-D array with columns ``x0, x1, ...``."""
    if isinstance(data, pd.DataFrame):
        return data
    if is_dask_collection(data):
        # Methods without a Dask backend read the rows into memory, keeping the names
        # and the index (craft() and dpmeans() dispatch before reaching here).
        data = data.compute()
        if name != "newdata":
            warnings.warn(
                f"this method has no Dask backend: the Dask DataFrame ({len(data)} rows) was "
                "computed into memory. craft() and dpmeans() run on Dask.",
                DataWarning,
                stacklevel=user_stacklevel(),
            )
        if isinstance(data, pd.Series):
            return data.to_frame()
        return data
    if isinstance(data, pd.Series):
        return data.to_frame()
    if isinstance(data, dict):
        return pd.DataFrame(data)
    if data is None:
        raise TypeError(f"{name} is None; pass a DataFrame, a 2-D array or a formula with data=.")
    if hasattr(data, "__dataframe__") and not isinstance(data, np.ndarray):
        try:
            return pd.api.interchange.from_dataframe(data)
        except Exception:  # noqa: BLE001
            pass
    return _array_frame(data, name)


def _array_frame(data: Any, name: str) -> pd.DataFrame:
    """A 2-D array-like as a DataFrame with columns ``x0, x1, ...``."""
    try:
        arr = np.asarray(data)
    except Exception as err:  # noqa: BLE001
        raise TypeError(
            f"{name} of type {type(data).__name__} is not a table ({err}); pass a DataFrame "
            f"or a 2-D array."
        ) from None
    if arr.ndim == 1:
        raise ValueError(
            f"{name} is 1-D (shape {arr.shape}); pass a 2-D array, e.g. x.reshape(-1, 1) for "
            f"one variable, or a DataFrame."
        )
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (rows x variables); got shape {arr.shape}. Pass a DataFrame "
            f"or a 2-D array."
        )
    if arr.dtype.kind not in "biufcOUSMm":
        raise TypeError(
            f"{name} has unsupported dtype {arr.dtype}; pass numbers, strings or a DataFrame."
        )
    # no copy (pandas copies an ndarray by default): the frame is only read, and a write
    # to it would copy on write, so the caller's array stays as it is
    return pd.DataFrame(arr, columns=array_columns(arr.shape[1]), copy=False)


@functools.lru_cache(maxsize=16)
def array_columns(p: int) -> pd.Index:
    """The column labels ``x0, x1, ...`` of a 2-D array's ``p`` columns: one Index per
    width, made once (an Index is immutable; building 1000 string labels, and the frame
    reading them, cost half a millisecond a call).

    Examples
    --------
    >>> array_columns(3).tolist(), array_columns(3) is array_columns(3)
    (['x0', 'x1', 'x2'], True)
    """
    return pd.Index([f"x{j}" for j in range(p)])


def is_dask_collection(x: Any) -> bool:
    """True for a Dask DataFrame or Series (without importing Dask when it is not in use)."""
    mod = type(x).__module__ or ""
    return mod.startswith("dask") and hasattr(x, "npartitions") and hasattr(x, "to_delayed")


def check_unique_names(df: pd.DataFrame, what: str) -> None:
    """Column names must be unique as strings (``1`` and ``"1"`` collide)."""
    cols = df.columns
    if cols.inferred_type == "string" and cols.is_unique:
        return  # all labels strings, unique (both cached by the Index): none collide
    names = [str(c) for c in cols.tolist()]  # tolist: no per-label Index iteration
    if len(set(names)) != len(names):
        dup = sorted({c for c in names if names.count(c) > 1})
        raise ValueError(
            f"Duplicated column names {dup} in {what}; rename them so each is unique "
            f"(columns are named by str(label), so 1 and '1' collide)."
        )


def drop_hint(cols: list[str], formula: bool) -> str:
    """How to drop ``cols``: from the formula, or from the table."""
    minus = " ".join(f"- {_quote(c)}" for c in cols)
    if formula:
        return f"e.g. remove them from the formula, or '~ . {minus}'"
    return f"e.g. df.drop(columns={cols}), or the formula '~ . {minus}' with data=df"


def _response_series(y: Any, df: pd.DataFrame) -> pd.Series:
    """``y=`` as a Series on the data's index (a Series with the same labels is aligned)."""
    if isinstance(y, str):
        raise ValueError(
            f"y= takes the response values, not a column name; got y={y!r}. To name a "
            f"column use a formula, e.g. f('{y} ~ .', data=df)."
        )
    if isinstance(y, pd.Series):
        if len(y) != len(df):
            raise ValueError(
                f"y has {len(y)} values but data has {len(df)} rows; pass one value per row."
            )
        if not y.index.equals(df.index):
            same_labels = (
                y.index.is_unique
                and df.index.is_unique
                and y.index.sort_values().equals(df.index.sort_values())
            )
            y = y.reindex(df.index) if same_labels else y.set_axis(df.index)
        return y.rename(y.name if y.name is not None else "y")
    arr = np.asarray(y)
    if arr.ndim != 1 or len(arr) != len(df):
        raise ValueError(
            f"y must be 1-D with one value per row ({len(df)}); got shape {arr.shape}."
        )
    return pd.Series(arr, index=df.index, name="y")


def _caller_namespace() -> dict[str, Any]:
    """Globals and locals of the first frame outside sparseclust (for formula functions)."""
    frame = inspect.currentframe()
    while frame is not None:
        if not is_package_module(frame.f_globals.get("__name__", "")):
            env = dict(frame.f_globals)
            env.update(frame.f_locals)
            return env
        frame = frame.f_back
    return {}


def _names_in(code: str) -> set[str]:
    """Bare names and ``Q("...")`` names in a term's code."""
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return set()
    out = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "Q"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            out.add(str(node.args[0].value))
    return out


def _formula_inputs(codes: dict[str, str], data: pd.DataFrame) -> tuple[str, ...]:
    """The columns of ``data`` that the term ``codes`` read, in data order."""
    used: set[str] = set()
    for code in codes.values():
        used |= _names_in(code)
    return tuple(c for c in (str(c) for c in data.columns) if c in used)
