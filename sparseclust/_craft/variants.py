"""Degenerate cases of CRAFT: entropy clustering of binary data and DP-RF.

Both run the CRAFT loop of :mod:`sparseclust._craft.core` (Algorithm 1 with the
CAF assignment pass) with switches, never a second implementation of it:

* :func:`entropy_clustering` -- supplementary section 6.2, Algorithm 3 (binary data,
  every feature kept, no feature-selection terms, cross-entropy cost):
  ``craft_fit(..., select_all=True, feature_terms=False)`` on two-level categoricals.
* :func:`dp_rf` -- the paper's "DP-RF" of section 4 / Fig. 5: DP-means(R) (squared
  Euclidean distance, random start point) with CRAFT's feature-selection term:
  ``craft_fit(..., sigma_override=1/sqrt(2))`` on numeric (one-hot) columns.

References: Garg, Rudin & Jaakkola (2016), "CRAFT: ClusteR-specific Assorted
Feature selecTion", AISTATS, and its supplementary material.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._data.dtypes import ColumnInfo
from .._data.params import (
    Choice,
    Columns,
    Flag,
    Int,
    Number,
    Progress,
    Seed,
    Workers,
    as_rng,
    rules,
)
from .._data.screen import screens
from .._data.stages import repair_sd, warn_spread
from .._data.table import ColumnTable, VariableSpec
from .._engine.parallel import progress_bars
from .._results.format import call_string, fmt
from .._tuning.penalty import resolve_penalty
from . import core as core
from . import lam as lam_
from . import restarts as restarts
from .front import (
    ALPHA_RULE,
    K_RULE,
    M_RULE,
    MISSING,
    RHO_RULE,
    check_rho,
    conclude,
    default_rho,
    read_table,
)
from .prepared import Prepared
from .result import ALL_SELECTED_NOTE, CraftResult

__all__ = ["DPRFResult", "EntropyResult", "dp_rf", "entropy_clustering"]

#: sigma that turns CRAFT's numeric cost ``(x - zeta)^2 / (2 sigma^2)`` into the
#: squared Euclidean distance of DP-means (supplementary section 6.3).
SIGMA_DP = float(np.sqrt(0.5))

_RESTART_NOTE = "Restarts are compared by the model's negative log-likelihood"


# ------------------------------------------------------------------------ results
@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class EntropyResult(CraftResult):
    """Result of :func:`entropy_clustering` (a :class:`CraftResult`).

    ``selected`` is all True (every feature is used by every cluster), ``F0`` and
    ``F_delta`` are 0 (no feature terms), ``m`` is 1 and ``rho`` NaN (no selection
    prior), ``budget`` is ``"none"``. ``level_shares`` are the smoothed cluster
    means mu (one column per level; the two columns of a variable sum to 1).
    ``objective`` is the trace of sum of cross-entropies + lambda K, and
    ``neg_loglik`` the summed cross-entropy of the chosen run.

    Examples
    --------
    >>> from sparseclust import entropy_clustering
    >>> from sparseclust.simulate import craft_fig2a
    >>> fit = entropy_clustering(craft_fig2a(n_per_cluster=30, rng=0).data, k=3, rng=0)
    >>> type(fit).__name__, fit.n_clusters
    ('EntropyResult', 3)
    """

    method_name: ClassVar[str] = "Entropy clustering"
    plot_hint: ClassVar[str] = ".plot_objective() for the trace"

    def _headline(self) -> str:
        return (
            f"Entropy clustering (lambda={fmt(self.lam)}, {self.lam_method}) "
            f"with {self.n_clusters} clusters"
        )

    def _detail_lines(self) -> list[str]:
        lines = [
            f"Cross-entropy: {fmt(self.neg_loglik, 6)}; objective (+ lambda K): "
            f"{fmt(self.objective[-1], 6)}"
        ]
        if self.k is not None and self.k != self.n_clusters:
            lines.append(f"Asked for k={self.k}; got {self.n_clusters} clusters.")
        return lines

    def _summary_tables(self) -> dict[str, pd.DataFrame]:
        tables = super()._summary_tables()
        drop = ["m", "rho", "F0", "F_delta", "budget", "eps_c", "eps_v", "scale"]
        tables["parameters"] = tables["parameters"].drop(index=drop)
        alpha = pd.DataFrame({"value": [fmt(self._prep.data.alpha)]}, index=["alpha"])
        tables["parameters"] = pd.concat(
            [tables["parameters"].rename(index={"neg. log-lik": "cross-entropy"}), alpha]
        )
        tables["clusters"] = tables["clusters"].drop(columns="n_selected")
        for name in ("selection_frequency", "selected", "selected_profiles"):
            tables.pop(name, None)
        return tables

    def _notes(self) -> list[str]:
        notes = [
            n for n in super()._notes() if not n.startswith((_RESTART_NOTE, ALL_SELECTED_NOTE))
        ]
        notes.append(
            f"Every binary variable is used by every cluster; cluster means are smoothed "
            f"with pseudo-count alpha={fmt(self._prep.data.alpha)}. Restarts are compared "
            f"by the summed cross-entropy."
        )
        return notes


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class DPRFResult(CraftResult):
    """Result of :func:`dp_rf` (a :class:`CraftResult`).

    ``selected``, ``centers`` and ``sds`` have one column per numeric column
    clustered on: the numeric variables, then one 0/1 column per level of each
    categorical variable, named ``"var[level]"``. ``level_shares`` is empty (the
    one-hot shares are the ``centers`` of those columns). ``neg_loglik`` is the
    squared-error criterion used to compare restarts (see :func:`dp_rf`).
    ``variables`` and ``table`` are the input variables (profiles show their
    level shares).

    Examples
    --------
    >>> from sparseclust import dp_rf
    >>> from sparseclust.simulate import craft_fig2a
    >>> fit = dp_rf(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
    >>> type(fit).__name__, fit.n_clusters
    ('DPRFResult', 3)
    """

    design_names: tuple[str, ...] = ()

    method_name: ClassVar[str] = "DP-RF"

    def _headline(self) -> str:
        return (
            f"DP-RF (m={fmt(self.m)}, lambda={fmt(self.lam)}, {self.lam_method}, "
            f"fixed budget) with {self.n_clusters} clusters"
        )

    def _summary_tables(self) -> dict[str, pd.DataFrame]:
        tables = super()._summary_tables()
        tables["parameters"] = tables["parameters"].drop(index=["budget", "eps_c", "eps_v"])
        tables["parameters"] = tables["parameters"].rename(index={"neg. log-lik": "squared error"})
        return tables

    def _notes(self) -> list[str]:
        notes = [n for n in super()._notes() if not n.startswith(_RESTART_NOTE)]
        if self.variables.categorical_names:
            notes.append("Categorical variables enter as full one-hot 0/1 columns.")
        notes.append(
            "Costs are squared Euclidean distances on the selected columns; restarts are "
            "compared by the squared error (selected columns about the cluster mean, "
            "unselected ones about the overall mean)."
        )
        return notes

    def selected_profiles(self) -> pd.DataFrame:
        """The profiles (as :meth:`profiles`) with cells of unselected columns blanked (NaN).

        A categorical level's row is blanked when its one-hot column is unselected.

        Returns
        -------
        pandas.DataFrame
            As :meth:`profiles`, NaN where the cluster does not select the column.

        Examples
        --------
        >>> from sparseclust import dp_rf
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = dp_rf(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
        >>> prof = fit.selected_profiles()
        >>> prof.shape == fit.profiles().shape
        True
        """
        prof = self.profiles()
        out = prof.copy()
        cat = set(self.variables.categorical_names)
        design = [f"{var}[{stat}]" if var in cat else var for var, stat in prof.index.to_list()]
        for k in self.selected.index:
            sel = self.selected.loc[k]
            unselected = np.array([not bool(sel[c]) for c in design])
            out.loc[unselected, k] = np.nan
        return out

    _cost_sigma: ClassVar[float | None] = SIGMA_DP

    def _new_arrays(self, t: ColumnTable) -> tuple[np.ndarray, np.ndarray]:
        X, _, _ = t.to_numeric(one_hot=True)
        return X, np.zeros((X.shape[0], 0), dtype=np.int64)


def _as(cls: type, res: CraftResult, **changes: Any) -> Any:
    """``res`` as an instance of the subclass ``cls``, with ``changes`` applied."""
    values = {f.name: getattr(res, f.name) for f in fields(res) if f.init}
    values.update(changes)
    return cls(**values)


# ------------------------------------------------------------------------ helpers
def _binary_table(table: ColumnTable) -> ColumnTable:
    """The table with 0/1 numeric columns read as two-level categoricals.

    Raises ``ValueError`` naming every column that is not binary: a numeric column
    with a value other than 0 or 1, or a categorical column without exactly two
    levels.
    """
    bad: dict[str, str] = {}
    codes: list[np.ndarray] = []
    infos: list[ColumnInfo] = []
    levels: dict[str, pd.Index] = {}
    num_pos = {c: j for j, c in enumerate(table.numeric_names)}
    cat_pos = {c: j for j, c in enumerate(table.categorical_names)}
    for info in table.spec.columns:
        c = info.name
        if info.kind == "numeric":
            x = table.numeric[:, num_pos[c]]
            obs = x[~np.isnan(x)]
            other = obs[(obs != 0) & (obs != 1)]
            if other.size:
                bad[c] = f"numeric with values other than 0/1 (e.g. {fmt(float(other[0]))})"
                continue
            codes.append(np.where(np.isnan(x), -1, x).astype(np.int64))
            levels[c] = pd.Index([0, 1], dtype=object)
            infos.append(replace(info, kind="categorical", reason="0/1 numbers"))
        else:
            lev = table.levels[c]
            if len(lev) != 2:
                shown = list(lev[:5]) + (["..."] if len(lev) > 5 else [])
                bad[c] = f"categorical with {len(lev)} levels {shown}"
                continue
            codes.append(table.codes[:, cat_pos[c]])
            levels[c] = lev
            infos.append(info)
    if bad:
        detail = "; ".join(f"{c}: {why}" for c, why in bad.items())
        raise ValueError(
            f"entropy_clustering needs binary variables (bool, 0/1 numbers or categories "
            f"with exactly two levels); columns {list(bad)} are not ({detail}). Binarise "
            f"them first (e.g. df[col] == level, or cat.remove_unused_categories() for "
            f"unused levels) or drop them."
        )
    n = table.n_obs
    spec = replace(table.spec, columns=tuple(infos), levels=levels)
    return replace(
        table,
        numeric=np.zeros((n, 0)),
        codes=np.ascontiguousarray(np.column_stack(codes)),
        spec=spec,
    )


def _design_table(table: ColumnTable) -> ColumnTable:
    """The numeric design of :func:`dp_rf`: numeric variables then full one-hot 0/1 columns."""
    X, names, _ = table.to_numeric(one_hot=True)
    num = set(table.numeric_names)
    infos = tuple(
        ColumnInfo(c, "float64", "numeric", "detected" if c in num else "one-hot") for c in names
    )
    spec = VariableSpec(infos, {})
    frame = pd.DataFrame(X, columns=names, index=table.kept_index)
    return ColumnTable(
        X,
        np.zeros((X.shape[0], 0), dtype=np.int64),
        spec,
        table.index,
        table.dropped,
        frame,
        missing=table.missing,
    )


def squared_error(d: core.CraftData, st: core.State, labels: np.ndarray) -> float:
    """DP-RF's restart criterion: sum over observed cells of the squared deviation
    from the cluster mean (selected columns) or the overall mean (unselected ones).

    The Gaussian negative log-likelihood with every sigma = 1/sqrt(2), up to a
    constant: the DP-RF analogue of :func:`~sparseclust._craft.core.neg_loglik`.
    """
    total = 0.0
    for s in range(0, d.n, 8192):
        lab = labels[s : s + 8192]
        x = d.X0[s : s + 8192]
        centre = np.where(st.v[lab, : d.P], st.zeta[lab], d.col_mean[None, :])
        term = (x - centre) ** 2
        if d.M is not None:
            term = term * d.M[s : s + 8192]
        total += float(term.sum())
    return total


#: Rules of the restart settings both variants share.
_COMMON_RULES = dict(
    categorical=Columns(),
    numeric=Columns(),
    missing=Choice(MISSING),
    n_init=Int(min=1),
    max_iter=Int(min=1),
    n_jobs=Workers(),
    keep_data=Flag(),
    k=K_RULE,
    progress=Progress(),
    rng=Seed(),
)


# ------------------------------------------------------------------------- public
@rules(alpha=ALPHA_RULE, **_COMMON_RULES)
@screens
def entropy_clustering(
    x: Any = None,
    /,
    *,
    data: Any = None,
    lam: float | str | None = None,
    k: int | None = None,
    categorical: Any = None,
    numeric: Any = None,
    screen: Any = True,
    missing: str = "native",
    alpha: float = 0.01,
    n_init: int = 10,
    max_iter: int = 100,
    n_jobs: int | None = None,
    keep_data: bool = True,
    progress: bool | None = None,
    rng: Any = None,
) -> EntropyResult:
    """Entropy clustering of binary data (CRAFT supplementary, section 6.2, Algorithm 3).

    The degenerate case of CRAFT for binary categorical data without feature
    selection: every point costs its cross-entropy to a cluster's Bernoulli means,
    a point whose smallest cost exceeds ``lambda`` opens a cluster, and the
    objective is eq. (11), the sum over clusters and features of ``n_k H(mu_kd)``
    plus ``lambda K``.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        Binary data: every variable must have exactly two levels -- ``bool``,
        numbers that are all 0 or 1 (read as two-level categories), or categories /
        strings with two levels. Anything else is a ``ValueError`` naming the
        columns. A formula such as ``"~ . - Class"`` takes its data from ``data=``.
    data : DataFrame, optional
        The data for a formula.
    lam : float, "farthest_first" or None
        Penalty for a new cluster (in nats, the units of the cross-entropy). With
        ``k`` alone lambda is calibrated by bisection so that the converged
        clustering has exactly ``k`` clusters; ``lam="farthest_first", k=`` is the
        paper's heuristic on this cost (see Notes).
    k : int, optional
        Number of clusters wanted.
    categorical, numeric : list of str, optional
        Override detected kinds (a column given as numeric must still hold 0/1).
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
    missing : {"native", "drop", "raise"}
        ``"native"``: a missing cell adds nothing to a point's cost and is left out
        of the cluster means (rows are kept).
    alpha : float > 0
        Pseudo-count added to both level counts of a cluster:
        ``mu = (n_k1 + alpha) / (n_k + 2 alpha)``. Algorithm 3 uses the raw means,
        which give an infinite cost to any point that disagrees with a pure
        cluster (and to every point but the centre of a new singleton cluster).
    n_init : int
        Independent restarts (random start point); the one with the lowest
        cross-entropy among those with the wanted number of clusters is kept (with
        ``lam`` given: the lowest cross-entropy + lambda K).
    max_iter : int
        Cap on passes per run (``ConvergenceWarning`` when hit).
    n_jobs : int, optional
        Parallel restarts with joblib.
    keep_data : bool
        Keep the typed data on the result (profiles, summaries).
    progress : bool, optional
        A tqdm bar over the restarts (shown once they have run 2 s). Default: on in
        an interactive terminal or a notebook, off otherwise.
    rng : None, int or Generator
        Seeds the restarts.

    Returns
    -------
    EntropyResult
        A :class:`~sparseclust.CraftResult` (``selected`` all True) whose repr
        names the method "Entropy clustering".

    Notes
    -----
    Algorithm 3: one cluster holding every point, its mean a random data point;
    each pass visits the points in data order and computes, for every cluster,

    ``d_nk = sum_d H(mu_kd) + (mu_kd - x_nd) log(mu_kd / (1 - mu_kd))
    = -sum_d [x_nd log mu_kd + (1 - x_nd) log(1 - mu_kd)]``,

    the cross-entropy; if ``min_k d_nk > lambda`` the point opens a cluster with
    mean ``x_n`` (smoothed), which the points after it see; otherwise it joins the
    argmin. Then the means are updated, empty clusters dropped, until no
    assignment changes. This is exactly CRAFT's categorical cost with every
    feature selected and the feature terms F0, F_delta dropped, so the CRAFT loop
    runs it (``select_all=True, feature_terms=False``). For a two-level variable
    mu is the share of its second level.

    The farthest-first lambda (``lam="farthest_first"``): T starts with a random
    point; ``k`` times the point whose smallest cross-entropy to a member of T
    (each a singleton cluster with smoothed mean) is largest joins T; lambda is
    that cost of the last point added (as :func:`~sparseclust.craft_lambda`, with
    every feature used).

    Examples
    --------
    >>> from sparseclust import entropy_clustering
    >>> from sparseclust.datasets import load_house_votes_84
    >>> votes = load_house_votes_84()
    >>> fit = entropy_clustering("~ . - Class", data=votes, k=2, n_init=3, rng=0)
    >>> fit
    Entropy clustering (lambda=..., calibrated) with 2 clusters on 435 obs, 16 variables (0 numeric, 16 categorical)
    ...
    >>> bool(fit.selected.all(axis=None))
    True
    >>> from sparseclust.metrics import purity
    >>> purity(votes["Class"], fit.labels) > 0.85
    True
    """
    call = call_string(entropy_clustering, locals())
    generator = as_rng(rng)
    table = read_table(x, data=data, categorical=categorical, numeric=numeric, missing=missing)
    table = _binary_table(table)
    pen = resolve_penalty(lam, k, n_obs=table.n_obs, func="entropy_clustering")
    d = core.prepare(table.numeric, table.codes, [2] * table.codes.shape[1], alpha=alpha)
    prep = Prepared(table, d, None, None)
    m = 0.5  # unused by the loop: select_all, feature_terms=False
    rho = default_rho(m)
    consts = replace(core.craft_constants(m, rho), F0=0.0, F_delta=0.0)
    settings = core.Settings(
        m=m, rho=rho, max_iter=max_iter, select_all=True, sigma_override=None, feature_terms=False
    )
    seeds = np.random.SeedSequence(int(generator.integers(2**63 - 1))).spawn(n_init)
    D = d.Q

    def ff(g: np.random.Generator) -> float:
        return lam_.farthest_first(
            d, pen.k, lambda _row: np.ones(D, bool), F_delta=0.0, sigma_override=None, rng=g
        )

    with progress_bars(progress):
        runs, method, k_wanted = restarts.fit_all(d, pen, settings, consts, seeds, n_jobs, ff)
    res = conclude(
        runs,
        prep,
        k=k_wanted,
        name="Entropy clustering",
        call=call,
        method=method,
        consts=consts,
        settings=settings,
        params={},
        scale=False,
        keep_data=keep_data,
    )
    params = {
        "lam": res.lam,
        "k": k_wanted,
        "alpha": alpha,
        "n_init": n_init,
        "max_iter": max_iter,
    }
    return _as(EntropyResult, res, m=1.0, rho=float("nan"), budget="none", params=params)


@rules(m=M_RULE, rho=RHO_RULE, scale=Flag(), sigma_floor=Number(min=0), **_COMMON_RULES)
@screens
def dp_rf(
    x: Any = None,
    /,
    *,
    data: Any = None,
    m: float = 0.5,
    lam: float | str | None = None,
    k: int | None = None,
    rho: float | None = None,
    scale: bool = False,
    categorical: Any = None,
    numeric: Any = None,
    screen: Any = True,
    missing: str = "native",
    sigma_floor: float = 0.05,
    n_init: int = 10,
    max_iter: int = 100,
    n_jobs: int | None = None,
    keep_data: bool = True,
    progress: bool | None = None,
    rng: Any = None,
) -> DPRFResult:
    """DP-RF: DP-means(R) with CRAFT's feature selection (CRAFT paper, section 4, Fig. 5).

    The paper's baseline for showing that CRAFT's entropy term matters on
    categorical data: DP-means started from a random data point ("(R)"), keeping
    its squared Euclidean distance, with CRAFT's cluster-specific feature
    selection (fixed budget) and feature terms added.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        The data, or a formula with ``data=``. Numeric variables are used as they
        are (standardised with ``scale=True``); categorical ones enter as full
        one-hot 0/1 columns named ``"var[level]"`` (as in :func:`~sparseclust.dpmeans`),
        each a feature of its own for selection. The paper's binarised Splice is
        passed as 0/1 numbers.
    data : DataFrame, optional
        The data for a formula.
    m : float in (0, 1)
        Fraction of the numeric columns selected per cluster: ``round(m D)``
        (halves up), D counting one-hot columns.
    lam : float, "farthest_first" or None
        Penalty for a new cluster (squared-distance units). With ``k`` alone it is
        calibrated to give exactly ``k`` clusters; ``lam="farthest_first", k=`` is
        the paper's heuristic on the DP-RF cost (see Notes).
    k : int, optional
        Number of clusters wanted.
    rho : float in (0, m(1-m)), optional
        Prior variance of the selection probabilities (default
        ``max(0.01, m(1-m) - 0.01)``, as :func:`~sparseclust.craft`).
    scale : bool, default False
        Standardise the numeric variables (not the one-hot columns). DP-means and
        the paper's baselines use raw features.
    categorical, numeric : list of str, optional
        Override detected kinds.
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
    missing : {"native", "drop", "raise"}
        ``"native"``: a missing cell adds nothing to a point's cost and is left out
        of the cluster statistics; a missing categorical value leaves all its
        one-hot cells missing.
    sigma_floor : float >= 0
        The within-cluster sd used to rank features is at least ``sigma_floor``
        times the column's overall sd (clusters under two points use 1).
    n_init : int
        Independent restarts (random start, Bernoulli draws); the one with the
        lowest squared error (see Notes) among those with the wanted number of
        clusters is kept (with ``lam`` given: squared error + the penalty terms).
    max_iter : int
        Cap on passes per run (``ConvergenceWarning`` when hit).
    n_jobs : int, optional
        Parallel restarts with joblib.
    keep_data : bool
        Keep the typed data on the result (profiles, summaries).
    progress : bool, optional
        A tqdm bar over the restarts (shown once they have run 2 s). Default: on in
        an interactive terminal or a notebook, off otherwise.
    rng : None, int or Generator
        Seeds the restarts.

    Returns
    -------
    DPRFResult
        A :class:`~sparseclust.CraftResult` whose ``selected``, ``centers`` and
        ``sds`` have one column per numeric column used.

    Notes
    -----
    The CRAFT loop (Algorithm 1 with CAF) with the cost of point n in cluster k

    ``d_nk = sum_d v_kd (x_nd - zeta_kd)^2 + F_delta |v_k|``,

    i.e. CRAFT's numeric cost ``(x - zeta)^2 / (2 sigma^2)`` with every sigma set
    to ``1/sqrt(2)`` (supplementary section 6.3: with all features kept this is
    DP-means), and a new cluster when ``min_k d_nk > lambda + D F0``. One cluster
    starts at a random data point with ``v ~ Bernoulli(m)^D``; a point opening a
    cluster draws ``v`` as in CRAFT. After each pass every cluster selects the
    ``round(m D)`` columns with the lowest *real* within-cluster sd (fixed budget;
    the real sd, not the 1/sqrt(2) of the cost, else every column would tie).
    Restarts are compared by the squared error: selected columns about the cluster
    mean, unselected ones about the overall mean (the Gaussian negative
    log-likelihood with sigma = 1/sqrt(2), up to a constant).

    The farthest-first lambda: T starts with a random point; ``k`` times the point
    whose smallest DP-RF cost to a member of T is largest joins T; each member is
    a singleton using the ``round(m D)`` columns where it lies farthest from the
    overall mean in sd units (as :func:`~sparseclust.craft_lambda`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sparseclust import dp_rf
    >>> g = np.random.default_rng(1)
    >>> X = pd.DataFrame(g.normal(size=(60, 4)), columns=list("abcd"))
    >>> X.loc[30:, ["a", "b"]] += 8.0
    >>> fit = dp_rf(X, m=0.5, k=2, n_init=3, rng=0)
    >>> fit.n_clusters
    2
    >>> fit.labels.iloc[:30].nunique(), fit.labels.iloc[30:].nunique()
    (1, 1)
    >>> fit.selected.shape
    (2, 4)
    """
    call = call_string(dp_rf, locals())
    rho = check_rho(m, rho)
    generator = as_rng(rng)
    table = read_table(x, data=data, categorical=categorical, numeric=numeric, missing=missing)
    warn_spread(table.numeric, table.numeric_names, scale=scale)
    pen = resolve_penalty(lam, k, n_obs=table.n_obs, func="dp_rf")
    design = _design_table(table)
    X = design.numeric.copy()
    center = sd = None
    p = len(table.numeric_names)
    if scale and p:
        center = np.zeros(X.shape[1])
        sd = np.ones(X.shape[1])
        center[:p] = np.nanmean(X[:, :p], axis=0)
        s = repair_sd(X[:, :p], center[:p], np.nanstd(X[:, :p], axis=0, ddof=1))
        sd[:p] = np.where(s > 0, s, 1.0)
        X = (X - center) / sd
    d = core.prepare(X, design.codes, [], alpha=1.0)
    prep = Prepared(design, d, center, sd)
    consts = core.craft_constants(m, rho)
    settings = core.Settings(
        m=m, rho=rho, sigma_floor=sigma_floor, max_iter=max_iter, sigma_override=SIGMA_DP
    )
    seeds = np.random.SeedSequence(int(generator.integers(2**63 - 1))).spawn(n_init)

    def ff(g: np.random.Generator) -> float:
        return lam_.farthest_first(
            d,
            pen.k,
            lambda row: lam_.singleton_selection(row, 0, m),
            F_delta=consts.F_delta,
            sigma_override=SIGMA_DP,
            rng=g,
        )

    with progress_bars(progress):
        runs, method, k_wanted = restarts.fit_all(d, pen, settings, consts, seeds, n_jobs, ff)
    # restarts compared by the squared error (the likelihood with sigma = 1/sqrt(2))
    runs = [replace(r, nll=squared_error(d, r.state, r.labels)) for r in runs]
    params = settings.pick(
        "m", "rho", "budget", "eps_c", "eps_v", "sigma_floor", "max_iter", "sigma_override"
    )
    res = conclude(
        runs,
        prep,
        k=k_wanted,
        name="DP-RF",
        call=call,
        method=method,
        consts=consts,
        settings=settings,
        params=params,
        scale=scale,
        keep_data=keep_data,
    )
    return _as(
        DPRFResult,
        res,
        variables=table.spec,
        table=table if keep_data else None,
        design_names=tuple(design.numeric_names),
    )
