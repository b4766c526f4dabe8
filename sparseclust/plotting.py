"""Plots of sparseclust results. pyplot is imported inside each function.

Every function takes ``ax=None`` (a new figure is created, never ``plt.gca()``),
returns the Axes it drew on, forwards ``**kwargs`` to the main matplotlib call and
never calls ``plt.show()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["plot_calibration", "plot_clusters", "plot_objective", "plot_profiles"]


def _axes(ax: Any, figsize: tuple[float, float] = (6.0, 4.5)) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


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
    black crosses. ``kwargs`` go to ``Axes.scatter``.
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
    """Objective value at the start (0) and after every pass; ``kwargs`` go to ``Axes.plot``."""
    ax = _axes(ax)
    path = np.asarray(result.objective_path)
    kwargs.setdefault("marker", "o")
    ax.plot(np.arange(path.size), path, **kwargs)
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective")
    ax.set_title(f"{result.method_name}: objective by iteration")
    return ax


def plot_calibration(result: Any, ax: Any = None, **kwargs: Any) -> Any:
    """Number of clusters against lambda for every fit tried while calibrating to ``k``."""
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
    """Heatmap of the cluster profiles: numeric means as z-scores of the overall mean
    and sd; categorical variables by the share of their most frequent level.
    ``kwargs`` go to ``Axes.imshow``."""
    prof = result.profiles()
    rows, labels = [], []
    clusters = [c for c in prof.columns if c != "overall"]
    for var in dict.fromkeys(prof.index.get_level_values(0)):
        block = prof.loc[var]
        if "mean" in block.index and "sd" in block.index and len(block) == 2:
            sd = block.loc["sd", "overall"]
            z = (block.loc["mean", clusters] - block.loc["mean", "overall"]) / (sd if sd > 0 else 1)
            rows.append(z.to_numpy(dtype=float))
            labels.append(f"{var} (z)")
        else:
            top = block["overall"].astype(float).idxmax()
            rows.append(block.loc[top, clusters].to_numpy(dtype=float))
            labels.append(f"{var}={top} (share)")
    M = np.vstack(rows)[:max_variables]
    labels = labels[:max_variables]
    ax = _axes(ax, figsize=(1.2 + 0.6 * len(clusters), 1.0 + 0.28 * len(labels)))
    kwargs.setdefault("cmap", "RdBu_r")
    kwargs.setdefault("aspect", "auto")
    lim = np.nanmax(np.abs(M)) if np.isfinite(M).any() else 1.0
    kwargs.setdefault("vmin", -lim)
    kwargs.setdefault("vmax", lim)
    im = ax.imshow(M, **kwargs)
    ax.set_xticks(range(len(clusters)), [str(c) for c in clusters])
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlabel("cluster")
    ax.set_title(f"{result.method_name}: cluster profiles")
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return ax
