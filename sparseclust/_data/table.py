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

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataWarning
from .dtypes import (
    ColumnInfo,
    NamesByKind,
    densify,
    encode_categorical,
    to_float,
    unsupported_reason,
)
from .formula import evaluate_terms
from .params import Choice, Columns, Flag, Int, check_choice, rules, user_stacklevel
from .screen import (
    ColumnDecision,
    ColumnStats,
    apply_decision,
    current_options,
    decisions_frame,
    screen_columns,
)
from .stages import (
    DROP_WARN_FRACTION,
    ColumnTypes,
    Encoded,
    Variables,
    apply_formula,
    apply_missing,
    as_frame,
    check_kept_rows,
    check_kinds,
    check_magnitudes,
    check_unique_names,
    column_max_abs,
    detect_types,
    drop_columns,
    encode_columns,
    is_dask_collection,
    read_input,
    resolve_overrides,
)

__all__ = [
    "DROP_WARN_FRACTION",
    "ColumnTable",
    "VariableSpec",
    "assemble_table",
    "build_table",
    "empty_table",
    "is_dask_collection",
    "read_numeric",
    "transform_like",
]


@dataclass(frozen=True, eq=False, repr=False)
class VariableSpec(NamesByKind):
    """How each variable was read; enough to read new data the same way.

    Two specs are equal when they read the same variables the same way (names,
    kinds, reasons, levels in order, formula terms and response).

    Examples
    --------
    >>> import pandas as pd
    >>> from sparseclust import build_table
    >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "g": ["a", "b", "a"]})
    >>> spec = build_table(df).spec
    >>> spec.names, spec.levels["g"].tolist()
    (['x', 'g'], ['a', 'b'])
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
    #: constant columns of the input that were dropped (not clustered; new data need
    #: not have them)
    dropped_constant: tuple[str, ...] = ()
    #: what the screen stage did with the columns it screened (dropped, parsed, lumped,
    #: noted), one :class:`~sparseclust._data.screen.ColumnDecision` each
    screening: tuple[ColumnDecision, ...] = ()

    @property
    def column_infos(self) -> tuple[ColumnInfo, ...]:
        return self.columns

    @property
    def kinds(self) -> dict[str, str]:
        return {c.name: c.kind for c in self.columns}

    def to_frame(self) -> pd.DataFrame:
        """The detection table: one row per variable (dtype, kind, why, levels, ordered).

        Returns
        -------
        pandas.DataFrame
            Indexed by variable name.

        Examples
        --------
        >>> import pandas as pd
        >>> from sparseclust import build_table
        >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0.5, 0.1, 0.2], "g": ["a", "b", "a"]})
        >>> spec = build_table(df).spec
        >>> spec.to_frame()["kind"].tolist()
        ['numeric', 'numeric', 'categorical']
        """
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

    @property
    def screened(self) -> pd.DataFrame:
        """The screen's decisions: one row per column it dropped, parsed, lumped or
        named (action, why, the evidence, how to undo), empty when it did nothing.

        Examples
        --------
        >>> import pandas as pd, warnings
        >>> from sparseclust import build_table
        >>> df = pd.DataFrame({"id": [f"C{i:03d}" for i in range(50)], "x": range(50)})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # the DataWarning naming "id"
        ...     spec = build_table(df).spec
        >>> spec.screened[["action", "why"]]
               action         why
        column
        id      dropped  identifier
        """
        return decisions_frame(self.screening)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VariableSpec):
            return NotImplemented
        return (
            self.columns == other.columns
            and self.formula == other.formula
            and self.codes == other.codes
            and self.response == other.response
            and self.inputs == other.inputs
            and self.screening == other.screening
            and self.levels.keys() == other.levels.keys()
            and all(list(self.levels[k]) == list(other.levels[k]) for k in self.levels)
        )

    __hash__ = None  # type: ignore[assignment] - holds dicts, like a dict

    def describe(self) -> str:
        """``"13 variables (10 numeric, 3 categorical)"``.

        Returns
        -------
        str
            The count of variables by kind.

        Examples
        --------
        >>> import pandas as pd
        >>> from sparseclust import build_table
        >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0.5, 0.1, 0.2], "g": ["a", "b", "a"]})
        >>> spec = build_table(df).spec
        >>> spec.describe()
        '3 variables (2 numeric, 1 categorical)'
        """
        n_num, n_cat = len(self.numeric_names), len(self.categorical_names)
        return f"{n_num + n_cat} variables ({n_num} numeric, {n_cat} categorical)"

    def kind_lines(self, limit: int = 8) -> list[str]:
        """``["  numeric: x, y", "  categorical: g (2 levels)"]``: the variables by kind,
        the first ``limit`` of each, and the constant columns dropped.

        Parameters
        ----------
        limit : int, default 8
            At most this many names of each kind.

        Returns
        -------
        list of str
            One line per kind, indented by two spaces.

        Examples
        --------
        >>> import pandas as pd
        >>> from sparseclust import build_table
        >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0.5, 0.1, 0.2], "g": ["a", "b", "a"]})
        >>> spec = build_table(df).spec
        >>> spec.kind_lines(limit=1)
        ['  numeric: x, ... (2 in all)', '  categorical: g (2 levels)']
        """

        def shown(items: list[str]) -> str:
            more = f", ... ({len(items)} in all)" if len(items) > limit else ""
            return ", ".join(items[:limit]) + more

        lines = []
        if self.numeric_names:
            lines.append(f"  numeric: {shown(self.numeric_names)}")
        if self.categorical_names:
            cats = [f"{n} ({len(self.levels[n])} levels)" for n in self.categorical_names]
            lines.append(f"  categorical: {shown(cats)}")
        if self.dropped_constant:
            lines.append(f"  constant, dropped: {shown(list(self.dropped_constant))}")
        for action in ("dropped", "parsed", "lumped"):
            done = [f"{d.name} ({d.why})" for d in self.screening if d.action == action]
            if done:
                lines.append(f"  screened, {action}: {shown(done)}")
        return lines

    def __repr__(self) -> str:
        """``VariableSpec: 2 variables (1 numeric, 1 categorical)`` and the names by kind."""
        head = f"VariableSpec: {self.describe()}"
        if self.formula:
            head += f", formula {self.formula!r}"
        return "\n".join([head, *self.kind_lines()])


@dataclass(frozen=True, eq=False, repr=False)
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

    Examples
    --------
    >>> import pandas as pd
    >>> from sparseclust import build_table
    >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "g": ["a", "b", "a"]})
    >>> table = build_table(df)
    >>> table.numeric.shape, table.codes.tolist()
    ((3, 1), [[0], [1], [0]])
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

    def __repr__(self) -> str:
        """A short description: rows, variables by kind, missing cells.

        Examples
        --------
        >>> df = pd.DataFrame({"x": [1.0, None, 3.0], "g": ["a", "b", "a"]})
        >>> build_table(df, missing="native", missing_choices=("native",))
        ColumnTable: 3 rows, 2 variables (1 numeric, 1 categorical)
          numeric: x
          categorical: g (2 levels)
          missing cells: 1 (kept: missing='native')
        """
        rows = f"{len(self.index)} rows"
        if self.n_dropped:
            rows += f" ({self.n_dropped} dropped for missing values, {self.n_obs} kept)"
        lines = [f"ColumnTable: {rows}, {self.spec.describe()}"]
        lines += self.spec.kind_lines()
        n_missing = int(np.isnan(self.numeric).sum() + (self.codes < 0).sum())
        kept = f" (kept: missing={self.missing!r})" if n_missing else ""
        lines.append(f"  missing cells: {n_missing}{kept}")
        if self.response is not None:
            lines.append(f"  response: {self.response.name}")
        return "\n".join(lines)

    @property
    def n_dropped(self) -> int:
        return int(self.dropped.sum())

    def empty_rows(self) -> np.ndarray:
        """Kept rows with no observed value (bool, one per kept row).

        Returns
        -------
        numpy.ndarray
            Boolean, one per kept row.

        Examples
        --------
        >>> import pandas as pd
        >>> from sparseclust import build_table
        >>> df = pd.DataFrame({"x": [1.0, None, 3.0], "g": ["a", None, "b"]})
        >>> table = build_table(df, missing="native", missing_choices=("native",))
        >>> table.empty_rows().tolist()
        [False, True, False]
        """
        empty = np.isnan(self.numeric).all(axis=1) & (self.codes < 0).all(axis=1)
        return empty if self.numeric.shape[1] or self.codes.shape[1] else np.zeros(0, bool)

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

        Parameters
        ----------
        one_hot : bool, default True
            Expand the categorical variables; ``False`` is for numeric-only tables.

        Returns
        -------
        X : numpy.ndarray
            The matrix, one row per kept row.
        column_names : list of str
            One name per column of ``X``.
        groups : numpy.ndarray
            For each column of ``X``, the position of its variable in ``spec.names``.

        Examples
        --------
        >>> import pandas as pd
        >>> from sparseclust import build_table
        >>> df = pd.DataFrame({"x": [1.0, None, 3.0], "g": ["a", None, "b"]})
        >>> table = build_table(df, missing="native", missing_choices=("native",))
        >>> X, names, groups = table.to_numeric()
        >>> X.shape, names, groups.tolist()
        ((3, 3), ['x', 'g[a]', 'g[b]'], [0, 1, 1])
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

        Parameters
        ----------
        values : array-like
            One value per kept row.
        fill : scalar, default pandas.NA
            The value on dropped rows (for values that are neither numbers nor booleans).

        Returns
        -------
        pandas.Series
            On the full input index.

        Examples
        --------
        >>> import pandas as pd
        >>> from sparseclust import build_table
        >>> import warnings
        >>> df = pd.DataFrame({"x": [1.0, None, 3.0]})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # the note that one row was dropped
        ...     table = build_table(df, missing="drop", missing_choices=("drop",))
        >>> table.expand([0, 1]).tolist()
        [0, <NA>, 1]
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


@rules(
    categorical=Columns(),
    numeric=Columns(),
    missing=Choice(("raise", "drop", "native")),
    allow_categorical=Flag(),
    allow_numeric=Flag(),
    response=Flag(),
    allow_constant=Flag(),
    constant=Choice(("raise", "drop", "keep")),
    min_rows=Int(min=1),
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
    constant: str = "raise",
    check_magnitude: bool = True,
    screen: Any = None,
    screen_stats: dict[str, ColumnStats] | None = None,
) -> ColumnTable:
    """Read ``data`` (DataFrame, 2-D array or formula + DataFrame) into a :class:`ColumnTable`.

    ``missing`` is ``"raise"`` (any missing cell is an error naming the columns),
    ``"drop"`` (rows with a missing cell are dropped, counted and reported; a
    :class:`~sparseclust.exceptions.DataWarning` when more than 10% go) or
    ``"native"`` (kept; NaN in the numeric block, ``-1`` in the codes) where the
    method supports it (``missing_choices``). The input is never modified.

    A constant column (one distinct value on the rows kept) carries no clustering
    information: ``constant="raise"`` makes it an error naming it, ``"keep"`` keeps it
    (``allow_constant=True`` is the same), ``"drop"`` drops it with a
    :class:`~sparseclust.exceptions.DataWarning` and lists it in the spec's
    ``dropped_constant`` (every clustering method reads its data this way), except a
    column the user named in a formula, which stays an error.

    A numeric column too large for the methods' sums of squares (largest magnitude
    above :func:`~sparseclust._data.stages.magnitude_limit`, about 1e146 to 1e152
    for the data sizes in use) is an error naming it and the fix (rescale it);
    ``check_magnitude=False`` leaves that check to the caller (the Dask reader applies
    it over all partitions).

    Columns whose kind was detected (not named by ``categorical=``, ``numeric=`` or a
    formula term) are screened (:mod:`sparseclust._data.screen`): identifiers and free
    text dropped, numbers stored as text parsed, rare levels of many-level categoricals
    lumped into ``"(other)"`` (or the column dropped), integer codes named; each decision
    is a :class:`~sparseclust.exceptions.DataWarning` and is kept on the spec
    (``spec.screened``). ``screen=False`` reads every column by its dtype.

    The stages (each in :mod:`sparseclust._data.stages`, testable alone): read the
    input, apply the formula, resolve the kinds fixed by the user, detect the others,
    screen them, encode, apply the missing-value policy, assemble the table.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        The data, or a formula such as ``"~ . - id"`` with ``data=``.
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    categorical, numeric : list of str, optional
        Columns whose kind is set by name, overriding detection by dtype.
    missing : {"raise", "drop", "native"}, default "raise"
        What to do with missing cells (see above).
    missing_choices : tuple of str, default ("raise", "drop")
        The values of ``missing`` the calling method supports.
    allow_categorical, allow_numeric : bool, default True
        Whether the calling method accepts columns of that kind (an error names the
        others).
    response : bool, default False
        Whether a two-sided formula (or ``y``) is expected.
    y : array-like, optional
        The response when ``x`` is not a formula.
    allow_constant : bool, default False
        Keep constant columns (as ``constant="keep"``).
    min_rows : int, default 1
        The fewest rows the method needs after dropping.
    eval_env : dict, optional
        Names a formula's transforms may use, besides numpy as ``np``.
    constant : {"raise", "drop", "keep"}, default "raise"
        What to do with constant columns (see above).
    check_magnitude : bool, default True
        Refuse numeric columns too large for the sums of squares (see above).
    screen : bool or dict, optional
        Screen the detected columns (see above); a dict sets options:
        ``{"lump_min": 20}`` (levels seen in fewer rows are lumped; ``None``: no
        lumping; default ``"auto"``). Default: the ``screen=`` of the public method
        reading the table, else True.
    screen_stats : dict, optional
        The screened columns' statistics when ``x`` holds only some of the rows (the
        Dask reader passes those of the whole frame).

    Returns
    -------
    ColumnTable
        The typed table: numeric block, categorical codes, the spec, the kept rows.

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
    check_choice("missing", missing, list(missing_choices))  # the method's own policies
    var = apply_formula(read_input(x, data), response=response, y=y, eval_env=eval_env)
    formula = var.from_formula
    overrides = resolve_overrides(
        var.frame.columns.tolist(), categorical, numeric, var.parsed.forced if formula else None
    )
    types = detect_types(var.frame, overrides, formula=formula)  # kinds checked once screened
    var, types, screened = screen_columns(var, types, current_options(screen), stats=screen_stats)
    check_kinds(types, allow_categorical, allow_numeric, formula)
    enc = encode_columns(var.frame, types, given_levels=var.parsed.levels if formula else None)
    enc = apply_missing(
        enc,
        missing=missing,
        missing_choices=missing_choices,
        response=var.response,
        formula=formula,
    )
    drop = check_kept_rows(
        enc,
        types.names,
        min_rows=min_rows,
        constant="keep" if allow_constant else constant,
        formula=formula,
        dotted=var.parsed.dotted if formula else (),
    )
    var, types, enc = drop_columns(var, types, enc, drop)
    if check_magnitude:
        num = enc.numeric
        check_magnitudes(
            column_max_abs(num), enc.numeric_names, num.shape[0], len(types.names), formula=formula
        )
    return assemble_table(
        var, types, enc, missing=missing, dropped_constant=tuple(drop), screening=screened
    )


def assemble_table(
    var: Variables,
    types: ColumnTypes,
    enc: Encoded,
    *,
    missing: str,
    dropped_constant: tuple[str, ...] = (),
    screening: tuple[ColumnDecision, ...] = (),
) -> ColumnTable:
    """Stage 7 of :func:`build_table`: the :class:`ColumnTable` of the kept rows, with
    the :class:`VariableSpec` that reads new data the same way.

    Examples
    --------
    >>> from sparseclust._data.stages import Overrides, detect_types, encode_columns
    >>> from sparseclust._data.stages import Variables
    >>> var = Variables(pd.DataFrame({"a": [1.0, 2.0]}))
    >>> types = detect_types(var.frame, Overrides())
    >>> t = assemble_table(var, types, encode_columns(var.frame, types), missing="raise")
    >>> t.names, t.n_obs
    (['a'], 2)
    """
    parsed, dropped, resp = var.parsed, enc.dropped, var.response
    spec = VariableSpec(
        types.infos,
        enc.levels,
        formula=parsed.formula if parsed else None,
        codes=dict(parsed.codes) if parsed else None,
        response=None if resp is None else str(resp.name),
        eval_env=dict(parsed.env) if parsed else None,
        inputs=var.inputs if parsed else None,
        dropped_constant=dropped_constant,
        screening=tuple(d for d in screening if d.name not in dropped_constant),
    )
    return ColumnTable(
        numeric=np.ascontiguousarray(enc.numeric),
        codes=np.ascontiguousarray(enc.codes),
        spec=spec,
        index=var.frame.index,
        dropped=dropped,
        frame=var.frame.loc[~dropped] if dropped.any() else var.frame,
        missing=missing,
        response=None if resp is None else (resp[~dropped] if dropped.any() else resp),
    )


def read_numeric(
    x: Any, *, data: Any, numeric: Any, categorical: Any, missing: str, min_rows: int = 2
) -> ColumnTable:
    """The table of a numeric-only method that handles missing cells itself (sparse
    k-means and hierarchical clustering): categorical columns are an error pointing to
    ``craft()``, constant columns are dropped with a DataWarning (their weight would
    be 0), ``missing`` may be ``"native"``."""
    return build_table(
        x,
        data=data,
        categorical=categorical,
        numeric=numeric,
        missing=missing,
        missing_choices=("raise", "drop", "native"),
        allow_categorical=False,
        constant="drop",
        min_rows=min_rows,
    )


def transform_like(
    spec: VariableSpec,
    data: Any,
    *,
    missing: str = "raise",
    check_magnitude: bool = True,
    unseen: str = "raise",
) -> ColumnTable:
    """Read new data with a fitted :class:`VariableSpec` (same variables, kinds, levels).

    Formula specs re-evaluate their terms on ``data`` (with the functions the formula
    used at fit time). A value outside a variable's fitted levels, a missing column,
    an unsupported dtype, an infinite value or a value too large for the methods'
    sums of squares (the fit's rule, :func:`~sparseclust._data.stages.check_magnitudes`
    on the new rows; ``check_magnitude=False``: left to the caller) raises; missing
    values follow ``missing`` (``"raise"``, ``"drop"`` or ``"native"``). With
    ``unseen="na"`` a categorical value outside the fitted levels does not raise: its
    row is set aside as a dropped row (its label ``<NA>``), with a
    :class:`~sparseclust.exceptions.DataWarning` counting the rows and naming the values.

    Examples
    --------
    >>> fit = build_table(pd.DataFrame({"x": [1.0, 2.0], "g": ["a", "b"]}))
    >>> t = transform_like(fit.spec, pd.DataFrame({"g": ["b", "b"], "x": [0.5, 3.0]}))
    >>> t.numeric.ravel().tolist(), t.codes.ravel().tolist()
    ([0.5, 3.0], [1, 1])
    >>> transform_like(fit.spec, pd.DataFrame({"x": [1.0], "g": ["c"]}))
    Traceback (most recent call last):
    ...
    ValueError: Column 'g' has values not among its levels: ['c'] (levels: ['a', 'b']). ... or pass unseen='na' (their labels are <NA>).
    """
    check_choice("missing", missing, ["raise", "drop", "native"])
    check_choice("unseen", unseen, ["raise", "na"])
    frame = as_frame(data, "newdata")
    check_unique_names(frame, "newdata")
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
    for d in spec.screening:
        if d.name in columns and d.action in ("parsed", "lumped"):
            columns[d.name] = apply_decision(columns[d.name], d)
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
    codes, new_level = _encode_new(columns, spec, unseen)
    miss_num, miss_cat = np.isnan(num), codes < 0
    miss = (miss_num.any(axis=1) | miss_cat.any(axis=1)) & ~new_level
    dropped = new_level.copy()
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
            rows = df.index[miss].tolist()
            shown = f"{rows[:5]}{' ...' if len(rows) > 5 else ''}"
            raise ValueError(
                f"missing='raise': {int(miss.sum())} of {len(df)} rows of newdata have missing "
                f"values (rows {shown}; per column: {counts}); pass missing='drop' (their "
                f"labels are <NA>) or impute them."
            )
        if missing == "drop":
            dropped |= miss
    num, codes = num[~dropped], codes[~dropped]
    if check_magnitude:
        check_magnitudes(
            column_max_abs(num), spec.numeric_names, num.shape[0], len(spec.names), newdata=True
        )
    return ColumnTable(
        np.ascontiguousarray(num),
        np.ascontiguousarray(codes),
        spec,
        df.index,
        dropped,
        df.loc[~dropped],
        missing=missing,
    )


def _encode_new(
    columns: dict[str, pd.Series], spec: VariableSpec, unseen: str
) -> tuple[np.ndarray, np.ndarray]:
    """The categorical codes of new data and its rows with a level the fit did not see
    (``unseen="na"``; ``"raise"`` raises naming them)."""
    n = len(next(iter(columns.values()))) if columns else 0
    codes = np.empty((n, len(spec.categorical_names)), dtype=np.int64)
    for j, c in enumerate(spec.categorical_names):
        codes[:, j], _, _ = encode_categorical(
            columns[c],
            spec.levels[c],
            name=c,
            unseen_hint="The fit saw only these levels; recode or drop those rows of newdata "
            "first, or pass unseen='na' (their labels are <NA>).",
            unseen=unseen,
        )
    return codes, _unseen_rows(columns, spec, codes)


def _unseen_rows(
    columns: dict[str, pd.Series], spec: VariableSpec, codes: np.ndarray
) -> np.ndarray:
    """Rows of new data with a categorical value outside the fitted levels (coded -1
    under ``unseen="na"``), with a :class:`~sparseclust.exceptions.DataWarning`."""
    rows = np.zeros(codes.shape[0], dtype=bool)
    found = {}
    for j, c in enumerate(spec.categorical_names):
        new = (codes[:, j] < 0) & columns[c].notna().to_numpy()
        if new.any():
            rows |= new
            found[c] = list(pd.unique(columns[c][new].to_numpy(dtype=object)))[:5]
    if found:
        warnings.warn(
            f"unseen='na': {int(rows.sum())} rows of newdata have levels the fit did not see "
            f"({found}); their labels are <NA>.",
            DataWarning,
            stacklevel=user_stacklevel(),
        )
    return rows


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
