"""Plots of sparseclust results. pyplot is imported inside each function.

Every function takes ``ax=None`` (a new figure is created, never ``plt.gca()``),
returns the Axes it drew on, forwards ``**kwargs`` to the main matplotlib call and
never calls ``plt.show()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._plot.dendrogram import color_dendrogram, plot_dendrogram, plot_hclust
from ._results.base import kept_labels

__all__ = [
    "color_dendrogram",
    "plot_calibration",
    "plot_clusters",
    "plot_covariate_hierarchy",
    "plot_covariate_path",
    "plot_dendrogram",
    "plot_hclust",
    "plot_feature_pair",
    "plot_gap",
    "plot_weights",
    "plot_weights_path",
    "plot_k_selection",
    "plot_m_selection",
    "plot_objective",
    "plot_profiles",
    "plot_subspaces",
]


def _axes(ax: Any, figsize: tuple[float, float] = (6.0, 4.5)) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _circle(ax: Any, x: Any, y: Any, label: str) -> None:
    """Circle the chosen point(s) in red (gap and path plots)."""
    ax.plot(
        x,
        y,
        linestyle="none",
        marker="o",
        markersize=14,
        markerfacecolor="none",
        markeredgecolor="red",
        markeredgewidth=2,
        label=label,
        zorder=3,
    )


def _projection(X: np.ndarray, dims: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre, then project on principal components ``dims`` (via SVD). Returns
    (scores, axes (2 x p), explained-variance ratios)."""
    mean = X.mean(axis=0)
    Xc = X - mean
    _, s, vt = np.linalg.svd(Xc, full_matrices=False)
    var = s**2 / max((s**2).sum(), np.finfo(float).tiny)
    comps = np.zeros((2, X.shape[1]))
    ratios = np.zeros(2)
    for i, d in enumerate(dims):
        if d < vt.shape[0]:
            comps[i] = vt[d]
            ratios[i] = var[d]
    return Xc @ comps.T, comps, ratios


def plot_clusters(
    result: Any,
    ax: Any = None,
    *,
    dims: tuple[int, int] = (0, 1),
    centers: bool = True,
    **kwargs: Any,
) -> Any:
    """Scatter of the data on two principal components, coloured by cluster.

    The projection is of the matrix the method clustered (numeric variables,
    scaled if the fit scaled them, plus one-hot columns). Centres are drawn as
    black crosses.

    Parameters
    ----------
    result : DPMeansResult or SparseKMeansResult
        A fit that kept its data (``keep_data=True``, the default).
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure.
    dims : tuple of int, default (0, 1)
        The two principal components to show, 0-based.
    centers : bool, default True
        Draw the cluster centres, labelled by cluster.
    **kwargs
        Passed to ``Axes.scatter`` (defaults ``s=14``, ``alpha=0.8``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import dpmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
    >>> ax = plot_clusters(fit)
    >>> ax.get_title()
    'DP-means: 3 clusters'
    >>> plt.close(ax.figure)
    """
    ax = _axes(ax)
    X = result._matrix()
    scores, comps, ratios = _projection(X, dims)
    lab = result.labels.dropna().to_numpy(dtype=int)
    kwargs.setdefault("s", 14)
    kwargs.setdefault("alpha", 0.8)
    kwargs.setdefault("cmap", "tab10" if result.n_clusters <= 10 else "tab20")
    sc = ax.scatter(scores[:, 0], scores[:, 1], c=lab, **kwargs)
    if centers:
        C = (result.centers.to_numpy() - X.mean(axis=0)) @ comps.T
        ax.scatter(
            C[:, 0],
            C[:, 1],
            marker="X",
            s=120,
            c="black",
            edgecolors="white",
            linewidths=1.0,
            label="centres",
            zorder=3,
        )
        for k, (cx, cy) in enumerate(C):
            ax.annotate(
                str(k),
                (cx, cy),
                textcoords="offset points",
                xytext=(6, 6),
                fontsize=9,
                weight="bold",
            )
    ax.set_xlabel(f"PC{dims[0] + 1} ({ratios[0]:.0%} of variance)")
    ax.set_ylabel(f"PC{dims[1] + 1} ({ratios[1]:.0%} of variance)")
    ax.set_title(f"{result.method_name}: {result.n_clusters} clusters")
    if result.n_clusters <= 12:
        handles, _ = sc.legend_elements()
        ax.legend(
            handles,
            [f"cluster {k}" for k in range(len(handles))],
            title=None,
            fontsize=8,
            loc="best",
        )
    return ax


def plot_objective(result: Any, ax: Any = None, **kwargs: Any) -> Any:
    """Plot the objective at the start (iteration 0) and after every pass.

    Parameters
    ----------
    result : CraftResult or DPMeansResult
        A fit with an ``objective_path``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure.
    **kwargs
        Passed to ``Axes.plot`` (default ``marker="o"``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import dpmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> ax = plot_objective(dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3))
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('iteration', 'objective')
    >>> plt.close(ax.figure)
    """
    ax = _axes(ax)
    path = np.asarray(result.objective_path)
    kwargs.setdefault("marker", "o")
    ax.plot(np.arange(path.size), path, **kwargs)
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective")
    ax.set_title(f"{result.method_name}: objective by iteration")
    return ax


def plot_calibration(result: Any, ax: Any = None, **kwargs: Any) -> Any:
    """Plot the number of clusters against lambda for every fit tried in calibration.

    Parameters
    ----------
    result : CraftResult or DPMeansResult
        A fit whose lambda was calibrated to ``k`` (``k=`` without ``lam=``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure.
    **kwargs
        Passed to ``Axes.step`` (default ``marker="o"``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on, lambda on a log scale.

    Raises
    ------
    ValueError
        If the fit was not calibrated.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import dpmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> ax = plot_calibration(dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3))
    >>> ax.get_xscale(), ax.get_ylabel()
    ('log', 'number of clusters')
    >>> plt.close(ax.figure)
    """
    if result.calibration is None:
        raise ValueError("this fit was not calibrated (no k= without lam=); nothing to plot.")
    ax = _axes(ax)
    tr = result.calibration.sort_values("lam")
    kwargs.setdefault("marker", "o")
    ax.step(tr["lam"], tr["n_clusters"], where="post", **kwargs)
    ax.axhline(result.k, color="grey", ls="--", lw=1, label=f"k = {result.k}")
    ax.axvline(result.lam, color="C3", ls=":", lw=1, label=f"lambda = {result.lam:.4g}")
    ax.set_xscale("log")
    ax.set_xlabel("lambda")
    ax.set_ylabel("number of clusters")
    ax.set_title("Calibration of lambda")
    ax.legend(fontsize=8)
    return ax


def plot_profiles(result: Any, ax: Any = None, *, max_variables: int = 40, **kwargs: Any) -> Any:
    """Heatmap of the cluster profiles, one row per variable, on two colour scales.

    Numeric variables: the cluster mean as a z-score of the overall mean and sd, on a
    diverging scale symmetric about 0 (``RdBu_r``). Categorical variables: the share of
    the cluster's rows at the variable's most frequent level, on a sequential scale
    from 0 to 1 (``Greens``). Each scale has its own labelled colour bar, so a share
    of 0.9 does not read as z = +0.9; the cells are annotated with their values.

    Parameters
    ----------
    result : CraftResult, DPMeansResult, SparseKMeansResult or SparseHClustResult
        A fit with ``profiles()``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure sized to the table.
    max_variables : int, default 40
        Show at most this many variables (the first ones).
    **kwargs
        Passed to ``Axes.imshow`` of the numeric rows (default ``cmap="RdBu_r"``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (colour bars are added beside it).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import dpmeans
    >>> from sparseclust.datasets import load_penguins
    >>> fit = dpmeans("~ . - species - year", data=load_penguins(), k=3, scale=True,
    ...               missing="drop")
    >>> ax = plot_profiles(fit)
    >>> ax.get_xlabel()
    'cluster'
    >>> [bar.get_ylabel() for bar in ax.figure.axes[1:]]  # the two colour bars
    ['numeric: z-score of the cluster mean', 'categorical: share at the top level']
    >>> plt.close(ax.figure)
    """
    M, labels, is_share, clusters = _profile_rows(result, max_variables)
    label_in = 0.075 * max((len(str(lab)) for lab in labels), default=0)  # room for long names
    ax = _axes(ax, figsize=(2.6 + label_in + 0.7 * len(clusters), 1.2 + 0.3 * len(labels)))
    z = np.ma.masked_array(M, mask=np.repeat(is_share[:, None], M.shape[1], axis=1))
    lim = float(np.nanmax(np.abs(z))) if z.count() and np.isfinite(z).any() else 1.0
    kwargs.setdefault("cmap", "RdBu_r")
    kwargs.setdefault("vmin", -lim)
    kwargs.setdefault("vmax", lim)
    ims = []
    if (~is_share).any():
        ims.append((ax.imshow(z, aspect="auto", **kwargs), "numeric: z-score of the cluster mean"))
    if is_share.any():
        shares = np.ma.masked_array(M, mask=~np.ma.getmaskarray(z))
        im = ax.imshow(shares, aspect="auto", cmap="Greens", vmin=0.0, vmax=1.0)
        ims.append((im, "categorical: share at the top level"))
    for r in range(M.shape[0]):
        for c in range(M.shape[1]):
            if np.isfinite(M[r, c]):
                strong = abs(M[r, c]) > 0.6 * (1.0 if is_share[r] else lim)
                text = f"{M[r, c]:.2f}" if is_share[r] else f"{M[r, c]:+.1f}".replace("-0.0", "0.0")
                _cell_text(ax, r, c, text, strong)
    ax.set_xticks(range(len(clusters)), [str(c) for c in clusters])
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlabel("cluster")
    ax.set_title(f"{result.method_name}: cluster profiles")
    for im, label in ims:
        bar = ax.figure.colorbar(im, ax=ax, shrink=0.8, pad=0.02)
        bar.set_label(label, fontsize=8)
        bar.ax.tick_params(labelsize=7)
    return ax


def _profile_rows(result: Any, max_variables: int) -> tuple[np.ndarray, list, np.ndarray, list]:
    """(values, row labels, which rows are shares, clusters) of :func:`plot_profiles`:
    a numeric variable's z-scores, a categorical one's shares at its top level."""
    prof = result.profiles()
    rows, labels, share = [], [], []
    clusters = [c for c in prof.columns if c != "overall"]
    for var in dict.fromkeys(prof.index.get_level_values(0)):
        block = prof.loc[var]
        if "mean" in block.index and "sd" in block.index and len(block) == 2:
            sd = block.loc["sd", "overall"]
            z = (block.loc["mean", clusters] - block.loc["mean", "overall"]) / (sd if sd > 0 else 1)
            rows.append(z.to_numpy(dtype=float))
            labels.append(f"{var} (z)")
            share.append(False)
        else:
            top = block["overall"].astype(float).idxmax()
            rows.append(block.loc[top, clusters].to_numpy(dtype=float))
            labels.append(f"{var}={top} (share)")
            share.append(True)
    n = min(len(rows), max_variables)
    return np.vstack(rows)[:n], labels[:n], np.asarray(share[:n], dtype=bool), clusters


# ----------------------------------------------------------------------------- subspaces
def _bool_frame(name: str, value: Any) -> Any:
    """``value`` as a boolean DataFrame (bool, or 0/1 without missing values)."""
    import pandas as pd

    if not isinstance(value, pd.DataFrame):
        raise TypeError(
            f"{name} must be a boolean DataFrame (clusters x features); got "
            f"{name} of type {type(value).__name__}. Pass e.g. fit.selected or "
            "Simulated.subspaces."
        )
    if value.shape[0] == 0 or value.shape[1] == 0:
        raise ValueError(
            f"{name} must have at least one cluster (row) and one feature (column); got "
            f"shape {value.shape}."
        )
    if all(pd.api.types.is_bool_dtype(t) for t in value.dtypes) and not value.isna().any().any():
        return value.astype(bool)
    try:
        arr = value.to_numpy(dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is None or not np.isin(arr, (0.0, 1.0)).all():
        raise TypeError(
            f"{name} must hold booleans (or 0/1) without missing values; got dtypes "
            f"{sorted({str(t) for t in value.dtypes})}. Convert it with .astype(bool)."
        )
    return pd.DataFrame(arr.astype(bool), index=value.index, columns=value.columns)


def _match_rows(truth: np.ndarray, found: np.ndarray) -> list[int]:
    """Order of the rows of ``found`` that best matches the rows of ``truth`` (Hungarian
    assignment on the number of agreeing cells); unmatched rows of ``found`` last."""
    from scipy.optimize import linear_sum_assignment

    agree = (truth[:, None, :] == found[None, :, :]).sum(axis=2)
    rows, cols = linear_sum_assignment(agree, maximize=True)
    matched = [int(j) for _, j in sorted(zip(rows.tolist(), cols.tolist()))]
    return matched + [j for j in range(found.shape[0]) if j not in set(matched)]


def _draw_selection(ax: Any, M: Any, title: str, kwargs: dict) -> Any:
    kw = {"cmap": "Greys", "aspect": "auto", "interpolation": "nearest"}
    if "norm" not in kwargs:  # imshow takes a norm or vmin / vmax, not both
        kw.update(vmin=0.0, vmax=1.0)
    kw.update(kwargs)
    im = ax.imshow(M.to_numpy(dtype=float), **kw)
    n_rows, n_cols = M.shape
    step = -(-n_cols // 60)  # at most about 60 feature names on the axis
    ticks = np.arange(0, n_cols, step)
    ax.set_xticks(ticks, [str(M.columns[j]) for j in ticks], rotation=90, fontsize=8)
    ax.set_yticks(range(n_rows), [f"cluster {k}" for k in M.index], fontsize=8)
    ax.set_xticks(np.arange(-0.5, n_cols, 1.0), minor=True)
    ax.set_yticks(np.arange(-0.5, n_rows, 1.0), minor=True)
    ax.grid(which="minor", color="0.75", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel("feature (dark = selected)")
    ax.set_title(title)
    return im


def _relevance_frame(selected: Any, relevance: Any) -> Any:
    """The relevance to shade by: None (black and white), a fit's own (True) or the
    frame given."""
    if relevance is None or relevance is False:
        return None
    if relevance is True:
        if _is_frame(selected) or not hasattr(selected, "relevance"):
            raise TypeError(
                "relevance=True takes the relevance from a fit (e.g. a CRAFT fit), but "
                f"selected is of type {type(selected).__name__}. Pass the fit, or "
                "relevance=<DataFrame of clusters x features>."
            )
        return selected.relevance
    if not _is_frame(relevance):
        raise TypeError(
            "relevance must be True, False, None or a DataFrame of numbers (clusters x "
            f"features, e.g. fit.relevance); got relevance of type {type(relevance).__name__}."
        )
    return relevance


def _check_relevance(rel: Any, sel: Any) -> Any:
    """``rel`` as floats on ``sel``'s clusters and features (an error naming the
    mismatch otherwise)."""
    import pandas as pd

    if set(rel.columns) != set(sel.columns) or len(rel.index) != len(sel.index):
        raise ValueError(
            f"relevance must have the clusters and features of selected: got shape "
            f"{rel.shape} for selected's {sel.shape} (features missing: "
            f"{[c for c in sel.columns if c not in set(rel.columns)][:5]}). Pass "
            "fit.relevance with fit.selected."
        )
    try:
        arr = rel[list(sel.columns)].to_numpy(dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is None or np.isnan(arr).any():
        raise TypeError(
            f"relevance must hold numbers without missing values; got dtypes "
            f"{sorted({str(t) for t in rel.dtypes})}."
        )
    return pd.DataFrame(arr, index=sel.index, columns=sel.columns)


#: Largest shaded matrix whose cells get their values written in (``annotate=None``).
_ANNOTATE_MAX = (20, 30)  # clusters, features


def _subspace_size(
    n_rows: int, n_cols: int, rel: Any, annotate: bool = False
) -> tuple[float, float]:
    """Figure size (inches) of one selection panel; room for the colourbar and its
    label with ``rel``, and wider cells for the written values with ``annotate``."""
    per_col = 0.34 if annotate else 0.17
    width, height = max(3.5, 1.6 + per_col * n_cols), 1.7 + 0.3 * n_rows
    if rel is None:
        return width, height
    longest = max(len(str(c)) for c in rel.columns)  # rotated tick labels under the cells
    return width + 1.2, max(height, 1.0 + 0.075 * min(longest, 40) + max(1.6, 0.3 * n_rows))


def _annotate_flag(annotate: Any, rel: Any) -> bool:
    """Whether to write the relevance values in the cells: ``annotate``, or by default
    (None) when the shaded matrix is small enough for the numbers to fit."""
    if annotate is not None:
        from ._data.params import check_bool

        annotate = check_bool("annotate", annotate)
    if rel is None:
        return False
    if annotate is None:
        return rel.shape[0] <= _ANNOTATE_MAX[0] and rel.shape[1] <= _ANNOTATE_MAX[1]
    return annotate


def _write_values(ax: Any, values: np.ndarray, im: Any) -> None:
    """Each cell's value (whole numbers from 10 up), white on dark cells."""
    digits = 0 if np.abs(values).max() >= 10 else 1
    shade = im.norm(values)
    for (i, j), v in np.ndenumerate(values):
        _cell_text(ax, i, j, f"{v:.{digits}f}", bool(np.ma.getdata(shade)[i, j] > 0.55))


def _cell_text(ax: Any, row: int, col: int, text: str, dark: bool) -> None:
    """``text`` centred in a heatmap cell, white on a dark cell, black otherwise."""
    ax.text(
        col, row, text, ha="center", va="center", fontsize=7, color="white" if dark else "black"
    )


def _draw_panel(
    ax: Any, sel: Any, rel: Any, title: str, kwargs: dict, annotate: bool = False
) -> Any:
    """The selection matrix in black and white, or shaded by ``rel`` with the
    selected cells outlined, a colourbar and (``annotate``) the values written in."""
    if rel is None:
        return _draw_selection(ax, sel, title, kwargs)
    from matplotlib import patheffects
    from matplotlib.colors import PowerNorm
    from matplotlib.patches import Rectangle

    values = rel.to_numpy()
    top = float(values.max())
    kw = {"cmap": "YlOrBr", **kwargs}
    if "norm" not in kw:  # square-root scale: one large cell does not wash out the rest
        vmin, vmax = kw.pop("vmin", 0.0), kw.pop("vmax", top if top > 0 else 1.0)
        kw["norm"] = PowerNorm(0.5, vmin=vmin, vmax=vmax)
    im = _draw_selection(ax, rel, title, kw)
    halo = [patheffects.withStroke(linewidth=3.6, foreground="white")]  # seen on dark cells
    for i, j in zip(*np.nonzero(sel.to_numpy())):
        ax.add_patch(
            Rectangle(
                (j - 0.42, i - 0.42),
                0.84,
                0.84,
                fill=False,
                edgecolor="#0050b4",
                lw=1.8,
                path_effects=halo,
            )
        )
    if annotate:
        _write_values(ax, values, im)
    ax.set_xlabel("feature (outlined = selected)")
    extend = "min" if (values < im.norm.vmin).any() else "neither"
    ax.figure.colorbar(im, ax=ax, label="relevance (nats)", extend=extend)
    return im


def plot_subspaces(
    selected: Any,
    truth: Any = None,
    *,
    ax: Any = None,
    match: bool = True,
    relevance: Any = None,
    annotate: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Draw the clusters x features selection matrix, as in the CRAFT paper's Figs. 2-4.

    Draws the boolean matrix as an image: one row per cluster (labelled
    ``"cluster k"`` with the cluster's own label), one column per feature (names as
    rotated tick labels), dark = selected. Unlike the other plots here it returns
    the Figure, since with ``truth`` it draws two panels.

    Parameters
    ----------
    selected : DataFrame of bool, or an object with a ``.selected`` attribute
        Clusters x features selection (e.g. a CRAFT fit, or its ``selected``).
        0/1 values are accepted.
    truth : DataFrame of bool, optional
        The true subspaces (rows = true clusters, e.g. ``Simulated.subspaces``), with
        the same features as ``selected``. Then two panels are drawn side by side,
        "True subspaces" and "Recovered subspaces"; the recovered columns follow the
        order of ``truth``'s columns.
    ax : Axes, or a pair of Axes with ``truth``, optional
        Where to draw; by default a new figure.
    match : bool, default True
        With ``truth``: reorder the recovered rows to best match the true rows
        (Hungarian assignment, :func:`scipy.optimize.linear_sum_assignment`, on the
        number of agreeing cells); recovered clusters left unmatched (more clusters
        than the truth) are appended at the bottom.
    relevance : DataFrame of numbers, or True, optional
        Shade the (recovered) selection matrix by relevance instead of drawing it in
        black and white: cells coloured on a sequential square-root scale from 0 to
        the largest value (negative values drawn as 0; relevances are heavy-tailed,
        and on a linear scale one large cell leaves the others blank), selected
        cells outlined (blue, with a white edge that shows on dark cells), and a
        colourbar "relevance (nats)". A DataFrame with the same clusters and
        features as ``selected`` (e.g. ``CraftResult.relevance``), or True to take
        ``selected.relevance`` from a fit. Default: the black-and-white matrix.
    annotate : bool, optional
        With ``relevance``: write each cell's value in it (whole numbers from 10
        up). Default (None): when the matrix has at most 20 clusters and 30
        features. The new figure's cells are then twice as wide.
    **kwargs
        Passed to ``Axes.imshow`` (defaults: ``cmap="Greys"``, ``vmin=0``,
        ``vmax=1``, ``aspect="auto"``, ``interpolation="nearest"``; with
        ``relevance``: ``cmap="YlOrBr"`` and ``norm=PowerNorm(0.5, vmin, vmax)``
        with ``vmin=0`` and ``vmax`` the largest relevance, either of which can be
        passed; ``norm=`` replaces the scale).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, with one panel (or two with ``truth``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust.simulate import craft_fig2a
    >>> truth = craft_fig2a(n_per_cluster=5, rng=0).subspaces
    >>> found = truth.iloc[[2, 0, 1]].reset_index(drop=True)  # same sets, other labels
    >>> fig = plot_subspaces(found, truth)
    >>> [a.get_title() for a in fig.axes]
    ['True subspaces', 'Recovered subspaces']
    >>> [t.get_text() for t in fig.axes[1].get_yticklabels()]
    ['cluster 1', 'cluster 2', 'cluster 0']
    >>> plt.close(fig)

    Shaded by relevance (here made up: 1 where selected, 0.2 elsewhere):

    >>> fig = plot_subspaces(truth, relevance=truth * 0.8 + 0.2)
    >>> fig.axes[1].get_ylabel()
    'relevance (nats)'
    >>> fig.axes[0].texts[0].get_text()  # the values, written in the cells
    '1.0'
    >>> plt.close(fig)
    """
    from ._data.params import check_bool

    match = check_bool("match", match)
    rel = _relevance_frame(selected, relevance)
    if hasattr(selected, "selected") and not _is_frame(selected):
        selected = selected.selected
    sel = _bool_frame("selected", selected)
    if rel is not None:
        rel = _check_relevance(rel, sel)
    annotate = _annotate_flag(annotate, rel)
    if truth is None:
        if ax is None:
            import matplotlib.pyplot as plt

            n_rows, n_cols = sel.shape
            fig, ax = plt.subplots(
                figsize=_subspace_size(n_rows, n_cols, rel, annotate), layout="constrained"
            )
        elif not hasattr(ax, "imshow"):
            raise TypeError(
                f"ax must be a matplotlib Axes; got ax of type {type(ax).__name__}. "
                "Leave ax=None for a new figure."
            )
        _draw_panel(ax, sel, rel, "Selected features", kwargs, annotate)
        return ax.figure

    tru = _bool_frame("truth", truth)
    missing = [c for c in tru.columns if c not in set(sel.columns)]
    extra = [c for c in sel.columns if c not in set(tru.columns)]
    if missing or extra:
        raise ValueError(
            "selected and truth must have the same features (columns); "
            f"missing from selected: {missing[:5]}, not in truth: {extra[:5]}. "
            "Select the same columns in both."
        )
    sel = sel[list(tru.columns)]
    rel = None if rel is None else rel[list(tru.columns)]
    if match:
        order = _match_rows(tru.to_numpy(), sel.to_numpy())
        sel = sel.iloc[order]
        rel = None if rel is None else rel.iloc[order]
    if ax is None:
        import matplotlib.pyplot as plt

        n_rows, n_cols = max(tru.shape[0], sel.shape[0]), tru.shape[1]
        width, height = _subspace_size(n_rows, n_cols, None)
        shaded = _subspace_size(n_rows, n_cols, rel, annotate)
        width = width + (width if rel is None else shaded[0])
        fig, axes = plt.subplots(1, 2, figsize=(width, shaded[1]), layout="constrained")
    else:
        axes = list(ax) if isinstance(ax, list | tuple | np.ndarray) else [ax]
        if len(axes) != 2 or not all(hasattr(a, "imshow") for a in axes):
            raise ValueError(
                "with truth=, ax must be a pair of Axes (true, recovered); got "
                f"ax of type {type(ax).__name__}. Leave ax=None for a new figure, e.g. "
                "fig, axs = plt.subplots(1, 2) then ax=axs."
            )
    _draw_selection(axes[0], tru, "True subspaces", kwargs if rel is None else {})
    _draw_panel(axes[1], sel, rel, "Recovered subspaces", kwargs, annotate)
    return axes[0].figure


def _is_frame(value: Any) -> bool:
    import pandas as pd

    return isinstance(value, pd.DataFrame)


def plot_k_selection(table: Any, *, ax: Any = None, **kwargs: Any) -> Any:
    """The criterion that chose the number of clusters, against K, with the choice.

    Parameters
    ----------
    table : DataFrame
        Either a gap table, columns ``k`` (number of clusters), ``gap`` and ``sd_gap``
        (drawn as error bars, +/- one ``sd_gap``), or a stability table (what
        ``craft(k_method="stability")`` stores), columns ``k``, ``stability`` and
        ``sd_stability`` (the mean adjusted Rand index over subsample pairs +/- one sd,
        drawn where defined, K >= 2) and optionally ``gap`` / ``sd_gap`` at K = 1 and
        2 (the test of K = 1 against K = 2, stated in the legend with the verdict the
        fit stored in ``table.attrs["gap_test"]``). An optional
        boolean ``chosen`` marks the selected K (a red circle; a chosen K = 1 in a
        stability table, which has no stability, as a dashed red line). When the fit
        found the curve flat at the chosen K (``table.attrs["flat"]``: it does not
        beat a neighbouring K beyond one standard error), the plot says so.
    ax : Axes, optional
        Where to draw; by default a new figure.
    **kwargs
        Passed to ``Axes.errorbar`` (defaults: ``marker="o"``, ``capsize=3``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> tab = pd.DataFrame({"k": [1, 2, 3, 4], "gap": [0.2, 0.5, 0.9, 0.85],
    ...                     "sd_gap": [0.05, 0.05, 0.04, 0.05],
    ...                     "chosen": [False, False, True, False]})
    >>> ax = plot_k_selection(tab)
    >>> ax.get_xlabel(), [t.get_text() for t in ax.get_legend().get_texts()]
    ('number of clusters K', ['chosen K = 3', 'gap +/- 1 sd'])
    >>> plt.close(ax.figure)
    """
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            "table must be a DataFrame with columns 'k' and 'gap', 'sd_gap' (or "
            f"'stability', 'sd_stability'); got table of type {type(table).__name__}."
        )
    stability = "stability" in table.columns
    need = ("k", "stability", "sd_stability") if stability else ("k", "gap", "sd_gap")
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise ValueError(
            f"table must have columns {list(need)}; missing {missing} (columns: "
            f"{list(table.columns)}). Rename the columns of your criterion table."
        )
    if table.empty:
        raise ValueError("table has no rows; nothing to plot.")
    tab = table.sort_values("k", kind="stable")
    k = tab["k"].to_numpy(dtype=float)
    y = tab[need[1]].to_numpy(dtype=float)
    sd = tab[need[2]].to_numpy(dtype=float)
    ax = _axes(ax)
    kwargs.setdefault("marker", "o")
    kwargs.setdefault("capsize", 3)
    kwargs.setdefault(
        "label", "stability (adjusted Rand) +/- 1 sd" if stability else "gap +/- 1 sd"
    )
    shown_k = np.isfinite(y)
    ax.errorbar(k[shown_k], y[shown_k], yerr=sd[shown_k], **kwargs)
    if stability and {"gap", "sd_gap"} <= set(tab.columns):
        g = dict(zip(k, tab["gap"].to_numpy(dtype=float)))
        s = dict(zip(k, tab["sd_gap"].to_numpy(dtype=float)))
        verdict = table.attrs.get("gap_test")  # stored by the fit that applied the rule
        if verdict and np.isfinite(g.get(1.0, np.nan)) and np.isfinite(g.get(2.0, np.nan)):
            ax.plot(
                [],
                [],
                linestyle="none",
                label=(
                    f"gap test: Gap(1) = {g[1.0]:.3f}, Gap(2) - sd = {g[2.0] - s[2.0]:.3f}"
                    f" -> {verdict}"
                ),
            )
    chosen = np.zeros(len(tab), dtype=bool)
    if "chosen" in tab.columns:
        chosen = tab["chosen"].eq(True).fillna(False).to_numpy(dtype=bool)
        on_curve = chosen & shown_k
        if on_curve.any():
            shown = ", ".join(f"{v:g}" for v in k[on_curve])
            _circle(ax, k[on_curve], y[on_curve], f"chosen K = {shown}")
        for v in k[chosen & ~shown_k]:
            ax.axvline(v, color="red", linestyle="--", label=f"chosen K = {v:g}")
    if stability or chosen.any():
        ax.legend(fontsize=9, framealpha=0.9, loc="best")
    flat = bool(table.attrs.get("flat")) and chosen.any()  # the verdict the fit stored
    from matplotlib.ticker import MaxNLocator

    if stability:
        ax.set_xlim(k.min() - 0.5, k.max() + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("number of clusters K")
    ax.set_ylabel("stability across subsamples" if stability else "gap statistic")
    title = "Choice of the number of clusters"
    if flat:
        title += f"\nflat: K = {k[chosen][0]:g} does not beat a neighbouring K beyond noise"
    ax.set_title(title, **({"fontsize": 10, "color": "darkred"} if flat else {}))
    return ax


def plot_m_selection(table: Any, *, ax: Any = None, **kwargs: Any) -> Any:
    """The BIC that chose CRAFT's budget m, against m, with the choice.

    Parameters
    ----------
    table : DataFrame
        What ``craft(m="auto")`` stores as ``m_selection``: columns ``m`` and ``bic``
        (lower is better), optionally ``n_numeric`` / ``n_categorical`` (features
        selected per cluster: written above each point) and a boolean ``chosen``
        (circled in red).
    ax : Axes, optional
        Where to draw; by default a new figure.
    **kwargs
        Passed to ``Axes.plot`` (default ``marker="o"``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> tab = pd.DataFrame({"m": [0.2, 0.5, 0.8], "bic": [310.0, 290.5, 301.2],
    ...                     "chosen": [False, True, False]})
    >>> ax = plot_m_selection(tab)
    >>> ax.get_xlabel(), [t.get_text() for t in ax.get_legend().get_texts()]
    ('budget m (share of features selected per cluster)', ['BIC', 'chosen m = 0.5'])
    >>> plt.close(ax.figure)
    """
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            "table must be a DataFrame with columns 'm' and 'bic' (a fit's m_selection); "
            f"got table of type {type(table).__name__}."
        )
    missing = [c for c in ("m", "bic") if c not in table.columns]
    if missing:
        raise ValueError(
            f"table must have columns ['m', 'bic']; missing {missing} (columns: "
            f"{list(table.columns)}). Pass a fit's m_selection."
        )
    if table.empty:
        raise ValueError("table has no rows; nothing to plot.")
    tab = table.sort_values("m", kind="stable")
    m = tab["m"].to_numpy(dtype=float)
    y = tab["bic"].to_numpy(dtype=float)
    ax = _axes(ax)
    kwargs.setdefault("marker", "o")
    kwargs.setdefault("label", "BIC")
    ax.plot(m, y, **kwargs)
    if {"n_numeric", "n_categorical"} <= set(tab.columns):
        for x, v, a, b in zip(m, y, tab["n_numeric"], tab["n_categorical"], strict=True):
            ax.annotate(
                f"{int(a)}+{int(b)}",
                (x, v),
                textcoords="offset points",
                xytext=(0, 7),
                ha="center",
                fontsize=8,
            )
    if "chosen" in tab.columns:
        chosen = tab["chosen"].eq(True).fillna(False).to_numpy(dtype=bool)
        if chosen.any():
            shown = ", ".join(f"{v:g}" for v in m[chosen])
            _circle(ax, m[chosen], y[chosen], f"chosen m = {shown}")
    ax.margins(y=0.12)  # room for the counts above the points
    ax.legend(fontsize=9, framealpha=0.9, loc="best")
    ax.set_xlabel("budget m (share of features selected per cluster)")
    ax.set_ylabel("BIC of the selected-feature model")
    title = "Choice of the budget m"
    if {"n_numeric", "n_categorical"} <= set(tab.columns):
        title += "\n(labels: numeric + categorical features selected per cluster)"
    ax.set_title(title, fontsize=10)
    return ax


# ------------------------------------------------------------------ sparse clustering
def _weight_series(result: Any) -> Any:
    import pandas as pd

    w = getattr(result, "weights", result)
    if not isinstance(w, pd.Series):
        raise TypeError(
            "plot_weights needs a sparse clustering result or a Series of weights; got "
            f"{type(result).__name__}."
        )
    return w


def plot_weights(
    result: Any, ax: Any = None, *, label_top: int = 5, title: str | None = None, **kwargs: Any
) -> Any:
    """Feature weights against feature index (sparcl's ``plot`` of a sparse k-means fit).

    Non-zero weights are drawn as filled points, zero weights as a faint baseline; the
    ``label_top`` largest weights are labelled with their column names.

    Parameters
    ----------
    result : SparseKMeansResult, SparseHClustResult, PermuteResult or Series
        Anything with a ``weights`` Series (or the Series itself).
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure.
    label_top : int, default 5
        How many of the largest weights to annotate.
    title : str, optional
        Default ``"Wbound is <s>"`` as sparcl.
    **kwargs
        Passed to ``Axes.scatter`` for the non-zero weights.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import pandas as pd, matplotlib.pyplot as plt
    >>> ax = plot_weights(pd.Series([0.0, 0.8, 0.6, 0.0], index=list("abcd")))
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('feature index', 'weight')
    >>> plt.close(ax.figure)
    """
    w = _weight_series(result)
    ax = _axes(ax)
    idx = np.arange(1, len(w) + 1)
    vals = w.to_numpy(dtype=float)
    nz = vals != 0
    ax.scatter(idx[~nz], vals[~nz], s=8, color="0.75", label="weight 0")
    kwargs.setdefault("s", 18)
    kwargs.setdefault("color", "C0")
    ax.scatter(idx[nz], vals[nz], label=f"non-zero ({int(nz.sum())})", **kwargs)
    order = np.argsort(-vals)[: max(int(label_top), 0)]
    for i in order:
        if vals[i] > 0:
            ax.annotate(
                str(w.index[i]),
                (idx[i], vals[i]),
                textcoords="offset points",
                xytext=(3, 3),
                fontsize=7,
            )
    ax.set_xlabel("feature index")
    ax.set_ylabel("weight")
    if title is None:
        wb = getattr(result, "wbound", None)
        if wb is None and hasattr(result, "best_wbound"):
            wb = result.best_wbound
        title = f"Wbound is {wb:.3g}" if wb is not None else "Feature weights"
    ax.set_title(title)
    ax.set_ylim(bottom=min(0.0, float(vals.min())) - 0.02)
    ax.legend(fontsize=8, loc="best")
    return ax


def plot_weights_path(path: Any, *, ncols: int = 2, **kwargs: Any) -> Any:
    """Draw one weights panel per bound of a sparse k-means path (sparcl's layout).

    Parameters
    ----------
    path : SparseKMeansPath
        The result of :func:`~sparseclust.sparse_kmeans_path`.
    ncols : int, default 2
        Panels per row.
    **kwargs
        Passed to :func:`plot_weights` for every panel.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, one panel per bound.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import sparse_kmeans_path
    >>> from sparseclust.simulate import sparse_sim
    >>> path = sparse_kmeans_path(sparse_sim(rng=1).data, 3, wbounds=[2, 4], rng=0)
    >>> fig = plot_weights_path(path)
    >>> [ax.get_title() for ax in fig.axes]
    ['Wbound is 2', 'Wbound is 4']
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    n = len(path.fits)
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(5.0 * ncols, 2.6 * nrows), layout="constrained", squeeze=False
    )
    for ax, fit in zip(axes.ravel(), path.fits, strict=False):
        plot_weights(fit, ax=ax, label_top=0, **kwargs)
        ax.get_legend().remove()
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig


def plot_gap(result: Any, ax: Any = None, **kwargs: Any) -> Any:
    """Plot the gap statistic against the L1 bound, with the number of non-zero weights.

    sparcl plots the gap against the number of non-zero weights, where bounds past
    the point at which every weight is non-zero fall on one x and their points
    overlap. Here the x axis is the bound (``wbound``, log scale, plain tick labels at
    the bounds tried) and the top axis gives the number of non-zero weights at each;
    +/- one sd bars, and the chosen bound marked (a red circle and a dashed line).

    Parameters
    ----------
    result : PermuteResult or DataFrame
        A permute result, or a table with ``wbound``, ``n_nonzero``, ``gap`` and
        ``sd_gap``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure.
    **kwargs
        Passed to ``Axes.errorbar``.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import pandas as pd, matplotlib.pyplot as plt
    >>> tab = pd.DataFrame({"wbound": [1.5, 3, 6], "n_nonzero": [2, 9, 40],
    ...                     "gap": [0.1, 0.4, 0.3], "sd_gap": [0.02, 0.03, 0.03]})
    >>> ax = plot_gap(tab)
    >>> ax.get_xscale(), ax.get_xlabel(), [t.get_text() for t in ax.get_xticklabels()]
    ('log', 'L1 bound (wbound)', ['1.5', '3', '6'])
    >>> plt.close(ax.figure)
    """
    table = getattr(result, "table", result)
    best = getattr(result, "best_index", None)
    need = [c for c in ("wbound", "n_nonzero", "gap", "sd_gap") if c not in table.columns]
    if need:
        raise ValueError(f"plot_gap needs columns {need}; got {list(table.columns)}.")
    ax = _axes(ax)
    x = table["wbound"].to_numpy(dtype=float)
    g = table["gap"].to_numpy(dtype=float)
    sd = table["sd_gap"].to_numpy(dtype=float)
    nz = table["n_nonzero"].to_numpy(dtype=int)
    kwargs.setdefault("marker", "o")
    kwargs.setdefault("capsize", 3)
    kwargs.setdefault("label", "gap +/- 1 sd")
    ax.errorbar(x, g, yerr=sd, **kwargs)
    if best is not None:
        ax.axvline(x[best], color="red", linestyle="--", linewidth=1, zorder=1)
        _circle(ax, x[best], g[best], f"chosen wbound = {x[best]:.3g} ({nz[best]} non-zero)")
    ax.set_xscale("log")
    _plain_ticks(ax.xaxis, x)
    top = ax.secondary_xaxis("top")
    _plain_ticks(top.xaxis, x, [str(v) for v in nz])
    top.set_xlabel("number of non-zero weights", fontsize=9)
    ax.set_xlabel("L1 bound (wbound)")
    ax.set_ylabel("gap statistic")
    ax.set_title("Gap statistics", fontsize=11)
    ax.legend(fontsize=9, loc="best")
    return ax


def _plain_ticks(axis: Any, at: np.ndarray, labels: list[str] | None = None) -> None:
    """Ticks at ``at`` with plain labels (``"2.5"``, not ``"2x10^0"``), at most about
    ten of them, no minor ticks."""
    from matplotlib.ticker import NullFormatter, NullLocator

    step = -(-len(at) // 10)
    idx = np.arange(0, len(at), step)
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())
    shown = labels if labels is not None else [f"{v:.3g}" for v in at]
    axis.set_ticks(at[idx], [shown[i] for i in idx])


def plot_feature_pair(result: Any, ax: Any = None, *, features: Any = None, **kwargs: Any) -> Any:
    """Scatter the rows on two features (default: the two largest weights), by cluster.

    Parameters
    ----------
    result : SparseKMeansResult
        A fit that kept its data (``keep_data=True``, the default).
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure.
    features : sequence of two str, optional
        The two columns to plot; by default the two with the largest weights.
    **kwargs
        Passed to ``Axes.scatter`` (default ``s=14``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import sparse_kmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=3, rng=0)
    >>> ax = plot_feature_pair(fit, features=["f1", "f2"])
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('f1', 'f2')
    >>> plt.close(ax.figure)
    """
    if result.table is None:
        raise ValueError("this plot needs the data: refit with keep_data=True.")
    names = list(result.table.numeric_names)
    if features is None:
        sel = list(result.selected.index[:2])
        features = sel if len(sel) == 2 else (sel + [n for n in names if n not in sel])[:2]
    if len(features) != 2:
        raise ValueError(f"features must name two columns; got {features!r}.")
    X = result.table.numeric
    j = [names.index(f) for f in features]
    lab = kept_labels(result.table, result.labels)
    ax = _axes(ax)
    kwargs.setdefault("s", 14)
    sc = ax.scatter(X[:, j[0]], X[:, j[1]], c=lab, cmap="tab10", **kwargs)
    ax.set_xlabel(str(features[0]))
    ax.set_ylabel(str(features[1]))
    ax.set_title("Clusters on the two largest-weight features")
    ax.legend(*sc.legend_elements(), title="cluster", fontsize=8)
    return ax


# --------------------------------------------------------- covariate clustering
def _path_x(result: Any) -> tuple[np.ndarray, str, bool]:
    path = result.path
    if "nu_min" in path.columns:
        lo = path["nu_min"].to_numpy(dtype=float)
        hi = path["nu_max"].to_numpy(dtype=float)
        pos = np.concatenate([lo[lo > 0], hi[hi > 0]])
        floor = pos.min() / 2 if pos.size else 1.0
        x = np.sqrt(np.maximum(lo, floor) * np.maximum(hi, floor))
        return x, "nu (middle of the range giving each clustering)", True
    col = path.columns[0]
    return path[col].to_numpy(dtype=float), col, col == "gamma"


def plot_covariate_path(result: Any, *, figsize: tuple[float, float] = (7.0, 5.5)) -> Any:
    """Plot the number of clusters and the log marginal likelihood along the path.

    Two panels share the x axis (nu): the number of clusters of covariates (top) and
    the log marginal likelihood (bottom), the selected clustering circled. The bottom
    panel marks the runner-up, states the margin between them (in nats, "weak" under
    1 nat) and spans at least :data:`ML_MIN_SPAN` nats, so that a margin of a
    thousandth of a nat does not look like a peak.

    Parameters
    ----------
    result : CovariateClusteringResult
        A fit of :func:`~sparseclust.covariate_clustering`.
    figsize : tuple of float, default (7.0, 5.5)
        Figure size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        The figure with its two panels.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import covariate_clustering
    >>> from sparseclust.simulate import covariate_sim
    >>> sim = covariate_sim(40, m=4, rng=0)
    >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)
    >>> fig = plot_covariate_path(fit)
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['number of clusters', 'log marginal likelihood']
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    x, label, logx = _path_x(result)
    path = result.path
    sel = int(np.flatnonzero(path["selected"].to_numpy())[0])
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=figsize, layout="constrained")
    order = np.argsort(x)
    for ax, col, ylab in (
        (a1, "n_clusters", "number of clusters"),
        (a2, "log_ml", "log marginal likelihood"),
    ):
        y = path[col].to_numpy(dtype=float)
        ax.plot(x[order], y[order], marker="o", markersize=3)
        _circle(ax, x[sel], y[sel], f"selected ({int(path['n_clusters'].iloc[sel])} clusters)")
        ax.set_ylabel(ylab)
    _margin(a2, x, path["log_ml"].to_numpy(dtype=float), sel, float(result.margin))
    if logx:
        a2.set_xscale("log")
    a1.legend(fontsize=9)
    a2.legend(fontsize=9, loc="lower right")
    a2.set_xlabel(label)
    a1.set_title(f"Clustering path ({len(path)} distinct clusterings)")
    return fig


#: The log marginal likelihood panel spans at least this many nats: a difference of
#: under 1 nat (2 log Bayes factor < 2) is "not worth more than a bare mention"
#: (Kass & Raftery 1995), and must not fill the axis.
ML_MIN_SPAN = 4.0


def _margin(ax: Any, x: np.ndarray, y: np.ndarray, sel: int, margin: float) -> None:
    """Mark the runner-up clustering and the margin, on an axis of at least
    :data:`ML_MIN_SPAN` nats."""
    others = np.flatnonzero(np.arange(len(y)) != sel)
    if others.size:
        run = int(others[np.argmax(y[others])])
        ax.plot(
            x[run],
            y[run],
            "s",
            markerfacecolor="none",
            markeredgecolor="0.3",
            markersize=10,
            label="runner-up",
        )
        for v in (y[sel], y[run]):
            ax.axhline(v, color="0.5", linestyle=":", linewidth=1)
        weak = " (weak: under 1 nat)" if margin < 1.0 else ""
        ax.set_title(f"margin over the runner-up: {margin:.3g} nats{weak}", fontsize=9)
    lo, hi = float(np.nanmin(y)), float(np.nanmax(y))
    if hi - lo < ML_MIN_SPAN:  # the best near the top of an axis of ML_MIN_SPAN nats
        lo, hi = hi - 0.85 * ML_MIN_SPAN, hi + 0.15 * ML_MIN_SPAN
    pad = 0.05 * (hi - lo)
    ax.set_ylim(lo - pad, hi + pad)


def plot_covariate_hierarchy(result: Any, ax: Any = None, *, max_levels: int = 40) -> Any:
    """Draw the nested clusterings of the path, coloured by each cluster's class.

    One row per distinct clustering (coarsest at the top), each cluster a bar over its
    covariates, coloured by its associated class. Covariates are ordered so that every
    cluster is contiguous when the clusterings are nested.

    Parameters
    ----------
    result : CovariateClusteringResult
        A fit of :func:`~sparseclust.covariate_clustering`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure sized to the path.
    max_levels : int, default 40
        Show at most this many clusterings (the selected one always, the others evenly
        subsampled).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import covariate_clustering
    >>> from sparseclust.simulate import covariate_sim
    >>> sim = covariate_sim(40, m=4, rng=0)
    >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)
    >>> ax = plot_covariate_hierarchy(fit, max_levels=10)
    >>> plt.close(ax.figure)
    """
    from matplotlib.patches import Patch

    labels = [np.asarray(lab) for lab in result.labels_path]
    classes = [np.asarray(c) for c in result.class_path]
    if len(labels) > max_levels:  # keep the selected level and an even subsample
        keep = set(np.linspace(0, len(labels) - 1, max_levels).round().astype(int).tolist())
        keep.add(result.selected_index)
        idx = sorted(keep)
    else:
        idx = list(range(len(labels)))
    order = np.lexsort([labels[i] for i in reversed(idx)])
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size)
    ax = _axes(ax, figsize=(max(6.0, 0.12 * order.size + 2), 0.3 * len(idx) + 2))
    colours = [f"C{k}" for k in range(len(result.classes))]
    for row, i in enumerate(idx):
        lab, cls = labels[i], classes[i]
        for k in range(int(lab.max()) + 1):
            p = pos[lab == k]
            ax.barh(
                row,
                p.max() - p.min() + 0.9,
                left=p.min() - 0.45,
                height=0.8,
                color=colours[int(cls[k]) % len(colours)],
                edgecolor="white",
                linewidth=0.5,
            )
        if i == result.selected_index:
            ax.annotate("selected", (order.size - 0.3, row), va="center", fontsize=8, color="red")
    ax.set_yticks(range(len(idx)))
    ax.set_yticklabels([str(int(labels[i].max()) + 1) for i in idx], fontsize=7)
    ax.set_ylabel("clusters at this level (path order)")
    ax.invert_yaxis()
    names = list(result.clusters.index)
    if len(names) <= 60:
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([names[j] for j in order], rotation=90, fontsize=7)
    ax.set_xlabel("covariates")
    ax.legend(
        handles=[Patch(color=colours[j], label=str(c)) for j, c in enumerate(result.classes)],
        title="associated class",
        fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )
    ax.set_title("Clustering hierarchy along the path")
    return ax
