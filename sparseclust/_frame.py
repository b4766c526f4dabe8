"""The data front: any accepted input -> one typed :class:`ColumnTable`.

Every method calls :func:`build_table`; none re-implements type detection, the
missing-value policy, formula handling or column checks.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._dtypes import ColumnInfo, detect_kind, encode_categorical, to_float, unsupported_reason
from ._formula import evaluate_formula
from ._validation import check_choice, check_names, user_stacklevel
from .exceptions import DataWarning, FormulaError

__all__ = ["ColumnTable", "VariableSpec", "build_table"]

#: Fraction of rows dropped above which ``missing="drop"`` warns (the count is always reported).
DROP_WARN_FRACTION = 0.1


@dataclass(frozen=True)
class VariableSpec:
    """How each variable was read; enough to read new data the same way."""

    columns: tuple[ColumnInfo, ...]
    levels: dict[str, pd.Index]
    formula: str | None = None
    codes: dict[str, str] | None = None  # formula term codes by variable name
    response: str | None = None

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
        """The detection table: one row per variable (dtype, kind, why)."""
        return pd.DataFrame(
            {
                "dtype": [c.dtype for c in self.columns],
                "kind": [c.kind for c in self.columns],
                "reason": [c.reason for c in self.columns],
                "n_levels": [
                    len(self.levels[c.name]) if c.kind == "categorical" else np.nan
                    for c in self.columns
                ],
            },
            index=pd.Index(self.names, name="variable"),
        )

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
        """
        blocks = [self.numeric]
        names = list(self.numeric_names)
        var_pos = {n: i for i, n in enumerate(self.names)}
        groups = [var_pos[n] for n in self.numeric_names]
        if self.codes.shape[1]:
            if not one_hot:
                raise ValueError("categorical variables need one_hot=True")
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

    def expand(self, values: pd.Series | np.ndarray, *, fill: Any = pd.NA) -> pd.Series:
        """Put per-kept-row values back on the full input index (``fill`` on dropped rows)."""
        values = np.asarray(values)
        if np.issubdtype(values.dtype, np.integer):
            out = pd.Series(pd.array([fill] * len(self.index), dtype="Int64"), index=self.index)
        else:
            out = pd.Series(np.full(len(self.index), np.nan), index=self.index)
        out.iloc[np.flatnonzero(~self.dropped)] = values
        return out


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
    ``"drop"`` (rows with a missing cell are dropped, counted and reported) or
    ``"native"`` (kept; NaN in the numeric block, ``-1`` in the codes) where the
    method supports it (``missing_choices``).
    """
    check_choice("missing", missing, list(missing_choices))
    categorical = check_names("categorical", categorical)
    numeric = check_names("numeric", numeric)

    formula = None
    if isinstance(x, str):
        formula = x
        if data is None:
            raise TypeError(f"the formula {x!r} needs its data: call e.g. f({x!r}, data=df).")
    elif x is None:
        if data is None:
            raise TypeError("no data given; pass a DataFrame, a 2-D array or a formula with data=.")
    elif data is not None:
        raise TypeError(
            "data= is for formulas (f('~ x1 + C(x2)', data=df)); got both a table and data=."
        )
    else:
        data = x
    if eval_env is None and formula is not None:
        eval_env = _caller_namespace()
    parsed = None
    if formula is not None:
        parsed = evaluate_formula(formula, _as_frame(data, "data"), response=response,
                                  eval_env=eval_env)
        df = parsed.variables
        resp = parsed.response
        original_cols = list(df.columns)
    else:
        df = _as_frame(data, "data")
        original_cols = [str(c) for c in df.columns]
        resp = None
        if len(set(original_cols)) != len(original_cols):
            dup = sorted({c for c in original_cols if original_cols.count(c) > 1})
            raise ValueError(f"Duplicated column names {dup}; rename them so each is unique.")
        df = df.set_axis(original_cols, axis=1)
    if y is not None:
        if resp is not None:
            raise ValueError("Give the response either in the formula or as y=, not both.")
        resp = _response_series(y, df)
    if resp is not None and not response:
        raise FormulaError("this method takes no response (left-hand side / y=).")

    if df.shape[0] == 0:
        raise ValueError("data has no rows; clustering needs at least one observation.")
    if df.shape[1] == 0:
        raise ValueError("data has no columns (variables) to cluster on.")

    for arg_name, names in (("categorical", categorical), ("numeric", numeric)):
        if names:
            unknown = [n for n in names if n not in df.columns]
            if unknown:
                raise ValueError(
                    f"{arg_name}= names not in data: {unknown}. Available columns: {list(df.columns)}."
                )
    if categorical and numeric:
        both = sorted(set(categorical) & set(numeric))
        if both:
            raise ValueError(f"Columns {both} are in both categorical= and numeric=; choose one.")

    forced = dict(parsed.forced) if parsed else {}
    for n in categorical or []:
        forced[n] = "categorical"
    for n in numeric or []:
        forced[n] = "numeric"

    # Unsupported dtypes (all at once, so the user fixes them in one go).
    bad = {}
    for c in df.columns:
        why = unsupported_reason(df[c])
        if why is not None and not (forced.get(c) == "categorical" and why.startswith("datetime")):
            bad[c] = why
    if bad:
        first = next(iter(bad))
        kinds = sorted(set(bad.values()))
        raise TypeError(
            f"Columns {list(bad)} have unsupported dtype {', '.join(kinds)}; convert them to "
            f"numeric or categorical, or drop them (e.g. formula='~ . - {first}')."
        )

    infos: list[ColumnInfo] = []
    for c in df.columns:
        s = df[c]
        if c in forced:
            kind = forced[c]
            reason = ("C()" if kind == "categorical" else "N()") if parsed and c in parsed.forced else (
                "categorical=" if kind == "categorical" else "numeric=")
        else:
            kind = detect_kind(s)
            reason = "detected"
        ordered = bool(isinstance(s.dtype, pd.CategoricalDtype) and s.dtype.ordered)
        infos.append(ColumnInfo(str(c), str(s.dtype), kind, reason, ordered))

    num_names = [i.name for i in infos if i.kind == "numeric"]
    cat_names = [i.name for i in infos if i.kind == "categorical"]
    if cat_names and not allow_categorical:
        raise TypeError(
            f"this method clusters numeric data only; columns {cat_names} are categorical. "
            f"Drop them (formula='~ . - {cat_names[0]}'), or pass numeric=[...] if they are numbers."
        )
    if num_names and not allow_numeric:
        raise TypeError(
            f"this method clusters categorical data only; columns {num_names} are numeric. "
            f"Pass categorical=[...] to treat them as categories, or drop them."
        )

    num = np.empty((len(df), len(num_names)), dtype=np.float64)
    for j, c in enumerate(num_names):
        num[:, j] = to_float(df[c], c)
    inf_cols = [c for j, c in enumerate(num_names) if np.isinf(num[:, j]).any()]
    if inf_cols:
        raise ValueError(
            f"Columns {inf_cols} contain infinite values; replace them with finite values or NaN "
            f"(missing)."
        )
    codes = np.empty((len(df), len(cat_names)), dtype=np.int64)
    levels: dict[str, pd.Index] = {}
    for j, c in enumerate(cat_names):
        given = parsed.levels.get(c) if parsed else None
        codes[:, j], levels[c], _ = encode_categorical(
            df[c], None if given is None else pd.Index(given, dtype=object)
        )

    # Missing values.
    miss_num = np.isnan(num)
    miss_cat = codes < 0
    miss_row = miss_num.any(axis=1) | miss_cat.any(axis=1)
    if resp is not None:
        miss_row |= resp.isna().to_numpy()
    all_na = [c for j, c in enumerate(num_names) if miss_num[:, j].all()] + [
        c for j, c in enumerate(cat_names) if miss_cat[:, j].all()
    ]
    if all_na:
        raise ValueError(f"Columns {all_na} are entirely missing; drop them.")
    dropped = np.zeros(len(df), dtype=bool)
    if miss_row.any():
        if missing == "raise":
            counts = {c: int(miss_num[:, j].sum()) for j, c in enumerate(num_names) if miss_num[:, j].any()}
            counts.update({c: int(miss_cat[:, j].sum()) for j, c in enumerate(cat_names) if miss_cat[:, j].any()})
            if resp is not None and resp.isna().any():
                counts[f"{resp.name} (response)"] = int(resp.isna().sum())
            others = [m for m in missing_choices if m != "raise"]
            fix = " or ".join(f"missing={m!r}" for m in others)
            raise ValueError(
                f"{int(miss_row.sum())} of {len(df)} rows have missing values (per column: {counts}); "
                f"pass {fix}, or impute them first."
            )
        if missing == "drop":
            dropped = miss_row
            if dropped.all():
                raise ValueError(
                    "every row has a missing value, so missing='drop' leaves no data; "
                    "drop the sparsest columns first."
                )
            frac = dropped.mean()
            if frac > DROP_WARN_FRACTION:
                import warnings

                warnings.warn(
                    f"missing='drop' dropped {int(dropped.sum())} of {len(df)} rows "
                    f"({frac:.0%}) with missing values.",
                    DataWarning,
                    stacklevel=user_stacklevel(),
                )
            num = num[~dropped]
            codes = codes[~dropped]
        elif missing == "native" and resp is not None and resp.isna().any():
            raise ValueError("the response has missing values; drop those rows first.")

    n_obs = int((~dropped).sum())
    if n_obs < min_rows:
        raise ValueError(
            f"n_obs={n_obs} must be >= {min_rows}"
            + (f" after dropping {int(dropped.sum())} rows with missing values." if dropped.any() else ".")
        )

    if not allow_constant:
        const = [c for j, c in enumerate(num_names) if _is_constant(num[:, j])]
        const += [c for j, c in enumerate(cat_names) if np.unique(codes[:, j][codes[:, j] >= 0]).size <= 1]
        if const and n_obs > 1:
            raise ValueError(
                f"Columns {const} are constant (one distinct value) and carry no clustering "
                f"information; drop them (e.g. formula='~ . - {const[0]}')."
            )

    frame = df.loc[~dropped] if dropped.any() else df
    spec = VariableSpec(
        tuple(infos), levels,
        formula=parsed.formula if parsed else None,
        codes=parsed.codes if parsed else None,
        response=None if resp is None else str(resp.name),
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


def transform_like(spec: VariableSpec, data: Any, *, missing: str = "raise") -> ColumnTable:
    """Read new data with a fitted :class:`VariableSpec` (same variables, kinds, levels)."""
    if spec.formula is not None:
        frame = _as_frame(data, "newdata")
        cols = {}
        env = {}
        for name, code in (spec.codes or {}).items():
            pf = evaluate_formula("~ " + code, frame, eval_env=env)
            cols[name] = pf.variables.iloc[:, 0]
        df = pd.DataFrame(cols, index=frame.index)
    else:
        df = _as_frame(data, "newdata")
        df = df.set_axis([str(c) for c in df.columns], axis=1)
        missing_cols = [n for n in spec.names if n not in df.columns]
        if missing_cols:
            raise ValueError(
                f"newdata lacks columns {missing_cols} used in the fit; it has {list(df.columns)}."
            )
        df = df[spec.names]
    num = np.empty((len(df), len(spec.numeric_names)))
    for j, c in enumerate(spec.numeric_names):
        why = unsupported_reason(df[c])
        if why:
            raise TypeError(f"newdata column {c!r} has unsupported dtype {why}.")
        num[:, j] = to_float(df[c], c)
    codes = np.empty((len(df), len(spec.categorical_names)), dtype=np.int64)
    for j, c in enumerate(spec.categorical_names):
        codes[:, j], _, _ = encode_categorical(df[c], spec.levels[c])
    if np.isinf(num).any():
        raise ValueError("newdata contains infinite values; replace them with finite values or NaN.")
    miss = np.isnan(num).any(axis=1) | (codes < 0).any(axis=1)
    dropped = np.zeros(len(df), dtype=bool)
    if miss.any():
        if missing == "raise":
            raise ValueError(
                f"{int(miss.sum())} rows of newdata have missing values; pass missing='drop' "
                f"(their labels are <NA>) or impute them."
            )
        if missing == "drop":
            dropped = miss
            num, codes = num[~miss], codes[~miss]
    return ColumnTable(num, codes, spec, df.index, dropped, df.loc[~dropped], missing=missing)


def _is_constant(col: np.ndarray) -> bool:
    v = col[~np.isnan(col)]
    return v.size > 0 and bool(np.all(v == v[0]))


def _as_frame(data: Any, name: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
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
        raise TypeError(f"{name} of type {type(data).__name__} is not a table: {err}") from None
    if arr.dtype == object and arr.ndim != 2:
        raise TypeError(f"{name} must be 2-D (rows x variables); got an object of shape {arr.shape}.")
    if arr.ndim == 1:
        raise ValueError(
            f"{name} is 1-D (shape {arr.shape}); pass a 2-D array, e.g. x.reshape(-1, 1) for one variable."
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x variables); got shape {arr.shape}.")
    if arr.dtype.kind not in "biufcOUSMm":
        raise TypeError(f"{name} has unsupported dtype {arr.dtype}.")
    return pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])


def _response_series(y: Any, df: pd.DataFrame) -> pd.Series:
    if isinstance(y, str):
        raise ValueError("y= takes the response values; to name a column use a formula 'y ~ .'.")
    if isinstance(y, pd.Series):
        if len(y) != len(df):
            raise ValueError(f"y has {len(y)} values but data has {len(df)} rows.")
        s = y.set_axis(df.index) if not y.index.equals(df.index) else y
        return s.rename(y.name if y.name is not None else "y")
    arr = np.asarray(y)
    if arr.ndim != 1 or len(arr) != len(df):
        raise ValueError(f"y must be 1-D with {len(df)} values; got shape {arr.shape}.")
    return pd.Series(arr, index=df.index, name="y")


def _caller_namespace() -> dict[str, Any]:
    """Globals and locals of the first frame outside sparseclust (for formula functions)."""
    frame = inspect.currentframe()
    while frame is not None:
        if not frame.f_globals.get("__name__", "").startswith("sparseclust"):
            env = dict(frame.f_globals)
            env.update(frame.f_locals)
            return env
        frame = frame.f_back
    return {}
