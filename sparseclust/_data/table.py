"""The data front: any accepted input -> one typed :class:`ColumnTable`.

Every method calls :func:`build_table`; none re-implements type detection, the
missing-value policy, formula handling or column checks. :func:`transform_like`
reads new data (prediction) the way a fitted :class:`VariableSpec` says.

Examples
--------
>>> df = pd.DataFrame({"x": [1.0, 2.0, 4.0], "g": ["b", "a", "b"]}, index=[10, 11, 12])
>>> t = build_table(df)
>>> t.spec.to_frame()
            dtype         kind    reason  n_levels  ordered
variable
x         float64      numeric  detected       NaN    False
g             ...  categorical  detected       2.0    False
>>> X, names, groups = t.to_numeric()
>>> names, groups.tolist()
(['x', 'g[a]', 'g[b]'], [0, 1, 1])
"""

from __future__ import annotations

import ast
import inspect
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataWarning, FormulaError
from .dtypes import (
    ColumnInfo,
    densify,
    detect_kind,
    encode_categorical,
    to_float,
    unsupported_reason,
)
from .formula import evaluate_formula, evaluate_terms
from .params import check_choice, check_names, is_package_module, user_stacklevel

__all__ = ["ColumnTable", "VariableSpec", "build_table", "transform_like"]

#: Fraction of rows dropped above which ``missing="drop"`` warns (the count is always reported).
DROP_WARN_FRACTION = 0.1


@dataclass(frozen=True, eq=False)
class VariableSpec:
    """How each variable was read; enough to read new data the same way.

    Two specs are equal when they read the same variables the same way (names,
    kinds, reasons, levels in order, formula terms and response).
    """

    columns: tuple[ColumnInfo, ...]
    levels: dict[str, pd.Index]
    formula: str | None = None
    codes: dict[str, str] | None = None  # formula term codes by variable name
    response: str | None = None
    #: the names of the caller's namespace that the formula uses (for new data)
    eval_env: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    #: the data columns a formula reads (in data order), checked on new data
    inputs: tuple[str, ...] | None = None

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def numeric_names(self) -> list[str]:
        return [c.name for c in self.columns if c.kind == "numeric"]

    @property
    def categorical_names(self) -> list[str]:
        return [c.name for c in self.columns if c.kind == "categorical"]

    @property
    def kinds(self) -> dict[str, str]:
        return {c.name: c.kind for c in self.columns}

    def to_frame(self) -> pd.DataFrame:
        """The detection table: one row per variable (dtype, kind, why, levels, ordered)."""
        return pd.DataFrame(
            {
                "dtype": [c.dtype for c in self.columns],
                "kind": [c.kind for c in self.columns],
                "reason": [c.reason for c in self.columns],
                "n_levels": [
                    float(len(self.levels[c.name])) if c.kind == "categorical" else np.nan
                    for c in self.columns
                ],
                "ordered": [bool(c.ordered) for c in self.columns],
            },
            index=pd.Index(self.names, name="variable"),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VariableSpec):
            return NotImplemented
        return (
            self.columns == other.columns
            and self.formula == other.formula
            and self.codes == other.codes
            and self.response == other.response
            and self.inputs == other.inputs
            and self.levels.keys() == other.levels.keys()
            and all(list(self.levels[k]) == list(other.levels[k]) for k in self.levels)
        )

    __hash__ = None  # type: ignore[assignment] - holds dicts, like a dict

    def describe(self) -> str:
        """``"13 variables (10 numeric, 3 categorical)"``."""
        n_num, n_cat = len(self.numeric_names), len(self.categorical_names)
        return f"{n_num + n_cat} variables ({n_num} numeric, {n_cat} categorical)"


@dataclass(frozen=True, eq=False)
class ColumnTable:
    """Typed column table handed to the method cores.

    Attributes
    ----------
    numeric : ndarray (n_obs, p_num) float64
        Numeric block (NaN only under ``missing="native"``).
    codes : ndarray (n_obs, p_cat) int64
        Categorical block as integer codes into ``spec.levels[name]`` (``-1`` missing).
    spec : VariableSpec
        Names, kinds, levels and how they were detected.
    index : Index
        The caller's full row index.
    dropped : ndarray bool
        One entry per input row; True where the row was dropped for missing values.
    response : Series or None
        The left-hand side of a two-sided formula (or ``y=``), kept rows only.
    frame : DataFrame
        The typed variables on the kept rows (for profiles and summaries).
    """

    numeric: np.ndarray
    codes: np.ndarray
    spec: VariableSpec
    index: pd.Index
    dropped: np.ndarray
    frame: pd.DataFrame
    missing: str = "raise"
    response: pd.Series | None = None
    _extra: dict = field(default_factory=dict)

    @property
    def n_obs(self) -> int:
        return int(self.numeric.shape[0] if self.numeric.size else self.codes.shape[0])

    @property
    def n_dropped(self) -> int:
        return int(self.dropped.sum())

    @property
    def kept_index(self) -> pd.Index:
        return self.index[~self.dropped]

    @property
    def names(self) -> list[str]:
        return self.spec.names

    @property
    def numeric_names(self) -> list[str]:
        return self.spec.numeric_names

    @property
    def categorical_names(self) -> list[str]:
        return self.spec.categorical_names

    @property
    def levels(self) -> dict[str, pd.Index]:
        return self.spec.levels

    def to_numeric(self, *, one_hot: bool = True) -> tuple[np.ndarray, list[str], np.ndarray]:
        """One numeric matrix: the numeric block then a FULL one-hot block per categorical.

        Returns ``(X, column_names, groups)``; ``groups[j]`` is the index (in
        ``spec.names``) of the variable column ``j`` comes from. One-hot columns are
        named ``"var[level]"``; a missing categorical value gives a row of NaN.
        ``X`` is always a new array: changing it leaves the table as it was.
        """
        if self.codes.shape[1] and not one_hot:
            raise ValueError(
                f"one_hot=False needs numeric variables only; {self.categorical_names} are "
                f"categorical. Use one_hot=True, or read them as numbers with numeric=[...]."
            )
        blocks = [np.array(self.numeric, dtype=np.float64, copy=True)]
        names = list(self.numeric_names)
        var_pos = {n: i for i, n in enumerate(self.names)}
        groups = [var_pos[n] for n in self.numeric_names]
        for j, name in enumerate(self.categorical_names):
            lev = self.levels[name]
            c = self.codes[:, j]
            block = np.zeros((len(c), len(lev)))
            ok = c >= 0
            block[np.flatnonzero(ok), c[ok]] = 1.0
            block[~ok] = np.nan
            blocks.append(block)
            names.extend(f"{name}[{lv}]" for lv in lev)
            groups.extend([var_pos[name]] * len(lev))
        X = np.hstack(blocks) if len(blocks) > 1 else blocks[0]
        return np.ascontiguousarray(X, dtype=np.float64), names, np.asarray(groups, dtype=np.int64)

    def expand(self, values: Any, *, fill: Any = pd.NA) -> pd.Series:
        """Put per-kept-row values back on the full input index (``fill`` on dropped rows).

        Integers (and booleans) come back as nullable ``Int64`` / ``boolean`` with
        ``<NA>`` on dropped rows, floats as ``float64`` with NaN, anything else as
        ``object`` with ``fill``.
        """
        arr = np.asarray(values)
        n_kept = int((~self.dropped).sum())
        if arr.ndim != 1 or len(arr) != n_kept:
            raise ValueError(
                f"values must be 1-D with one entry per kept row ({n_kept}); got shape {arr.shape}."
            )
        kept = np.flatnonzero(~self.dropped)
        if arr.dtype.kind in "iu":
            out = pd.array([fill] * len(self.index), dtype="Int64")
        elif arr.dtype.kind == "b":
            out = pd.array([fill] * len(self.index), dtype="boolean")
        elif arr.dtype.kind == "f":
            out = np.full(len(self.index), np.nan if pd.isna(fill) else fill, dtype=np.float64)
        else:
            out = np.full(len(self.index), fill, dtype=object)
        out[kept] = arr
        return pd.Series(
            out, index=self.index, dtype=object if arr.dtype.kind not in "iubf" else None
        )


def build_table(
    x: Any,
    *,
    data: Any = None,
    categorical: Any = None,
    numeric: Any = None,
    missing: str = "raise",
    missing_choices: tuple[str, ...] = ("raise", "drop"),
    allow_categorical: bool = True,
    allow_numeric: bool = True,
    response: bool = False,
    y: Any = None,
    allow_constant: bool = False,
    min_rows: int = 1,
    eval_env: dict[str, Any] | None = None,
) -> ColumnTable:
    """Read ``data`` (DataFrame, 2-D array or formula + DataFrame) into a :class:`ColumnTable`.

    ``missing`` is ``"raise"`` (any missing cell is an error naming the columns),
    ``"drop"`` (rows with a missing cell are dropped, counted and reported; a
    :class:`~sparseclust.exceptions.DataWarning` when more than 10% go) or
    ``"native"`` (kept; NaN in the numeric block, ``-1`` in the codes) where the
    method supports it (``missing_choices``). The input is never modified.

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1.0, None, 3.0, 4.0], "g": ["u", "v", "u", "v"]})
    >>> build_table(df)
    Traceback (most recent call last):
    ...
    ValueError: missing='raise': 1 of 4 rows have missing values (per column: {'a': 1}); pass missing='drop', or impute them first.
    >>> t = build_table("~ a + C(g)", data=df.fillna(2.0))
    >>> t.numeric.ravel().tolist(), t.codes.ravel().tolist(), t.spec.kinds
    ([1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1], {'a': 'numeric', 'g': 'categorical'})
    """
    check_choice("missing", missing, list(missing_choices))
    categorical = check_names("categorical", categorical)
    numeric = check_names("numeric", numeric)

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
    parsed = None
    if formula is not None:
        if eval_env is None:
            eval_env = _caller_namespace()
        frame_in = _as_frame(data, "data")
        _check_unique_names(frame_in, "data")
        parsed = evaluate_formula(formula, frame_in, response=response, eval_env=eval_env)
        df = parsed.variables
        resp = parsed.response
    else:
        df = _as_frame(data, "data")
        _check_unique_names(df, "data")
        df = df.set_axis([str(c) for c in df.columns], axis=1)
        resp = None
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

    names = list(df.columns)
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

    forced_by: dict[str, str] = {}  # name -> reason
    forced: dict[str, str] = {}  # name -> kind
    for n, kind in (parsed.forced if parsed else {}).items():
        forced[n], forced_by[n] = kind, ("C()" if kind == "categorical" else "N()")
        other = "numeric" if kind == "categorical" else "categorical"
        if n in ((numeric if other == "numeric" else categorical) or []):
            raise ValueError(
                f"{n!r} is {forced_by[n][0]}({n}) in the formula but listed in {other}=; "
                f"keep one: remove it from {other}= or write it without {forced_by[n]}."
            )
    for n in categorical or []:
        forced[n], forced_by[n] = "categorical", "categorical="
    for n in numeric or []:
        forced[n], forced_by[n] = "numeric", "numeric="

    # Plain numpy number columns (the common wide case) skip the per-column Series work:
    # they are numeric unless forced categorical, and convert to float64 as one block.
    plain = {
        c: isinstance(dt, np.dtype) and dt.kind in "fiu" and forced.get(c) != "categorical"
        for c, dt in zip(names, df.dtypes, strict=True)
    }
    columns = {c: densify(df[c]) for c in names if not plain[c]}

    # Unsupported dtypes (all at once, so the user fixes them in one go). A datetime
    # column explicitly declared categorical is allowed (its distinct timestamps).
    bad = {}
    for c, s in columns.items():
        why = unsupported_reason(s)
        if why is not None and not (forced.get(c) == "categorical" and why.startswith("datetime")):
            bad[c] = why
    if bad:
        detail = ", ".join(f"{c}: {why}" for c, why in bad.items())
        raise TypeError(
            f"Columns {list(bad)} have unsupported dtypes ({detail}); convert them to numeric "
            f"or categorical, or drop them ({_drop_hint(list(bad), parsed is not None)})."
        )

    infos: list[ColumnInfo] = []
    dtype_names: dict[Any, str] = {}
    for c, dt in zip(names, df.dtypes, strict=True):
        if plain[c]:
            if dt not in dtype_names:
                dtype_names[dt] = str(dt)
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

    num_names = [i.name for i in infos if i.kind == "numeric"]
    cat_names = [i.name for i in infos if i.kind == "categorical"]
    if cat_names and not allow_categorical:
        raise TypeError(
            f"this method clusters numeric data only; columns {cat_names} are categorical. "
            f"Drop them ({_drop_hint(cat_names, parsed is not None)}), use craft() for "
            f"mixed numeric and categorical data, or pass numeric={cat_names} if they hold "
            "numbers."
        )
    if num_names and not allow_numeric:
        raise TypeError(
            f"this method clusters categorical data only; columns {num_names} are numeric. "
            f"Pass categorical={num_names} to treat them as categories, or drop them "
            f"({_drop_hint(num_names, parsed is not None)})."
        )

    n = len(df)
    reasons = {i.name: i.reason for i in infos}
    num = np.empty((n, len(num_names)), dtype=np.float64)
    fast = [j for j, c in enumerate(num_names) if plain[c]]
    if fast:
        pos = df.columns.get_indexer([num_names[j] for j in fast])
        num[:, fast] = df.iloc[:, pos].to_numpy(dtype=np.float64)
    for j, c in enumerate(num_names):
        if not plain[c]:
            num[:, j] = to_float(columns[c], c, source=reasons[c])
    n_inf = np.isinf(num).sum(axis=0)
    inf_counts = {c: int(n_inf[j]) for j, c in enumerate(num_names) if n_inf[j]}
    if inf_counts:
        raise ValueError(
            f"Columns {list(inf_counts)} contain infinite values (per column: {inf_counts}); "
            f"replace them with finite values or NaN (missing), e.g. "
            f"df.replace([np.inf, -np.inf], np.nan)."
        )
    codes = np.empty((n, len(cat_names)), dtype=np.int64)
    levels: dict[str, pd.Index] = {}
    for j, c in enumerate(cat_names):
        given = parsed.levels.get(c) if parsed else None
        codes[:, j], levels[c], _ = encode_categorical(
            columns[c],
            given,
            name=c,
            unseen_hint=f"Add them to C({c}, levels=[...]), or recode or drop those rows first.",
        )

    # Missing values.
    miss_num = np.isnan(num)
    miss_cat = codes < 0
    miss_row = miss_num.any(axis=1) | miss_cat.any(axis=1)
    resp_na = np.zeros(n, dtype=bool) if resp is None else resp.isna().to_numpy()
    miss_row |= resp_na
    na_num, na_cat = miss_num.sum(axis=0), miss_cat.sum(axis=0)
    all_na = [c for j, c in enumerate(num_names) if na_num[j] == n] + [
        c for j, c in enumerate(cat_names) if na_cat[j] == n
    ]
    if all_na:
        raise ValueError(
            f"Columns {all_na} are entirely missing (all {n} values); drop them "
            f"({_drop_hint(all_na, parsed is not None)})."
        )
    counts = {c: int(na_num[j]) for j, c in enumerate(num_names) if na_num[j]}
    counts.update({c: int(na_cat[j]) for j, c in enumerate(cat_names) if na_cat[j]})
    if resp_na.any():
        counts[f"{resp.name} (response)"] = int(resp_na.sum())
    dropped = np.zeros(n, dtype=bool)
    if miss_row.any():
        if missing == "raise":
            others = [m for m in missing_choices if m != "raise"]
            fix = " or ".join(f"missing={m!r}" for m in others)
            fix = f"pass {fix}, or impute them first" if fix else "impute them first"
            raise ValueError(
                f"missing='raise': {int(miss_row.sum())} of {n} rows have missing values "
                f"(per column: {counts}); {fix}."
            )
        if missing == "drop":
            dropped = miss_row
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
            num = num[~dropped]
            codes = codes[~dropped]
        elif missing == "native" and resp_na.any():
            raise ValueError(
                f"the response {resp.name!r} has {int(resp_na.sum())} missing values; "
                f"drop those rows first, or pass missing='drop'."
            )

    n_obs = int((~dropped).sum())
    if n_obs < min_rows:
        after = (
            f" after dropping {int(dropped.sum())} of {n} rows with missing values"
            if dropped.any()
            else ""
        )
        raise ValueError(
            f"n_obs={n_obs} must be >= {min_rows}{after}; pass more rows"
            + (", or impute the missing values instead of dropping them." if dropped.any() else ".")
        )

    if not allow_constant and n_obs > 1:
        with warnings.catch_warnings():  # all-NaN columns were rejected above
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = np.nanmin(num, axis=0), np.nanmax(num, axis=0)
        const = [c for j, c in enumerate(num_names) if lo[j] == hi[j]]
        const += [
            c for j, c in enumerate(cat_names) if np.unique(codes[:, j][codes[:, j] >= 0]).size <= 1
        ]
        const = [c for c in names if c in const]  # in data order
        if const:
            raise ValueError(
                f"Columns {const} are constant (one distinct value"
                + (" among the rows kept" if dropped.any() else "")
                + f") and carry no clustering information; drop them "
                f"({_drop_hint(const, parsed is not None)})."
            )

    frame = df.loc[~dropped] if dropped.any() else df
    spec = VariableSpec(
        tuple(infos),
        levels,
        formula=parsed.formula if parsed else None,
        codes=dict(parsed.codes) if parsed else None,
        response=None if resp is None else str(resp.name),
        eval_env=dict(parsed.env) if parsed else None,
        inputs=_formula_inputs(parsed.codes, frame_in) if parsed else None,
    )
    table_resp = None if resp is None else (resp[~dropped] if dropped.any() else resp)
    return ColumnTable(
        numeric=np.ascontiguousarray(num),
        codes=np.ascontiguousarray(codes),
        spec=spec,
        index=df.index,
        dropped=dropped,
        frame=frame,
        missing=missing,
        response=table_resp,
    )


def read_numeric(
    x: Any, *, data: Any, numeric: Any, categorical: Any, missing: str, min_rows: int = 2
) -> ColumnTable:
    """The table of a numeric-only method that handles missing cells itself (sparse
    k-means and hierarchical clustering): categorical columns are an error pointing to
    ``craft()``, constant columns are allowed (they get weight 0), ``missing`` may be
    ``"native"``."""
    return build_table(
        x,
        data=data,
        categorical=categorical,
        numeric=numeric,
        missing=missing,
        missing_choices=("raise", "drop", "native"),
        allow_categorical=False,
        allow_constant=True,
        min_rows=min_rows,
    )


def transform_like(spec: VariableSpec, data: Any, *, missing: str = "raise") -> ColumnTable:
    """Read new data with a fitted :class:`VariableSpec` (same variables, kinds, levels).

    Formula specs re-evaluate their terms on ``data`` (with the functions the formula
    used at fit time). A value outside a variable's fitted levels, a missing column,
    an unsupported dtype or an infinite value raises; missing values follow
    ``missing`` (``"raise"``, ``"drop"`` or ``"native"``).

    Examples
    --------
    >>> fit = build_table(pd.DataFrame({"x": [1.0, 2.0], "g": ["a", "b"]}))
    >>> t = transform_like(fit.spec, pd.DataFrame({"g": ["b", "b"], "x": [0.5, 3.0]}))
    >>> t.numeric.ravel().tolist(), t.codes.ravel().tolist()
    ([0.5, 3.0], [1, 1])
    >>> transform_like(fit.spec, pd.DataFrame({"x": [1.0], "g": ["c"]}))
    Traceback (most recent call last):
    ...
    ValueError: Column 'g' has values not among its levels: ['c'] (levels: ['a', 'b']). The fit saw only these levels; recode or drop those rows of newdata first.
    """
    check_choice("missing", missing, ["raise", "drop", "native"])
    frame = _as_frame(data, "newdata")
    _check_unique_names(frame, "newdata")
    if spec.formula is not None:
        available = [str(c) for c in frame.columns]
        lacking = [c for c in spec.inputs or () if c not in available]
        if lacking:
            raise ValueError(
                f"newdata lacks columns {lacking} used by the formula {spec.formula!r}; "
                f"it has {available}. Pass data with the columns used in the fit."
            )
        cols, _, _ = evaluate_terms(
            spec.codes or {}, frame, eval_env=spec.eval_env, formula=spec.formula, what="newdata"
        )
        df = pd.DataFrame(cols, index=frame.index)
    else:
        df = frame.set_axis([str(c) for c in frame.columns], axis=1)
        lacking = [n for n in spec.names if n not in df.columns]
        if lacking:
            raise ValueError(
                f"newdata lacks columns {lacking} used in the fit; it has {list(df.columns)}. "
                f"Pass data with the columns used in the fit."
            )
        df = df[spec.names]
    columns = {c: densify(df[c]) for c in spec.names}
    bad = {c: why for c, s in columns.items() if (why := unsupported_reason(s)) is not None}
    bad = {
        c: why
        for c, why in bad.items()
        if not (spec.kinds[c] == "categorical" and why.startswith("datetime"))
    }
    if bad:
        detail = ", ".join(f"{c}: {why}" for c, why in bad.items())
        raise TypeError(
            f"newdata columns {list(bad)} have unsupported dtypes ({detail}); convert them as "
            f"the data used in the fit."
        )
    num = np.empty((len(df), len(spec.numeric_names)))
    for j, c in enumerate(spec.numeric_names):
        num[:, j] = to_float(columns[c], c, source="newdata")
    inf_cols = [c for j, c in enumerate(spec.numeric_names) if np.isinf(num[:, j]).any()]
    if inf_cols:
        raise ValueError(
            f"newdata columns {inf_cols} contain infinite values; replace them with finite "
            f"values or NaN (missing)."
        )
    codes = np.empty((len(df), len(spec.categorical_names)), dtype=np.int64)
    for j, c in enumerate(spec.categorical_names):
        codes[:, j], _, _ = encode_categorical(
            columns[c],
            spec.levels[c],
            name=c,
            unseen_hint="The fit saw only these levels; recode or drop those rows of newdata first.",
        )
    miss_num, miss_cat = np.isnan(num), codes < 0
    miss = miss_num.any(axis=1) | miss_cat.any(axis=1)
    dropped = np.zeros(len(df), dtype=bool)
    if miss.any():
        counts = {
            c: int(miss_num[:, j].sum())
            for j, c in enumerate(spec.numeric_names)
            if miss_num[:, j].any()
        }
        counts.update(
            {
                c: int(miss_cat[:, j].sum())
                for j, c in enumerate(spec.categorical_names)
                if miss_cat[:, j].any()
            }
        )
        if missing == "raise":
            raise ValueError(
                f"missing='raise': {int(miss.sum())} of {len(df)} rows of newdata have missing "
                f"values (per column: {counts}); pass missing='drop' (their labels are <NA>) or "
                f"impute them."
            )
        if missing == "drop":
            dropped = miss
            num, codes = num[~miss], codes[~miss]
    return ColumnTable(
        np.ascontiguousarray(num),
        np.ascontiguousarray(codes),
        spec,
        df.index,
        dropped,
        df.loc[~dropped],
        missing=missing,
    )


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


def _drop_hint(cols: list[str], formula: bool) -> str:
    from .formula import _quote

    minus = " ".join(f"- {_quote(c)}" for c in cols)
    if formula:
        return f"e.g. remove them from the formula, or '~ . {minus}'"
    return f"e.g. df.drop(columns={cols}), or the formula '~ . {minus}' with data=df"


def _check_unique_names(df: pd.DataFrame, what: str) -> None:
    names = [str(c) for c in df.columns]
    if len(set(names)) != len(names):
        dup = sorted({c for c in names if names.count(c) > 1})
        raise ValueError(
            f"Duplicated column names {dup} in {what}; rename them so each is unique "
            f"(columns are named by str(label), so 1 and '1' collide)."
        )


def _as_frame(data: Any, name: str) -> pd.DataFrame:
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
    return pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])


def is_dask_collection(x: Any) -> bool:
    """True for a Dask DataFrame or Series (without importing Dask when it is not in use)."""
    mod = type(x).__module__ or ""
    return mod.startswith("dask") and hasattr(x, "npartitions") and hasattr(x, "to_delayed")


def _response_series(y: Any, df: pd.DataFrame) -> pd.Series:
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


def empty_table(spec: VariableSpec) -> ColumnTable:
    """A zero-row table carrying a spec (the Dask backend keeps its rows on the cluster)."""
    return ColumnTable(
        numeric=np.zeros((0, len(spec.numeric_names))),
        codes=np.zeros((0, len(spec.categorical_names)), dtype=np.int64),
        spec=spec,
        index=pd.RangeIndex(0),
        dropped=np.zeros(0, dtype=bool),
        frame=pd.DataFrame(),
    )
