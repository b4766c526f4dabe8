"""Result base: frozen dataclasses with R-like print, summary, HTML and plots.

Every method's result derives (one level) from :class:`ClusterResult`, which holds
what all clusterings share: labels on the caller's index, convergence, the call,
parameters and the typed input (``table``), and provides ``repr`` / ``_repr_html_``
/ ``summary()`` / ``to_frame()`` from a few hooks each subclass fills in.
"""

from __future__ import annotations

import html
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
import pandas as pd

from .._data.params import user_stacklevel
from .._data.table import ColumnTable, VariableSpec
from ..exceptions import DataWarning
from .format import fmt, fmt_list
from .summary import Summary
from .tidy import augment_frame, glance_row, tidy_frame

__all__ = [
    "ClusterResult",
    "Printed",
    "cluster_profiles",
    "constant_note",
    "dropped_constant_lines",
    "variable_notes",
    "kept_labels",
    "warn_small_clusters",
]


class Printed:
    """Printing from :meth:`_lines`: ``repr`` / ``str`` are the lines, ``_repr_html_``
    shows them (the first in bold) followed by :meth:`_html_table`."""

    def _lines(self) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _html_table(self) -> str:
        """HTML shown after the lines (a table; nothing by default)."""
        return ""

    def __repr__(self) -> str:
        return "\n".join(self._lines())

    def __str__(self) -> str:
        return repr(self)

    def _repr_html_(self) -> str:
        lines = self._lines()
        rest = "<br>".join(html.escape(x) for x in lines[1:])
        return f"<div><b>{html.escape(lines[0])}</b><br>{rest}{self._html_table()}</div>"


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class ClusterResult(Printed):
    """Shared part of every clustering result.

    Attributes
    ----------
    labels : Series of Int64
        0-based cluster labels on the caller's row index, ``<NA>`` on dropped rows.
    n_iter : int
        Iterations run.
    converged : bool
        False when the iteration cap was hit (a ``ConvergenceWarning`` was issued).
    call : str
        The call, R style.
    params : dict
        The parameters the fit used (after defaults and calibration).
    table : ColumnTable or None
        The typed input (``None`` with ``keep_data=False``).
    variables : VariableSpec
        Names, kinds and levels of the variables clustered on.
    """

    labels: pd.Series
    n_iter: int
    converged: bool
    call: str
    params: dict
    variables: VariableSpec
    table: ColumnTable | None = None
    #: (cluster sizes, rows dropped) when ``labels`` is lazy (a Dask Series)
    lazy_counts: tuple[pd.Series, int] | None = None

    method_name: ClassVar[str] = "Clustering"
    plot_hint: ClassVar[str] = ""

    # ----------------------------------------------------------------- derived
    @cached_property
    def n_clusters(self) -> int:
        """Number of non-empty clusters.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> fit.n_clusters
        3
        """
        if self.lazy_counts is not None:
            return int((self.lazy_counts[0] > 0).sum())
        return int(self.labels.dropna().nunique())

    @cached_property
    def sizes(self) -> pd.Series:
        """Cluster sizes, indexed by cluster label.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> fit.sizes.tolist()
        [20, 20, 20]
        """
        if self.lazy_counts is not None:
            return self.lazy_counts[0]
        s = self.labels.dropna().astype(int).value_counts().sort_index()
        s.index.name = "cluster"
        return s.rename("size")

    @property
    def n_obs(self) -> int:
        """Rows used in the fit.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> fit.n_obs, fit.n_dropped
        (60, 0)
        """
        if self.lazy_counts is not None:
            return int(self.lazy_counts[0].sum())
        return int(self.labels.notna().sum())

    @property
    def n_dropped(self) -> int:
        """Rows dropped for missing values.

        Examples
        --------
        >>> import numpy as np
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> data = sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data
        >>> data.iloc[0, 0] = np.nan
        >>> fit = dpmeans(data, k=3, missing="drop")
        >>> fit.n_dropped, fit.n_obs
        (1, 59)
        """
        if self.lazy_counts is not None:
            return self.lazy_counts[1]
        return int(self.labels.isna().sum())

    # ------------------------------------------------------------------- hooks
    def _headline(self) -> str:
        return f"{self.method_name} with {self.n_clusters} clusters"

    def _detail_lines(self) -> list[str]:
        return []

    def _summary_tables(self) -> dict[str, pd.DataFrame]:
        return {"clusters": self.sizes.to_frame()}

    def _notes(self) -> list[str]:
        notes = variable_notes(self.variables)
        if self.n_dropped:
            notes.append(f"{self.n_dropped} rows with missing values were dropped (labels <NA>).")
        if not self.converged:
            notes.append(f"Did NOT converge within {self.n_iter} iterations (raise max_iter).")
        if self.table is None:
            notes.append(self._no_data())
        return notes

    def _adds_profiles(self, tables: dict[str, pd.DataFrame]) -> bool:
        """Whether :meth:`summary` adds the cluster profiles to ``tables`` (with the data
        kept): unless the method's own tables hold them."""
        return "profiles" not in tables

    def _no_data(self) -> str:
        if self.lazy_counts is not None:
            return "Fitted on Dask: the rows stay on the cluster, so per-row profiles are not kept."
        return "Fitted with keep_data=False: cluster profiles are not available."

    # ---------------------------------------------------------------- printing
    def _lines(self) -> list[str]:
        obs = f"{self.n_obs} obs"
        if self.n_dropped:
            obs += f" ({self.n_dropped} dropped for missing values)"
        lines = [
            f"{self._headline()} on {obs}, {self.variables.describe()}",
            f"Call: {self.call}",
            f"Cluster sizes: {fmt_list(self.sizes.to_numpy(), limit=12)}",
        ]
        lines += dropped_constant_lines(self.variables)
        lines += self._detail_lines()
        status = (
            f"converged in {self.n_iter} iterations"
            if self.converged
            else f"did NOT converge in {self.n_iter} iterations"
        )
        lines.append(status[0].upper() + status[1:])
        hint = "Use .summary() for profiles"
        hint += f", {self.plot_hint}." if self.plot_hint else "."
        lines.append(hint)
        return lines

    def _html_table(self) -> str:
        return self.sizes.to_frame().T.to_html()

    def summary(self) -> Summary:
        """The tables (clusters, parameters, profiles ...) and notes; print it or read ``.tables``.

        Returns
        -------
        Summary
            Prints like R's ``summary()``; ``.tables`` holds the DataFrames.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> fit.summary().tables["clusters"]["size"].tolist()
        [20, 20, 20]
        """
        tables = self._summary_tables()
        if self.table is not None and self._adds_profiles(tables):
            tables["profiles"] = self.profiles()
        return Summary(
            title=f"{self.method_name}: summary",
            call=self.call,
            tables=tables,
            notes=self._notes(),
            html_hidden=self._html_hidden(),
            text_hidden=self._text_hidden(),
            unselected=self._unselected(),
        )

    def _html_hidden(self) -> tuple[str, ...]:
        """Summary tables the HTML view leaves out (repeated by another table)."""
        return ()

    def _text_hidden(self) -> tuple[str, ...]:
        """Summary tables the printed text leaves out (for this fit, another table
        shows the same rows; a note says so)."""
        return ()

    def _unselected(self) -> tuple[str, ...]:
        """Variables no cluster uses (sparse methods: weight 0; CRAFT: selected by none)."""
        weights = getattr(self, "weights", None)
        if isinstance(weights, pd.Series):
            return tuple(str(v) for v in weights.index[weights.to_numpy() == 0])
        return ()

    def profiles(self) -> pd.DataFrame:
        """Per-variable profile by cluster (mean/sd for numeric, level shares for categorical).

        Returns
        -------
        DataFrame
            Rows ``(variable, statistic)``, one column per cluster and ``overall``.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> fit.profiles().loc["f1"].index.tolist()
        ['mean', 'sd']
        """
        if self.table is None:
            raise ValueError(
                f"{self._no_data()} Profiles need the data: refit in memory with keep_data=True."
            )
        return cluster_profiles(self.table, self.labels)

    def to_frame(self) -> pd.DataFrame:
        """The input index with a ``cluster`` column (``<NA>`` on dropped rows).

        Returns
        -------
        DataFrame
            One ``Int64`` column, ``cluster``, on the input's row index.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> fit.to_frame().shape
        (60, 1)
        """
        return self.labels.rename("cluster").to_frame()

    # ------------------------------------------------------------ broom-style tables
    def tidy(self) -> pd.DataFrame:
        """One row per (cluster, variable), as R's ``broom::tidy``: ``selected``,
        ``relevance`` (a sparse fit's weight, CRAFT's relevance), and the profile (``mean``/``sd``, or the
        most frequent ``level`` and its ``share``). See :func:`~._results.tidy.tidy_frame`.

        Returns
        -------
        pandas.DataFrame
            One row per cluster and variable.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> tidy = fit.tidy()
        >>> list(tidy.columns[:3]), len(tidy)
        (['cluster', 'variable', 'kind'], 300)
        """
        return tidy_frame(self)

    def glance(self) -> pd.DataFrame:
        """One row for the fit, as R's ``broom::glance``: method, ``n_obs``,
        ``n_dropped``, ``n_variables``, ``n_clusters``, ``k``, ``lambda``, ``wbound``,
        ``objective``, ``n_iter``, ``converged``, ``criterion`` (NaN where a method has
        no such quantity).

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> row = fit.glance()
        >>> row[["n_obs", "n_clusters", "k"]].iloc[0].tolist()
        [60, 3, 3]
        """
        return glance_row(self)

    def augment(self, data: pd.DataFrame) -> pd.DataFrame:
        """``data`` (the rows the fit was given) with a ``.cluster`` column, as R's
        ``broom::augment``; ``<NA>`` on rows dropped for missing values. ``data`` is
        not modified.

        Parameters
        ----------
        data : pandas.DataFrame
            The rows the fit was given (same index).

        Returns
        -------
        pandas.DataFrame
            A copy of ``data`` with the ``.cluster`` column.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> data = sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data
        >>> fit = dpmeans(data, k=3)
        >>> out = fit.augment(data)
        >>> out.shape, out[".cluster"].nunique()
        ((60, 101), 3)
        """
        return augment_frame(self.labels, data)


#: A cluster under this share of the rows (or of one row) in a fit asked for ``k``
#: clusters is reported: the calibration found ``k`` only by splitting off outliers.
SMALL_CLUSTER_SHARE = 0.01


def warn_small_clusters(sizes: pd.Series, k: int | None, method: str) -> None:
    """A :class:`~sparseclust.exceptions.DataWarning` when a fit asked for ``k``
    clusters has one of a single row or under 1 % of the rows (outliers split off to
    reach ``k``), naming the sizes and the fixes; not on data of fewer than 10 rows
    per cluster, where single-row clusters say nothing."""
    n = int(sizes.sum())
    if k is None or len(sizes) < 2 or n < 10 * len(sizes):  # too few rows to judge
        return
    small = sizes[(sizes <= 1) | (sizes < SMALL_CLUSTER_SHARE * n)]
    if small.empty:
        return
    shown = ", ".join(f"cluster {c}: {int(s)} row{'s' if s != 1 else ''}" for c, s in small.items())
    warnings.warn(
        f"{method}(k={k}) found tiny clusters ({shown}; sizes "
        f"{fmt_list(sizes.to_numpy(), limit=12)} of {n} rows): likely outliers split off to "
        "reach k. Look at those rows, or try another k.",
        DataWarning,
        stacklevel=user_stacklevel(),
    )


def dropped_constant_lines(spec: VariableSpec) -> list[str]:
    """``["Constant columns dropped: A16"]`` when the fit dropped any, and a line per
    kind of screening decision (``"Screened out: id (identifier)"``), else ``[]``."""
    lines = []
    if spec.dropped_constant:
        lines.append(f"Constant columns dropped: {fmt_list(spec.dropped_constant, limit=10)}")
    heads = {
        "dropped": "Screened out",
        "parsed": "Parsed from text",
        "lumped": "Rare levels lumped",
    }
    for action, head in heads.items():
        done = [f"{d.name} ({d.why})" for d in spec.screening if d.action == action]
        if done:
            lines.append(f"{head}: {fmt_list(done, limit=6)}")
    return lines


def variable_notes(spec: VariableSpec) -> list[str]:
    """The summary's notes on the columns the front set aside or changed: the constant
    ones dropped and each screening decision (what, why, how to undo)."""
    notes = [constant_note(spec)] if spec.dropped_constant else []
    notes += [
        f"Column {d.name!r} {d.action} ({d.why}: {d.detail}); to undo: {d.undo}."
        for d in spec.screening
    ]
    return notes


def constant_note(spec: VariableSpec) -> str:
    """The summary's note on the constant columns the fit dropped."""
    return (
        f"{len(spec.dropped_constant)} constant column(s) dropped before the fit (one "
        f"distinct value, no clustering information): "
        f"{fmt_list(spec.dropped_constant, limit=10)}."
    )


def cluster_profiles(table: ColumnTable, labels: pd.Series) -> pd.DataFrame:
    """clustMixType-style profiles: one row per (variable, statistic), one column per cluster.

    Numeric variables get ``mean`` and ``sd`` rows; categorical variables one row per
    level with the share of the cluster's (non-missing) rows at that level. The last
    column, ``overall``, is the whole sample.
    """
    lab = kept_labels(table, labels)
    ok = ~np.isnan(lab)
    lab = lab[ok].astype(int)
    clusters = np.unique(lab)
    cols = [*map(int, clusters), "overall"]
    rows: list[tuple[str, str]] = []
    data: list[list[float]] = []
    num = table.numeric[ok]
    for j, name in enumerate(table.numeric_names):
        x = num[:, j]
        means, sds = [], []
        for k in clusters:
            v = x[(lab == k) & ~np.isnan(x)]
            means.append(v.mean() if v.size else np.nan)
            sds.append(v.std(ddof=1) if v.size > 1 else np.nan)
        v = x[~np.isnan(x)]
        means.append(v.mean())
        sds.append(v.std(ddof=1) if v.size > 1 else np.nan)
        rows += [(name, "mean"), (name, "sd")]
        data += [means, sds]
    codes = table.codes[ok]
    for j, name in enumerate(table.categorical_names):
        c = codes[:, j]
        levels = table.levels[name]
        K = clusters.size
        counts = np.zeros((K + 1, len(levels)))
        valid = c >= 0
        pos = np.searchsorted(clusters, lab[valid])
        np.add.at(counts, (pos, c[valid]), 1.0)
        counts[K] = counts[:K].sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = counts / counts.sum(axis=1, keepdims=True)
        for t, lv in enumerate(levels):
            rows.append((name, str(lv)))
            data.append(list(shares[:, t]))
    index = pd.MultiIndex.from_tuples(rows, names=["variable", "statistic"])
    return pd.DataFrame(data, index=index, columns=pd.Index(cols, name="cluster"))


def kept_labels(table: ColumnTable, labels: pd.Series) -> np.ndarray:
    """The labels of the table's kept rows, by position (float, NaN for ``<NA>``).

    ``labels`` has one entry per input row (the result's ``labels``). Rows are taken by
    position through ``table.dropped``, never looked up by index label: the caller's
    index may repeat labels.
    """
    if len(labels) != len(table.index):
        raise ValueError(
            f"labels has {len(labels)} entries but the data has {len(table.index)} rows; "
            f"pass one label per input row (the result's labels)."
        )
    return labels.to_numpy(dtype=float)[~table.dropped]


def labels_series(
    table: ColumnTable, labels: np.ndarray, unplaced: np.ndarray | None = None
) -> pd.Series:
    """0-based Int64 labels on the caller's full index: ``<NA>`` on dropped rows and on
    the kept rows flagged ``unplaced`` (e.g. a row of new data with no observed value)."""
    n = len(table.index)
    values = np.zeros(n, dtype=np.int64)
    missing = np.ones(n, dtype=bool)
    kept = np.flatnonzero(~table.dropped)
    values[kept] = np.asarray(labels, dtype=np.int64)
    missing[kept] = False
    if unplaced is not None and unplaced.any():
        missing[kept[unplaced]] = True
    values[missing] = 0
    return pd.Series(pd.arrays.IntegerArray(values, missing), index=table.index, name="cluster")


def fmt_params(params: dict) -> str:
    """``"lam=2.5, k=3"``."""
    return ", ".join(f"{k}={fmt(v)}" for k, v in params.items())
