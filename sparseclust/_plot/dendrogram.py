"""Dendrograms of sparse hierarchical clustering (sparcl's ``ColorDendrogram`` and plots).

The tree is laid out by scipy's ``dendrogram(no_plot=True)`` (leaves at ``x = 5, 15,
25, ...`` in the tree's leaf order, which for a :class:`SparseHClustResult` is R's
``hc$order``) and drawn with matplotlib collections: one ``LineCollection`` for the
tree (``gid="dendrogram"``) and, in :func:`color_dendrogram`, one for the coloured
segments under the leaves (``gid="leaf_colours"``, one segment per leaf). pyplot is
imported inside the functions only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._data.params import Number, rules

__all__ = ["color_dendrogram", "plot_dendrogram", "plot_hclust", "plot_weights_index"]

#: Leaves are labelled by default up to this many observations.
MAX_AUTO_LABELS = 50


def _axes(ax: Any, figsize: tuple[float, float] = (8.0, 4.5)) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _tree(obj: Any) -> tuple[np.ndarray, pd.Index | None]:
    """``(linkage, observation names or None)`` from a result or a linkage matrix."""
    if hasattr(obj, "linkage") and hasattr(obj, "obs_names"):
        return np.asarray(obj.linkage, dtype=np.float64), obj.obs_names
    Z = np.asarray(obj)
    if Z.ndim != 2 or Z.shape[1] != 4 or Z.dtype.kind not in "iuf":
        raise TypeError(
            f"result_or_linkage must be a SparseHClustResult or a scipy linkage matrix "
            f"(n-1 x 4); got {type(obj).__name__} of shape {np.shape(obj)}."
        )
    return Z.astype(np.float64), None


def _layout(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(icoord, dcoord, leaves)`` from scipy (negative heights are shifted for scipy and back)."""
    from scipy.cluster.hierarchy import dendrogram

    shift = min(0.0, float(Z[:, 2].min())) if len(Z) else 0.0
    Zs = Z.copy()
    Zs[:, 2] -= shift
    d = dendrogram(Zs, no_plot=True, count_sort=False, distance_sort=False)
    dcoord = np.asarray(d["dcoord"], dtype=np.float64) + shift  # leaves at min(0, lowest merge)
    return np.asarray(d["icoord"], dtype=np.float64), dcoord, np.asarray(d["leaves"])


def _leaf_labels(labels: Any, names: pd.Index | None, n: int) -> list[str] | None:
    if labels is False:
        return None
    if labels is None:
        if n > MAX_AUTO_LABELS:
            return None
        return [str(v) for v in (names if names is not None else range(n))]
    lab = list(labels)
    if len(lab) != n:
        raise ValueError(
            f"labels must have one entry per observation ({n}); got {len(lab)}. Pass "
            f"labels=False for none."
        )
    return [str(v) for v in lab]


def _leaf_heights(Z: np.ndarray) -> np.ndarray:
    """The height of the merge that takes in each observation (by observation)."""
    n = Z.shape[0] + 1
    h = np.zeros(n)
    for a, b, height in zip(Z[:, 0].astype(int), Z[:, 1].astype(int), Z[:, 2], strict=True):
        for c in (a, b):
            if c < n:
                h[c] = height
    return h


def _span(Z: np.ndarray) -> float:
    """The range of the heights (from 0 or the lowest merge), R's unit for ``hang``."""
    return float(Z[:, 2].max() - min(0.0, float(Z[:, 2].min()))) or 1.0 if len(Z) else 1.0


def _hang(ic: np.ndarray, dc: np.ndarray, leaves: np.ndarray, Z: np.ndarray, length: float):
    """Shorten each leaf's leg to ``length`` below its merge (R's ``plot(hc, hang=)``)."""
    base = dc.min() if dc.size else 0.0
    x_leaf = {5.0 + 10.0 * pos: leaf for pos, leaf in enumerate(leaves.tolist())}
    h = _leaf_heights(Z)
    for r in range(ic.shape[0]):
        for bottom, top in ((0, 1), (3, 2)):
            leaf = x_leaf.get(float(ic[r, bottom]))
            if leaf is not None and dc[r, bottom] == base and dc[r, top] == h[leaf]:
                dc[r, bottom] = h[leaf] - length


def _draw_tree(
    ax: Any,
    Z: np.ndarray,
    *,
    color: str = "black",
    linewidth: float = 0.8,
    hang: float | None = None,
) -> Any:
    """Draw the tree; ``hang`` (a fraction of the heights' range, as R's) hangs each leaf
    that far below its merge, else the leaves sit on the lowest merge's level."""
    from matplotlib.collections import LineCollection

    ic, dc, leaves = _layout(Z)
    if hang is not None and len(Z):
        _hang(ic, dc, leaves, Z, hang * _span(Z))
    segs = np.stack([ic, dc], axis=-1) if len(ic) else np.zeros((0, 4, 2))
    lc = LineCollection(list(segs), colors=color, linewidths=linewidth)
    lc.set_gid("dendrogram")
    ax.add_collection(lc)
    n = len(leaves)
    top = float(dc.max()) if dc.size else 1.0
    bottom = float(min(0.0, dc.min())) if dc.size else 0.0
    ax.set_xlim(0, 10 * n)
    ax.set_ylim(bottom, top + 0.05 * (top - bottom or 1.0))
    ax.set_ylabel("Height")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return leaves, bottom, top


def _set_leaf_ticks(ax: Any, leaves: np.ndarray, names: list[str] | None) -> None:
    n = len(leaves)
    if names is None:
        ax.set_xticks([])
        return
    ax.set_xticks(5 + 10 * np.arange(n))
    ax.set_xticklabels([names[i] for i in leaves], rotation=90, fontsize=7)
    ax.tick_params(axis="x", length=0)


def _colours(values: pd.Series, palette: Any) -> tuple[list, dict]:
    """Colour per observation and the legend mapping ``{value: colour}``."""
    import matplotlib as mpl

    cats = pd.unique(values.dropna())
    try:
        cats = np.sort(cats)
    except TypeError:
        pass
    if isinstance(palette, dict):
        missing = [c for c in cats if c not in palette]
        if missing:
            raise ValueError(f"palette has no colour for the values {missing}; add them.")
        mapping = {c: palette[c] for c in cats}
    else:
        if palette is None:
            cmap = mpl.colormaps["tab10" if len(cats) <= 10 else "tab20"]
            cols = [cmap(i % cmap.N) for i in range(len(cats))]
        elif isinstance(palette, str):
            cmap = mpl.colormaps[palette]
            pos = np.linspace(0, 1, max(len(cats), 2))
            cols = [cmap(i) for i in pos[: len(cats)]]
        else:
            cols = list(palette)
            if len(cols) < len(cats):
                raise ValueError(
                    f"palette has {len(cols)} colours for {len(cats)} distinct values of y; "
                    f"pass at least {len(cats)} (or a colormap name)."
                )
        mapping = {c: cols[i] for i, c in enumerate(cats)}
    per_obs = [mapping[v] if not pd.isna(v) else (0.6, 0.6, 0.6, 1.0) for v in values]
    return per_obs, mapping


def _y_series(y: Any, names: pd.Index | None, n: int, kept: np.ndarray | None) -> pd.Series:
    """``y`` as a Series in the tree's observation order (data order of the kept rows).

    ``kept``: one entry per row of the data, True on the rows in the tree (None for a
    bare linkage). A Series is aligned on its index only when both it and the tree's
    row names are unique; otherwise ``y`` is read in data order (all rows or the
    kept ones), by position: row names may repeat.
    """
    if isinstance(y, pd.Series) and names is not None and y.index.is_unique and names.is_unique:
        if names.isin(y.index).all():
            return y.reindex(names).reset_index(drop=True)
    arr = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y)
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D (one value per observation); got shape {arr.shape}.")
    name = y.name if isinstance(y, pd.Series) else None
    if len(arr) == n:
        return pd.Series(arr, name=name)
    if kept is not None and len(arr) == len(kept):
        return pd.Series(arr[kept], name=name)
    raise ValueError(
        f"y must have one value per observation in the tree ({n}); got {len(arr)}. Pass a "
        f"Series on the data's index or an array in data order."
    )


@rules(
    branchlength=Number(min=0, min_inclusive=False, none=True),
    hang=Number(min=0, none=True),
    linewidth=Number(min=0),
)
def color_dendrogram(
    result_or_linkage: Any,
    y: Any,
    *,
    ax: Any = None,
    main: str | None = None,
    branchlength: float | None = None,
    hang: float | None = 0.2,
    labels: Any = None,
    xlab: str = "",
    ylab: str = "Height",
    palette: Any = None,
    title: str = "",
    linewidth: float = 0.8,
) -> Any:
    """Draw a dendrogram with each leaf's branch coloured by its class (sparcl's ``ColorDendrogram``).

    R -> Python: ``ColorDendrogram(hc, y, main = "My data", branchlength = 3)`` is
    ``color_dendrogram(fit, y, main="My data", branchlength=3)`` (``fit`` a
    :func:`~sparseclust.sparse_hclust` result or any scipy linkage). As sparcl's, the
    leaves hang below their merge (``hang=0.2`` of the heights' range, R's
    ``plot(hc, hang = .2)``) and a segment of ``branchlength`` height units from the
    merge down each leaf's branch takes the colour of the leaf's ``y``.

    Parameters
    ----------
    result_or_linkage : SparseHClustResult or ndarray
        A fit of :func:`~sparseclust.sparse_hclust`, or any scipy linkage matrix.
    y : array-like or Series
        One value per observation (numbers or strings), in data order (every row
        of the data, or the rows in the tree); a Series on the data's index is
        aligned by index (by position when the index repeats labels). Each distinct
        value gets a colour.
    ax : Axes, optional
        Drawn on a new figure when None.
    main : str, optional
        Title (sparcl's ``main``; ``title=`` is the same).
    branchlength : float, optional
        Length of the coloured segments, in height units (sparcl's ``branchlength``,
        default ``.7`` there, in the units of its tree), > 0. Default: the whole
        hanging branch (without ``hang``: 10% of the tree's height, below the leaves).
    hang : float or None, default 0.2
        How far each leaf hangs below its merge, as a fraction of the range of the
        heights (R's ``hang``, 0.2 in sparcl). None: every leaf reaches the base line
        and the coloured segments are bars under the leaves.
    labels : list, False or None
        Leaf labels in data order; ``None`` labels by row name up to 50 leaves,
        ``False`` never.
    palette : None, colormap name, list of colours or dict value -> colour
        Default ``tab10`` (``tab20`` beyond 10 values).
    xlab, ylab : str
        Axis labels (sparcl's ``xlab``, ``ylab``). Anything else (R's ``sub``,
        ``cex.main``) is set on the returned Axes, e.g. ``ax.set_title("My data",
        fontsize=14)`` or ``ax.figure.suptitle(...)``.
    title : str, default ""
        As ``main``.
    linewidth : float, default 0.8
        Width of the tree's lines (>= 0).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on; the legend maps colours to the values of ``y``.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt
    >>> from scipy.cluster.hierarchy import linkage
    >>> X = np.array([[0.0], [0.2], [5.0], [5.3]])
    >>> ax = color_dendrogram(linkage(X, "average"), ["a", "a", "b", "b"])
    >>> [len(c.get_segments()) for c in ax.collections if c.get_gid() == "leaf_colours"]
    [4]
    >>> plt.close(ax.figure)
    """
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Patch

    Z, names = _tree(result_or_linkage)
    n = Z.shape[0] + 1
    row_labels = getattr(result_or_linkage, "labels", None)  # <NA> on rows not in the tree
    kept = None if row_labels is None else row_labels.notna().to_numpy()
    if main is not None and title:
        raise ValueError("pass the title once: main= (sparcl's name) or title=, not both.")
    ys = _y_series(y, names, n, kept)
    ax = _axes(ax)
    leaves, bottom, top = _draw_tree(ax, Z, linewidth=linewidth, hang=hang)
    if hang is None:  # bars under the leaves
        start = np.full(n, bottom)
        branchlength = 0.1 * (top - bottom or 1.0) if branchlength is None else branchlength
    else:  # sparcl's: down each leaf's branch from its merge
        start = _leaf_heights(Z)[leaves] if len(Z) else np.zeros(n)
        branchlength = (hang * _span(Z) or 1.0) if branchlength is None else branchlength
    colours, mapping = _colours(ys, palette)
    x = 5 + 10 * np.arange(n)
    segs = [[(x[pos], start[pos]), (x[pos], start[pos] - branchlength)] for pos in range(n)]
    leaf_cols = [colours[leaf] for leaf in leaves]
    lc = LineCollection(segs, colors=leaf_cols, linewidths=max(1.0, min(3.0, 200.0 / n)))
    lc.set_gid("leaf_colours")
    ax.add_collection(lc)
    low = min(float(start.min() - branchlength), bottom)
    ax.set_ylim(low - 0.03 * (top - low), ax.get_ylim()[1])
    _set_leaf_ticks(ax, leaves, _leaf_labels(labels, names, n))
    handles = [Patch(color=c, label=str(v)) for v, c in mapping.items()]
    name = ys.name if ys.name is not None else "y"
    ax.legend(
        handles=handles,
        title=str(name),
        fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        frameon=False,
    )
    ax.set_title(main if main is not None else title)
    ax.set_xlabel(xlab)
    ax.set_ylabel(ylab)
    return ax


def plot_dendrogram(
    result: Any,
    y: Any = None,
    ax: Any = None,
    *,
    labels: Any = False,
    title: str = "Sparse Clustering",
    **kwargs: Any,
) -> Any:
    """Draw the tree of a fit, its leaves coloured by ``y`` when given.

    Without ``y`` it is sparcl's left panel: no leaf labels, title "Sparse
    Clustering"; with ``y`` it is :func:`color_dendrogram`.

    Parameters
    ----------
    result : SparseHClustResult or ndarray
        A fit of :func:`~sparseclust.sparse_hclust`, or any scipy linkage matrix.
    y : array-like or Series, optional
        One class per observation, as in :func:`color_dendrogram`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure.
    labels : list, False or None, default False
        Leaf labels in data order; ``None`` labels by row name up to 50 leaves,
        ``False`` never.
    title : str, default "Sparse Clustering"
        Title of the axes.
    **kwargs
        Passed to :func:`color_dendrogram` with ``y``, else to the tree's lines
        (``linewidth``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import sparse_hclust
    >>> from sparseclust.simulate import sparse_sim
    >>> sim = sparse_sim(rng=1)
    >>> ax = plot_dendrogram(sparse_hclust(sim.data, wbound=5, k=3))
    >>> ax.get_title()
    'Sparse Clustering'
    >>> plt.close(ax.figure)
    """
    if y is not None:
        return color_dendrogram(result, y, ax=ax, labels=labels, title=title, **kwargs)
    Z, names = _tree(result)
    ax = _axes(ax)
    leaves, _, _ = _draw_tree(ax, Z, **kwargs)
    _set_leaf_ticks(ax, leaves, _leaf_labels(labels, names, Z.shape[0] + 1))
    ax.set_title(title)
    return ax


def plot_weights_index(
    result: Any, ax: Any = None, *, title: str | None = None, **kwargs: Any
) -> Any:
    """Weights against feature index (1-based, as sparcl): sparcl's right panel.

    Non-zero weights are filled points, zero weights small grey ones. Returns the Axes.
    """
    w = result.weights if hasattr(result, "weights") else pd.Series(result)
    vals = w.to_numpy(dtype=float)
    idx = np.arange(1, vals.size + 1)
    ax = _axes(ax, figsize=(6.0, 4.0))
    nz = vals != 0
    ax.scatter(idx[~nz], vals[~nz], s=6, color="0.7", label="weight 0", zorder=2)
    kwargs.setdefault("s", 16)
    kwargs.setdefault("color", "C0")
    ax.scatter(idx[nz], vals[nz], label=f"non-zero ({int(nz.sum())})", zorder=3, **kwargs)
    ax.set_xlabel("Feature Index")
    ax.set_ylabel("Wj")
    if title is None:
        wb = getattr(result, "wbound", None)
        title = f"Weights (wbound {wb:.3g})" if wb is not None else "Weights"
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False)
    return ax


def plot_hclust(result: Any, y: Any = None, *, figsize: tuple[float, float] = (11.0, 4.5)) -> Any:
    """Draw sparcl's ``plot`` of a hierarchical fit: the tree and the weights.

    The dendrogram is on the left, the weights against feature index on the right.

    Parameters
    ----------
    result : SparseHClustResult
        A fit of :func:`~sparseclust.sparse_hclust`.
    y : array-like or Series, optional
        One class per observation: the leaves are coloured by it
        (:func:`color_dendrogram`).
    figsize : tuple of float, default (11.0, 4.5)
        Figure size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        The figure with its two panels.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sparseclust import sparse_hclust
    >>> from sparseclust.simulate import sparse_sim
    >>> sim = sparse_sim(rng=1)
    >>> fig = plot_hclust(sparse_hclust(sim.data, wbound=5, k=3), y=sim.labels)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(
        1, 2, figsize=figsize, layout="constrained", width_ratios=[3, 2]
    )
    plot_dendrogram(result, y=y, ax=left)
    plot_weights_index(result, ax=right)
    return fig
