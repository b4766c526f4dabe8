"""What the data front will do with each column, before any fit: :func:`preview_columns`."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .dtypes import densify, detect_kind, unsupported_reason
from .params import Columns, rules
from .screen import current_options, screen_columns
from .stages import (
    Overrides,
    apply_formula,
    detect_types,
    read_input,
    remove_variables,
    resolve_overrides,
)

__all__ = ["preview_columns"]


@rules(categorical=Columns(), numeric=Columns())
def preview_columns(
    x: Any,
    *,
    data: Any = None,
    categorical: Any = None,
    numeric: Any = None,
    screen: Any = True,
) -> pd.DataFrame:
    """How every method will read each column: a table, one row per column, before any fit.

    The same stages as the methods' own reading (formula, overrides, detection by
    dtype, the screen of identifiers, free text, numbers stored as text, many-level
    categoricals and integer codes), without fitting and without warnings: the
    decisions are in the table.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        The data, or a formula such as ``"~ . - id"`` with ``data=``.
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    categorical, numeric : list of str, optional
        Columns whose kind is set by name (never screened).
    screen : bool or dict, default True
        As in the methods: ``False`` reads every column by its dtype,
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped.

    Returns
    -------
    pandas.DataFrame
        Indexed by column (variable) name: ``dtype``, ``kind`` (how it is read:
        ``"numeric"``, ``"categorical"``, or ``"not used"``),
        ``n_distinct`` (distinct non-missing values), ``missing`` (share of missing
        cells), ``action`` (``"used"``, ``"dropped"``, ``"parsed"``, ``"lumped"``,
        ``"noted"``, ``"kept"``, ``"constant"`` or ``"error"``) and ``reason`` (why, and
        how to have it read otherwise).

    See Also
    --------
    build_table : The typed table itself (with the warnings).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sparseclust import preview_columns
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(
    ...     {
    ...         "customer_id": [f"C{i:04d}" for i in range(200)],
    ...         "spend": [f"{v:,.2f}" for v in rng.gamma(2.0, 900.0, 200)],
    ...         "plan": rng.choice(["basic", "plus", "pro"], 200),
    ...         "visits": rng.poisson(4.0, 200),
    ...         "rating": rng.integers(1, 6, 200),
    ...     }
    ... )
    >>> preview_columns(df)[["kind", "n_distinct", "action"]]
                        kind  n_distinct   action
    column
    customer_id     not used         200  dropped
    spend            numeric         200   parsed
    plan         categorical           3     used
    visits           numeric          12     used
    rating           numeric           5    noted
    """
    inp = read_input(x, data)
    var = apply_formula(inp, response=False)
    formula = var.from_formula
    overrides = resolve_overrides(
        var.frame.columns.tolist(), categorical, numeric, var.parsed.forced if formula else None
    )
    rows: dict[str, dict[str, Any]] = {}
    for c in var.frame.columns:
        s = densify(var.frame[c])
        rows[c] = {
            "dtype": str(s.dtype),
            "kind": "not used",
            "n_distinct": int(s.nunique(dropna=True)),
            "missing": float(s.isna().mean()) if len(s) else 0.0,
            "action": "used",
            "reason": "",
        }
    bad = {}
    for c in var.frame.columns:
        why = unsupported_reason(var.frame[c])
        forced_cat = overrides.kinds.get(c) == "categorical" and str(why).startswith("datetime")
        if why is not None and not forced_cat:
            bad[c] = why
            rows[c].update(action="error", reason=f"unsupported dtype ({why}): convert or drop it")
    if bad:
        from .stages import ColumnTypes

        var, _ = remove_variables(var, ColumnTypes(()), list(bad))
        overrides = Overrides(
            {c: k for c, k in overrides.kinds.items() if c not in bad},
            {c: r for c, r in overrides.reasons.items() if c not in bad},
        )
    if var.frame.shape[1]:
        types = detect_types(var.frame, overrides, formula=formula)
        for info in types.infos:
            rows[info.name].update(
                kind=info.kind,
                reason="" if info.reason == "detected" else f"set by {info.reason}",
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                var2, types2, decisions = screen_columns(
                    var, types, current_options(screen), stats=None
                )
            except ValueError:  # every column screened out: shown, not raised
                from .screen import decide

                decisions = tuple(
                    d
                    for i in types.infos
                    if i.reason == "detected"
                    and (d := decide(i.name, _stats(var.frame[i.name]), current_options(screen)))
                )
                var2 = None
        for d in decisions:
            kind = {"dropped": "not used", "parsed": "numeric", "lumped": "categorical"}
            rows[d.name].update(
                action=d.action,
                reason=f"{d.why}: {d.detail}; to undo: {d.undo}",
                kind=kind.get(d.action, rows[d.name]["kind"]),
            )
        if var2 is not None:
            for c in _constant(var2.frame):
                rows[c].update(
                    action="constant",
                    kind="not used",
                    reason="one distinct value: no clustering information (dropped by the methods)",
                )
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index = pd.Index(out.index, name="column", dtype=object)
    return out.astype({"n_distinct": np.int64, "missing": np.float64})


def _stats(s: pd.Series) -> Any:
    from .screen import column_stats

    return column_stats(s)


def _constant(frame: pd.DataFrame) -> list[str]:
    out = []
    for c in frame.columns:
        s = densify(frame[c])
        if s.nunique(dropna=True) <= 1 and len(s) > 1 and detect_kind(s) is not None:
            out.append(c)
    return out
