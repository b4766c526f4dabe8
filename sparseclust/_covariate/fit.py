"""The steps of :func:`~sparseclust.covariate_clustering`, in the order the front runs them.

:func:`prepare` (the table: covariates, class codes) -> :func:`similarity_matrix`
(``S``) -> :func:`choose_sigma` (the prior sd of the refit) -> :func:`fusion_path`
(the ADMM clustering path of :mod:`.core`) or :func:`baseline_path` (convex
clustering / k-means of :mod:`.select`) -> :func:`select_clustering` (score every
distinct clustering, pick one) -> :func:`refit` (the classifier on the selected
clustering). Each step returns a frozen record.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._data.params import user_stacklevel
from .._data.stages import repair_sd, warn_spread
from .._data.table import VariableSpec, build_table
from .._engine.parallel import run_parallel
from ..exceptions import CalibrationWarning, ConvergenceWarning
from . import core as core
from . import select as sel

__all__ = [
    "Clusterings",
    "Prepared",
    "Refit",
    "Selection",
    "SigmaChoice",
    "baseline_path",
    "choose_sigma",
    "fusion_path",
    "prepare",
    "refit",
    "select_clustering",
    "selected_nu",
    "similarity_matrix",
]


# ------------------------------------------------------------------------ the table
@dataclass(frozen=True, eq=False)
class Prepared:
    """The classification problem as arrays (from :func:`prepare`).

    Attributes
    ----------
    X : (n, d) float ndarray
        The numeric covariates (standardised when ``center`` is set).
    y : (n,) int64 ndarray
        Class codes ``0 .. c - 1`` (classes sorted).
    classes : Index
        The class labels, named after the response.
    names : list of str
        Covariate names, in column order of ``X``.
    spec : VariableSpec
        The table's variable spec (to transform new data alike).
    center, sd : (d,) ndarray or None
        The means and standard deviations ``X`` was standardised with (``scale=True``).
    """

    X: np.ndarray
    y: np.ndarray
    classes: pd.Index
    names: list[str]
    spec: VariableSpec
    center: np.ndarray | None = None
    sd: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        """Number of classes ``c``."""
        return len(self.classes)


def prepare(
    x: Any, *, data: Any, y: Any, numeric: Any, missing: str, scale: bool = False
) -> Prepared:
    """Build the table (numeric covariates and a response) and code the classes;
    ``scale`` standardises the covariates (mean 0, sd 1 with ddof=1), as the paper.

    Raises a ``ValueError`` without a response, with fewer than 2 classes or fewer
    than 2 covariates, or for covariates too large for the solver
    (:func:`.core.check_magnitude`: above ``sqrt(3.4e38 / (16 n))``, 9.4e17 for 24 rows).
    """
    table = build_table(
        x,
        data=data,
        y=y,
        response=True,
        numeric=numeric,
        missing=missing,
        allow_categorical=False,
        min_rows=4,
        constant="drop",
    )
    if table.response is None:
        raise ValueError(
            "covariate_clustering needs the classes: a formula 'label ~ .' with data=, or y=."
        )
    X = table.numeric
    codes, classes = pd.factorize(table.response, sort=True)
    classes = pd.Index(classes, name=table.response.name)
    c = len(classes)
    if c < 2:
        raise ValueError(f"the response has {c} class; covariate clustering needs at least 2.")
    d = X.shape[1]
    if d < 2:
        raise ValueError(f"there is {d} covariate; clustering covariates needs at least 2.")
    if not scale:  # standardised covariates are within the solver's range
        core.check_magnitude(X, table.numeric_names)
    warn_spread(X, table.numeric_names, scale=scale)
    center = sd = None
    if scale:
        center = X.mean(axis=0)
        sd = repair_sd(X, center, X.std(axis=0, ddof=1))
        X = (X - center) / np.where(sd > 0, sd, 1.0)
    return Prepared(
        X=X,
        y=np.asarray(codes, dtype=np.int64),
        classes=classes,
        names=table.numeric_names,
        spec=table.spec,
        center=center,
        sd=None if sd is None else np.where(sd > 0, sd, 1.0),
    )


# ------------------------------------------------------------------------ similarity
def similarity_matrix(similarity: Any, prep: Prepared, knn: int | None) -> tuple[Any, str]:
    """``S`` (d x d, dense or scipy sparse) and its source (``"ledoit_wolf"``,
    ``"embedding"`` or ``"given"``); ``knn`` (already checked) sparsifies it."""
    X, y, names = prep.X, prep.y, prep.names
    if similarity is None or (isinstance(similarity, str) and similarity == "ledoit_wolf"):
        S = core.ledoit_wolf_similarity(X, y)
        source = "ledoit_wolf"
    elif isinstance(similarity, str):
        raise ValueError(
            f"similarity must be 'ledoit_wolf', a (d x d) matrix (array, DataFrame or scipy "
            f"sparse) or ('embedding', W); got similarity={similarity!r}."
        )
    elif isinstance(similarity, tuple) and len(similarity) == 2 and similarity[0] == "embedding":
        return _embedding_similarity(similarity[1], names, knn), "embedding"
    else:
        S = _given_similarity(similarity, names)
        source = "given"
    if knn is not None:
        S = core.knn_sparsify(S, knn)
    return S, source


def _embedding_similarity(W: Any, names: list[str], knn: int | None) -> Any:
    """The k-NN Gaussian-kernel similarity of covariate embeddings ``W`` (d x m)."""
    if isinstance(W, pd.DataFrame):
        missing = [n for n in names if n not in W.index]
        if missing:
            raise ValueError(f"the embedding has no rows for covariates {missing[:5]}.")
        W = W.loc[names].to_numpy(dtype=float)
    return core.embedding_similarity(np.asarray(W, dtype=float), 10 if knn is None else knn)


def _given_similarity(S: Any, names: list[str]) -> Any:
    """A given ``S``: a DataFrame aligned on the covariate names; the shape checked."""
    if isinstance(S, pd.DataFrame):
        if list(map(str, S.index)) != names or list(map(str, S.columns)) != names:
            try:
                S = S.loc[names, names]
            except KeyError:
                raise ValueError(
                    "similarity's index and columns must be the covariate names "
                    f"{names[:5]}{'...' if len(names) > 5 else ''}."
                ) from None
        S = S.to_numpy(dtype=float)
    shape = S.shape
    if shape != (len(names), len(names)):
        raise ValueError(
            f"similarity must be {len(names)} x {len(names)} (one row and column per "
            f"covariate); got shape {shape}."
        )
    return S


# ------------------------------------------------------------------------ sigma
@dataclass(frozen=True, eq=False)
class SigmaChoice:
    """The prior sd of the refitted coefficients (from :func:`choose_sigma`).

    Attributes
    ----------
    sigma : float
        The sigma used (given, or chosen by CV under the requested rule).
    values : dict
        Rule name -> sigma: ``{"accuracy": ..., "loglik": ...}`` when chosen by CV,
        ``{"given": sigma}`` otherwise.
    table : DataFrame or None
        CV accuracy and log-likelihood over the sigma grid (None when given).
    on_edge : bool
        Whether the chosen sigma is the smallest or largest grid value.
    source : str
        ``"given"`` or ``"CV, rule '<rule>'"``.
    """

    sigma: float
    values: dict[str, float]
    table: pd.DataFrame | None
    on_edge: bool
    source: str


def choose_sigma(
    prep: Prepared,
    sigma: float | None,
    sigma_rule: str,
    n_folds: int,
    generator: np.random.Generator,
) -> SigmaChoice:
    """The given sigma, or CV on the full model under both rules (two draws from
    ``generator``), with a ``CalibrationWarning`` when the choice is on the grid's edge."""
    if sigma is not None:
        return SigmaChoice(
            sigma=sigma, values={"given": sigma}, table=None, on_edge=False, source="given"
        )
    X, y_codes, c = prep.X, prep.y, prep.n_classes
    s_acc, sigma_table, edge_acc = sel.choose_sigma(
        X,
        y_codes,
        c,
        rule="accuracy",
        n_folds=n_folds,
        rng=np.random.default_rng(int(generator.integers(2**63 - 1))),
    )
    s_ll = sel.choose_sigma(
        X,
        y_codes,
        c,
        rule="loglik",
        n_folds=n_folds,
        rng=np.random.default_rng(int(generator.integers(2**63 - 1))),
    )[0]
    sigma_values = {"accuracy": s_acc, "loglik": s_ll}
    sigma_used = sigma_values[sigma_rule]
    grid = sigma_table.index.to_numpy(dtype=float) if sigma_table is not None else []
    on_edge = len(grid) > 0 and sigma_used in (float(np.min(grid)), float(np.max(grid)))
    if on_edge:
        warnings.warn(
            f"sigma={sigma_used:g} chosen by rule '{sigma_rule}' is on the edge of the CV "
            "grid; the selected clustering depends on it (see .summary().tables['sigma_rules']), "
            "or pass sigma=.",
            CalibrationWarning,
            stacklevel=user_stacklevel(),
        )
    return SigmaChoice(
        sigma=sigma_used,
        values=sigma_values,
        table=sigma_table,
        on_edge=on_edge,
        source=f"CV, rule '{sigma_rule}'",
    )


# ------------------------------------------------------------------------ the path
@dataclass(frozen=True, eq=False)
class Clusterings:
    """The distinct clusterings of a path (from :func:`fusion_path` / :func:`baseline_path`).

    Attributes
    ----------
    labels : list of (d,) int ndarray
        Canonical covariate cluster codes, one array per distinct clustering.
    tune : DataFrame
        The tuning range of each: ``nu_min``, ``nu_max`` (convex fusion), ``gamma`` or
        ``k`` (baselines).
    converged : list of bool
        Whether every tuning value producing it converged.
    """

    labels: list[np.ndarray]
    tune: pd.DataFrame
    converged: list[bool]


def fusion_path(
    prep: Prepared,
    S: Any,
    nu: Any,
    *,
    lam: float,
    tol: float,
    max_iter: int,
    rho: float,
    progress: bool | None,
) -> Clusterings:
    """The convex fusion path (ADMM over the ``nu`` grid, :func:`.core.clustering_path`),
    each distinct clustering once; a ``ConvergenceWarning`` when some ``nu`` hit
    ``max_iter``."""
    n, d = prep.X.shape
    edges, weights = core.edges_from_similarity(S)
    records = core.clustering_path(
        prep.X,
        prep.y,
        prep.n_classes,
        edges,
        weights,
        nu,
        lam=lam,
        tol=tol,
        max_iter=max_iter,
        rho=rho,
        progress=bool(progress),
    )
    distinct = core.distinct_clusterings(records)
    tune = pd.DataFrame(
        {
            "nu_min": [dc.nu_min for dc in distinct],
            "nu_max": [dc.nu_max for dc in distinct],
        }
    )
    n_grid = core.default_nus().size if nu is None else np.unique(np.asarray(nu, float)).size
    _warn_unconverged(records, max_iter, prep, n_grid)
    return Clusterings(
        labels=[dc.labels for dc in distinct],
        tune=tune,
        converged=[dc.n_unconverged == 0 for dc in distinct],
    )


def _scale_hint(prep: Prepared) -> str:
    """A hint naming the covariate of largest scale when the covariates' scales (sd)
    differ by more than 1e6, else ``""``."""
    with np.errstate(all="ignore"):
        sd = prep.X.std(axis=0)
    pos = sd[sd > 0]
    if pos.size == 0 or not np.isfinite(pos).all() or pos.max() <= 1e6 * pos.min():
        return ""
    j = int(np.argmax(sd))
    return (
        f" The covariates' scales differ widely (sd of {prep.names[j]!r}: {sd[j]:.3g}, "
        f"smallest sd {pos.min():.3g}): standardise them, e.g. (df - df.mean()) / df.std()."
    )


def _warn_unconverged(records: list, max_iter: int, prep: Prepared, n_grid: int) -> None:
    """One ``ConvergenceWarning`` for the ``nu`` of the path that did not converge:
    those where the ADMM hit ``max_iter``, those where an inner solver (a B-step's
    quasi-Newton, the closed form's fit) stalled (stopped short of its target at its
    iteration cap or numerical floor), and the ``nu`` not solved when the path stopped
    after ``core.PATH_STALL_MAX`` stalled ``nu`` in a row."""
    inner = sum(bool(r.inner_stalled) for r in records)
    outer = sum(not r.converged and not r.inner_stalled for r in records)
    if not inner and not outer:
        return
    parts = []
    if outer:
        parts.append(f"the ADMM hit max_iter={max_iter} at {outer} of {n_grid} values of nu")
    if inner:
        parts.append(
            "an inner solver (the ADMM's B-step or the closed form's fit) stopped short of "
            f"its target, at its iteration cap or numerical floor, at {inner} of {n_grid} "
            "values of nu"
        )
    if len(records) < n_grid:
        parts.append(
            f"the path stopped at nu={records[-1].nu:.3g} after {core.PATH_STALL_MAX} such "
            f"stalls in a row ({n_grid - len(records)} smaller values of nu not solved)"
        )
    fix = " Raise max_iter." if outer else ""
    if inner:
        fix += " A stalled inner solver means a badly conditioned problem: max_iter does not help."
    warnings.warn(
        f"{'; '.join(parts)}. The clusterings found are kept, flagged as not converged "
        f"in .path.{fix}{_scale_hint(prep)}",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )


def baseline_path(
    prep: Prepared,
    S: Any,
    method: str,
    *,
    gammas: Any,
    ks: Any,
    generator: np.random.Generator,
) -> Clusterings:
    """The baselines on the rows of ``S``: convex clustering over ``gammas`` or k-means
    over ``ks`` (default ``1..d``; draws from ``generator``), each clustering once."""
    P = S.toarray() if hasattr(S, "toarray") else np.asarray(S, dtype=float)
    if method == "convex_clustering":
        runs = sel._convex_runs(P, gammas=gammas)  # warns for the gammas capped
        col = "gamma"
    else:
        grid = range(1, prep.X.shape[1] + 1) if ks is None else ks
        runs = sel._kmeans_runs(P, list(grid), generator)
        col = "k"
        capped = [v for v, _, ok in runs if not ok]
        if capped:
            warnings.warn(
                f"k-means reached its cap of 300 iterations at k = {capped[:5]} (their "
                "clusterings are kept and flagged as not converged in .path).",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
    seen: dict[bytes, int] = {}
    labels_list, values, converged = [], [], []
    for v, lab, ok in runs:
        lab = core.canonical_labels(lab)
        if lab.tobytes() not in seen:
            seen[lab.tobytes()] = len(labels_list)
            labels_list.append(lab)
            values.append(v)
            converged.append(bool(ok))
        elif not ok:
            converged[seen[lab.tobytes()]] = False
    return Clusterings(
        labels=labels_list,
        tune=pd.DataFrame({col: values}),
        converged=converged,
    )


# ------------------------------------------------------------------------ selection
@dataclass(frozen=True, eq=False)
class Selection:
    """The scored path and the selected clustering (from :func:`select_clustering`).

    Attributes
    ----------
    path : DataFrame
        The result's ``path`` table (tuning range, ``n_clusters``, scores,
        ``converged``, ``selected``).
    class_path : list of ndarray
        Associated class code of each cluster, per clustering.
    best : int
        The selected row.
    margin : float
        Log marginal likelihood of the selected clustering minus the runner-up's
        (NaN with one clustering).
    by_rule : dict
        Per sigma rule: ``sigma``, ``n_clusters_selected`` and ``path_row``.
    """

    path: pd.DataFrame
    class_path: list[np.ndarray]
    best: int
    margin: float
    by_rule: dict[str, dict[str, Any]]


def _score_one(
    X: np.ndarray,
    y: np.ndarray,
    c: int,
    lab: np.ndarray,
    sigma: float,
    select: str,
    n_folds: int,
    seed: int,
) -> tuple[dict[str, float], np.ndarray]:
    """Scores of one clustering (a row of the path table) and its clusters' classes."""
    Z = sel.summed_features(X, lab)
    B, beta, info = sel.fit_map(Z, y, c, sigma)
    row = {
        "log_ml": sel.log_marginal_likelihood(Z, y, c, sigma, fit=(B, beta)),
        "train_accuracy": float(np.mean((Z @ B.T + beta).argmax(axis=1) == y)),
        "map_converged": bool(info["converged"]),
    }
    if select == "cv":
        row["cv_accuracy"] = sel.cv_accuracy(
            X, y, lab, c, sigma, n_folds=n_folds, rng=np.random.default_rng(seed)
        )
    return row, sel.associated_class(B)[0]


def _score(
    prep: Prepared,
    labels_list: list[np.ndarray],
    sigma: float,
    select: str,
    n_folds: int,
    seed: int,
    n_jobs: int | None = None,
) -> tuple[pd.DataFrame, list[np.ndarray]]:
    """Log ML, training accuracy (and CV accuracy, same folds for every clustering) of
    every clustering, and the associated class of each of its clusters."""
    X, y, c = prep.X, prep.y, prep.n_classes
    out = run_parallel(
        _score_one,
        [(X, y, c, lab, sigma, select, n_folds, seed) for lab in labels_list],
        n_jobs=n_jobs,
    )
    return pd.DataFrame([r for r, _ in out]), [a for _, a in out]


def _map_capped(scores: pd.DataFrame) -> np.ndarray:
    """Pop the scores' ``map_converged`` column: the rows whose MAP fit (scipy's
    L-BFGS) reached its cap, as a boolean mask. (A fit in a joblib worker warns
    there, not to the caller: :func:`select_clustering` warns once for them.)"""
    return ~scores.pop("map_converged").to_numpy(dtype=bool)


def _pick(scores: pd.DataFrame, n_clusters: np.ndarray, select: str) -> int:
    """Best row: highest criterion; ties go to fewer clusters."""
    col = "log_ml" if select == "marginal_likelihood" else "cv_accuracy"
    v = scores[col].to_numpy()
    best = np.flatnonzero(v >= v.max() - 1e-12)
    return int(best[np.argmin(n_clusters[best])])


def select_clustering(
    prep: Prepared,
    found: Clusterings,
    sig: SigmaChoice,
    *,
    select: str,
    n_folds: int,
    generator: np.random.Generator,
    n_jobs: int | None,
) -> Selection:
    """Score every distinct clustering (one draw from ``generator`` seeds the CV folds),
    pick the best, and redo the marginal-likelihood pick under every other sigma rule."""
    labels_list = found.labels
    cv_seed = int(generator.integers(2**63 - 1))
    scores, class_path = _score(prep, labels_list, sig.sigma, select, n_folds, cv_seed, n_jobs)
    map_capped = _map_capped(scores)
    if map_capped.any() and n_jobs not in (None, 1) and len(labels_list) > 1:
        warnings.warn(
            f"the MAP logistic regression reached its L-BFGS cap for {int(map_capped.sum())} "
            "clusterings (flagged as not converged in .path).",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    n_cl = np.array([int(lab.max()) + 1 for lab in labels_list])
    best = _pick(scores, n_cl, select)
    lml = scores["log_ml"].to_numpy()
    others = np.delete(lml, best)
    margin = float(lml[best] - others.max()) if others.size else float("nan")
    path = pd.concat(
        [found.tune, pd.DataFrame({"n_clusters": n_cl}), scores],
        axis=1,
    )
    path["converged"] = np.asarray(found.converged, dtype=bool) & ~map_capped
    path["selected"] = np.arange(len(path)) == best

    # selection under each sigma rule (the summary shows how firm the choice is)
    by_rule = {}
    for rule, s_val in sig.values.items():
        if s_val == sig.sigma:
            row = best
        else:
            sc, _ = _score(prep, labels_list, s_val, "marginal_likelihood", n_folds, 0, n_jobs)
            _map_capped(sc)
            row = _pick(sc, n_cl, "marginal_likelihood")
        by_rule[rule] = {"sigma": s_val, "n_clusters_selected": int(n_cl[row]), "path_row": row}
    return Selection(path=path, class_path=class_path, best=best, margin=margin, by_rule=by_rule)


def selected_nu(method: str, tune: pd.DataFrame, best: int) -> float:
    """The reported tuning value of row ``best``: the middle of its ``nu`` range on the
    log scale (convex fusion), else the baseline's ``gamma`` / ``k``."""
    if method == "convex_fusion":
        lo, hi = float(tune["nu_min"].iloc[best]), float(tune["nu_max"].iloc[best])
        return float(np.sqrt(lo * hi)) if lo > 0 else hi / 2 if hi > 0 else 0.0
    return float(tune.iloc[best, 0])


# ------------------------------------------------------------------------ refit
@dataclass(frozen=True, eq=False)
class Refit:
    """The classifier refitted on the selected clustering (from :func:`refit`).

    Attributes
    ----------
    coef : DataFrame
        One row per cluster, one column per class.
    intercept : Series
        Intercepts by class.
    cluster_class : DataFrame
        Per cluster: ``size``, ``associated_class`` and ``odds_ratio``.
    """

    coef: pd.DataFrame
    intercept: pd.Series
    cluster_class: pd.DataFrame


def refit(prep: Prepared, lab: np.ndarray, sigma: float) -> Refit:
    """MAP logistic regression on the cluster sums of ``lab``, with each cluster's
    associated class and odds ratio."""
    classes = prep.classes
    Z = sel.summed_features(prep.X, lab)
    B, beta, _ = sel.fit_map(Z, prep.y, prep.n_classes, sigma)
    cls, odds = sel.associated_class(B)
    cl_index = pd.RangeIndex(B.shape[1], name="cluster")
    cluster_class = pd.DataFrame(
        {
            "size": np.bincount(lab, minlength=B.shape[1]),
            "associated_class": classes[cls],
            "odds_ratio": odds,
        },
        index=cl_index,
    )
    return Refit(
        coef=pd.DataFrame(B.T, index=cl_index, columns=classes),
        intercept=pd.Series(beta, index=classes, name="intercept"),
        cluster_class=cluster_class,
    )
