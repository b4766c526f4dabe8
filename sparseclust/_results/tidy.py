"""broom-style tables of a fit: ``tidy`` (per cluster and variable), ``glance`` (one
row per fit) and ``augment`` (the input with ``.cluster``), shared by every result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["TIDY_COLUMNS", "augment_frame", "glance_row", "tidy_frame"]

#: The columns of :func:`tidy_frame`, in order.
TIDY_COLUMNS = [
    "cluster",
    "variable",
    "kind",
    "selected",
    "relevance",
    "mean",
    "sd",
    "level",
    "share",
]


def _selection(result: Any, clusters: list[int], names: list[str]) -> tuple[Any, Any]:
    """(selected, relevance) as clusters x variables frames: a sparse fit's weights
    (the same for every cluster; selected = non-zero), CRAFT's per-cluster selection
    and relevance (none on the Dask backend), or nothing (every variable used:
    selected True)."""
    weights = getattr(result, "weights", None)
    if isinstance(weights, pd.Series):
        w = weights.reindex(names).to_numpy(dtype=float)
        rel = pd.DataFrame([w] * len(clusters), index=clusters, columns=names)
        return rel.fillna(0.0) > 0, rel
    selected = getattr(result, "selected", None)
    if isinstance(selected, pd.DataFrame):
        sel = selected.reindex(index=clusters, columns=names)
        try:
            rel = result.relevance.reindex(index=clusters, columns=names)
        except (AttributeError, ValueError):  # no relevance, or not in memory (Dask)
            rel = None
        return sel.astype("boolean"), rel
    return pd.DataFrame(True, index=clusters, columns=names), None


def tidy_frame(result: Any) -> pd.DataFrame:
    """One row per (cluster, variable): selection, relevance and profile.

    ``selected``: whether the variable takes part in the cluster (a sparse fit's
    non-zero weight, CRAFT's per-cluster selection; True for methods without
    selection); ``relevance``: the sparse methods' weight, CRAFT's per-cluster
    relevance (``CraftResult.relevance``, nats), NaN for the others;
    ``mean`` / ``sd`` for numeric variables and, for categorical ones, the cluster's
    most frequent ``level`` and its ``share``. Profiles need the data
    (``keep_data=True``); without it those columns are NaN.
    """
    spec = result.variables
    names = list(spec.names)
    kinds = spec.kinds
    clusters = [int(c) for c in result.sizes.index]
    sel, rel = _selection(result, clusters, names)
    prof = result.profiles() if result.table is not None else None
    rows = []
    for k in clusters:
        for name in names:
            row = {
                "cluster": k,
                "variable": name,
                "kind": kinds.get(name, "numeric"),
                "selected": sel.loc[k, name],
                "relevance": np.nan if rel is None else float(rel.loc[k, name]),
                "mean": np.nan,
                "sd": np.nan,
                "level": None,
                "share": np.nan,
            }
            if prof is not None and name in prof.index.get_level_values(0) and k in prof.columns:
                block = prof.loc[name, k]  # (a sparse k-means profile has selected features)
                if row["kind"] == "numeric":
                    row["mean"], row["sd"] = float(block["mean"]), float(block["sd"])
                elif block.notna().any():
                    row["level"] = str(block.astype(float).idxmax())
                    row["share"] = float(block.max())
            rows.append(row)
    out = pd.DataFrame(rows, columns=TIDY_COLUMNS)
    out["selected"] = out["selected"].astype("boolean")
    return out


def _scalar(value: Any) -> float:
    """A number for the glance row (the last value of a trace)."""
    if value is None:
        return np.nan
    arr = np.asarray(value, dtype=float).ravel()
    return float(arr[-1]) if arr.size else np.nan


def glance_row(result: Any, **extra: Any) -> pd.DataFrame:
    """One row: the method, rows used and dropped, K (found and asked for), the
    penalty or bound, the objective, iterations, convergence and the model-choice
    criterion where the method has one (``extra`` adds or overrides columns)."""
    objective = getattr(result, "objective", None)
    if objective is None:
        objective = getattr(result, "crit", None)
    row = {
        "method": result.method_name,
        "n_obs": result.n_obs,
        "n_dropped": result.n_dropped,
        "n_variables": len(result.variables.names),
        "n_clusters": result.n_clusters,
        "k": getattr(result, "k", None),
        "lambda": _scalar(getattr(result, "lam", None)),
        "wbound": _scalar(getattr(result, "wbound", None)),
        "objective": _scalar(objective),
        "n_iter": result.n_iter,
        "converged": result.converged,
        "criterion": _scalar(getattr(result, "neg_loglik", None)),
    }
    row |= extra
    out = pd.DataFrame([row])
    out["k"] = out["k"].astype("Int64")
    return out


def augment_frame(labels: pd.Series, data: Any, columns: dict[str, Any] | None = None) -> Any:
    """A copy of ``data`` (the rows the fit was given, in the same order) with
    ``.cluster`` (or the given ``columns``) added by position; ``data`` itself is not
    modified."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"data must be the DataFrame the fit was given; got data of type "
            f"{type(data).__name__}. Pass the same rows, e.g. fit.augment(df)."
        )
    if len(data) != len(labels):
        raise ValueError(
            f"data has {len(data)} rows but the fit has {len(labels)}; pass the rows the "
            "fit was given (for new rows use predict(newdata))."
        )
    out = data.copy()
    for name, values in (columns or {".cluster": labels}).items():
        out[name] = values.array if isinstance(values, pd.Series) else np.asarray(values)
    return out
