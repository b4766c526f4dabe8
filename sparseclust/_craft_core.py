"""CRAFT core (Garg, Rudin & Jaakkola, AISTATS 2016): Algorithm 1 + CAF on arrays.

Everything here works on the typed arrays of a :class:`~sparseclust._frame.ColumnTable`
(numeric block with NaN for missing cells, categorical integer codes with ``-1``);
:func:`sparseclust.craft` is the public front. Costs for all points and clusters are
computed with matrix products (a sparse one-hot matrix for the categorical part), the
sequential new-cluster rule is walked only over the points that would open a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import sparse

from ._threads import single_blas_thread

__all__ = ["CraftData", "craft_constants", "craft_fit", "prepare"]


# ----------------------------------------------------------------------- constants
def _F(a: float, b: float) -> float:
    return (a + b) * np.log(a + b) - a * np.log(a) - b * np.log(b)


def craft_constants(m: float, rho: float) -> dict[str, float]:
    """a0, b0, a1, b1, F0, F1, F_delta for ``(m, rho)`` (paper eq. (1)).

    Examples
    --------
    >>> c = craft_constants(0.5, 0.24)
    >>> bool(abs(c["F_delta"]) < 1e-12)
    True
    """
    a0 = m * m * (1 - m) / rho - m
    b0 = m * (1 - m) ** 2 / rho + m
    a1, b1 = a0 + 1.0, b0 - 1.0
    F0, F1 = _F(a0, b0), _F(a1, b1)
    F_delta = F1 - F0
    if abs(F_delta) <= 1e-12 * max(abs(F0), 1.0):  # m = 0.5, rho = 0.24: exactly 0 by symmetry
        F_delta = 0.0
    return {"a0": a0, "b0": b0, "a1": a1, "b1": b1, "F0": F0, "F1": F1, "F_delta": F_delta}


def round_half_up(x: float) -> int:
    """``round`` with halves up (6.5 -> 7), not Python's banker's rounding."""
    return int(np.floor(x + 0.5))


# -------------------------------------------------------------------- prepared data
@dataclass(frozen=True, eq=False)
class CraftData:
    """Arrays shared by every fit on one data set (built once by :func:`prepare`)."""

    n: int
    P: int  # numeric features
    Q: int  # categorical features
    X0: np.ndarray  # (n, P) numeric, missing -> 0
    X0sq: np.ndarray  # (n, P)
    M: np.ndarray | None  # (n, P) float observed mask, None when nothing is missing
    col_mean: np.ndarray  # (P,) mean of observed values (the filler for a missing centre)
    col_sd: np.ndarray  # (P,) sd of observed values (for the sigma floor)
    onehot: sparse.csr_matrix  # (n, S) one-hot of all categorical levels, missing -> no entry
    L: np.ndarray  # (Q,) levels per feature
    level_q: np.ndarray  # (S,) feature of each level column
    level_sum: sparse.csr_matrix  # (S, Q) sums level columns per feature
    codes: np.ndarray  # (n, Q) integer codes, -1 missing
    offsets: np.ndarray  # (Q,) first level column of each feature
    log_eta0: np.ndarray  # (S,) log of the smoothed global level shares
    g0: np.ndarray  # (n,) sum over categorical features of -log eta0(x_nd)
    alpha: float  # pseudo-count on level shares


def prepare(
    numeric: np.ndarray, codes: np.ndarray, n_levels: list[int], *, alpha: float
) -> CraftData:
    """Build :class:`CraftData` from a numeric block (NaN = missing) and integer codes."""
    n = max(numeric.shape[0], codes.shape[0])
    P, Q = numeric.shape[1], codes.shape[1]
    obs = ~np.isnan(numeric)
    X0 = np.where(obs, numeric, 0.0)
    M = None if obs.all() else obs.astype(np.float64)
    cnt = obs.sum(axis=0)
    col_mean = np.divide(X0.sum(axis=0), cnt, out=np.zeros(P), where=cnt > 0)
    dev = np.where(obs, numeric - col_mean, 0.0)
    col_sd = np.sqrt(np.divide((dev * dev).sum(axis=0), np.maximum(cnt - 1, 1)))
    L = np.asarray(n_levels, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(L)[:-1]]).astype(np.int64) if Q else np.zeros(0, int)
    S = int(L.sum())
    level_q = np.repeat(np.arange(Q), L)
    ok = codes >= 0
    rows = np.nonzero(ok)[0]
    cols = (codes + offsets[None, :])[ok]
    onehot = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, S))
    level_sum = sparse.csr_matrix((np.ones(S), (np.arange(S), level_q)), shape=(S, Q))
    counts = np.asarray(onehot.sum(axis=0)).ravel()
    n_obs_q = ok.sum(axis=0)
    eta0 = (counts + alpha) / (n_obs_q[level_q] + alpha * L[level_q]) if Q else np.zeros(0)
    log_eta0 = np.log(eta0)
    g0 = -(onehot @ log_eta0) if Q else np.zeros(n)
    return CraftData(
        n,
        P,
        Q,
        X0,
        X0 * X0,
        M,
        col_mean,
        col_sd,
        onehot,
        L,
        level_q,
        level_sum,
        codes,
        offsets,
        log_eta0,
        np.asarray(g0, dtype=np.float64),
        alpha,
    )


def with_training_stats(new: CraftData, fitted: CraftData) -> CraftData:
    """New data carrying the fitted data's global statistics (level shares, column
    means and sds), so that costs on it are the fitted model's costs."""
    g0 = -(new.onehot @ fitted.log_eta0) if fitted.Q else np.zeros(new.n)
    return replace(
        new,
        col_mean=fitted.col_mean,
        col_sd=fitted.col_sd,
        log_eta0=fitted.log_eta0,
        g0=np.asarray(g0, dtype=np.float64),
    )


# ------------------------------------------------------------------- cluster state
@dataclass(frozen=True, eq=False)
class State:
    """Parameters of K clusters: numeric means/sds, log level shares, selection."""

    zeta: np.ndarray  # (K, P)
    sigma: np.ndarray  # (K, P)
    log_eta: np.ndarray  # (K, S)
    counts: np.ndarray  # (K, S) level counts (zeros for a cluster opened at a point)
    v: np.ndarray  # (K, D) bool: numeric features first, then categorical

    @property
    def K(self) -> int:
        return self.v.shape[0]


def costs(
    data: CraftData,
    st: State,
    F_delta: float,
    rows: np.ndarray | None = None,
    sigma_override: float | None = None,
) -> np.ndarray:
    """CAF costs d_nk (paper Algorithm 2) for ``rows`` (all by default) and all clusters.

    A missing cell contributes nothing (neither to numeric nor to categorical terms).
    """
    P = data.P
    nr = data.n if rows is None else rows.size
    out = np.zeros((nr, st.K))
    if data.Q:
        vcat = st.v[:, P:]
        A = (data.log_eta0[None, :] - st.log_eta) * vcat[:, data.level_q]  # (K, S)
        oh = data.onehot if rows is None else data.onehot[rows]
        out += np.asarray(oh @ A.T)
        out += (data.g0 if rows is None else data.g0[rows])[:, None]
    if P:
        sig = st.sigma if sigma_override is None else sigma_override
        W = st.v[:, :P] / (2.0 * sig * sig)  # (K, P)
        X0 = data.X0 if rows is None else data.X0[rows]
        X0sq = data.X0sq if rows is None else data.X0sq[rows]
        out += X0sq @ W.T
        out -= 2.0 * (X0 @ (W * st.zeta).T)
        wz2 = W * st.zeta * st.zeta
        if data.M is None:
            out += wz2.sum(axis=1)[None, :]
        else:
            M = data.M if rows is None else data.M[rows]
            out += M @ wz2.T
    out += F_delta * st.v.sum(axis=1)[None, :]
    return out


def singleton(data: CraftData, i: int, v: np.ndarray) -> State:
    """A cluster opened at point ``i``: centre x_i, sigma = 1, smoothed one-hot shares."""
    P, S = data.P, int(data.L.sum())
    zeta = np.where(data.M is None or data.M[i].astype(bool), data.X0[i], data.col_mean)[None, :]
    counts = np.zeros((1, S))
    if data.Q:
        c = data.codes[i]
        ok = c >= 0
        counts[0, (c + data.offsets)[ok]] = 1.0
        nq = ok.astype(float)[data.level_q]
        log_eta = np.log((counts + data.alpha) / (nq + data.alpha * data.L[data.level_q]))
    else:
        log_eta = np.zeros((1, 0))
    return State(zeta.reshape(1, P), np.ones((1, P)), log_eta, counts, v[None, :].astype(bool))


def stack(a: State, b: State) -> State:
    return State(
        *(
            np.vstack([getattr(a, f), getattr(b, f)])
            for f in ("zeta", "sigma", "log_eta", "counts", "v")
        )
    )


def update(
    data: CraftData, labels: np.ndarray, K: int, v: np.ndarray, sigma_floor: float
) -> tuple[State, np.ndarray]:
    """Means, sds and level shares of the non-empty clusters (empty ones dropped).

    Returns the new state (selection ``v`` carried over, to be re-selected) and the
    relabelled labels. sigma: the within-cluster sd (ddof=0), 1 for clusters of fewer
    than two points (the paper's value for a new cluster), floored at
    ``sigma_floor * global sd`` of the feature.
    """
    nk = np.bincount(labels, minlength=K)
    keep = np.flatnonzero(nk)
    remap = np.full(K, -1)
    remap[keep] = np.arange(keep.size)
    labels = remap[labels]
    K2 = keep.size
    nk = nk[keep]
    if K2 <= 32:  # a dense membership matrix: one small GEMM beats sparse products
        Z = np.zeros((K2, data.n))
        Z[labels, np.arange(labels.size)] = 1.0
    else:
        Z = sparse.csr_matrix(
            (np.ones(labels.size), (labels, np.arange(labels.size))), shape=(K2, data.n)
        )
    P = data.P
    if P:
        s1 = np.asarray(Z @ data.X0)
        s2 = np.asarray(Z @ data.X0sq)
        cnt = (
            np.asarray(Z @ data.M)
            if data.M is not None
            else np.repeat(nk[:, None].astype(float), P, 1)
        )
        has = cnt > 0
        zeta = np.where(has, s1 / np.where(has, cnt, 1.0), data.col_mean[None, :])
        var = np.where(has, s2 / np.where(has, cnt, 1.0) - zeta * zeta, 0.0)
        sigma = np.sqrt(np.maximum(var, 0.0))
        sigma = np.maximum(sigma, sigma_floor * data.col_sd[None, :])
        sigma[nk < 2, :] = 1.0
        sigma[~has] = np.maximum(data.col_sd[None, :], 1e-12).repeat(K2, 0)[~has]
        sigma = np.where(sigma > 0, sigma, 1.0)
    else:
        zeta = sigma = np.zeros((K2, 0))
    if data.Q:
        prod = data.onehot.T @ Z.T  # (S, K)
        counts = (prod.toarray() if sparse.issparse(prod) else np.asarray(prod)).T
        nq = np.asarray(counts @ data.level_sum)  # (K, Q)
        log_eta = np.log(counts + data.alpha) - np.log(
            nq[:, data.level_q] + data.alpha * data.L[data.level_q]
        )
    else:
        counts = log_eta = np.zeros((K2, 0))
    return State(zeta, sigma, log_eta, counts, v[keep]), labels


def select(
    data: CraftData, st: State, *, m: float, budget: str, eps_c: float | None, eps_v: float | None
) -> np.ndarray:
    """Feature selection v for every cluster (fixed or approximate budget).

    Fixed: the ``round(m |Num|)`` numeric features with the lowest sigma and the
    ``round(m |Cat|)`` categorical features with the largest ``G_d - G_kd`` (rounding
    halves up; at least one of each type present; ties to the earlier feature).
    Approximate: categorical ``G_d - G_kd > eps_c G_d``; numeric ``sigma^2 < eps_v``.
    """
    P, Q, K = data.P, data.Q, st.K
    v = np.zeros((K, P + Q), dtype=bool)
    if P:
        if budget == "fixed":
            n_sel = min(P, max(1, round_half_up(m * P)))
            order = np.argsort(st.sigma, axis=1, kind="stable")[:, :n_sel]
            np.put_along_axis(v[:, :P], order, True, axis=1)
        else:
            v[:, :P] = st.sigma * st.sigma < eps_v
    if Q:
        G_d = -np.asarray((st.counts * data.log_eta0[None, :]) @ data.level_sum)
        G_kd = -np.asarray((st.counts * st.log_eta) @ data.level_sum)
        score = G_d - G_kd
        if budget == "fixed":
            n_sel = min(Q, max(1, round_half_up(m * Q)))
            order = np.argsort(-score, axis=1, kind="stable")[:, :n_sel]
            sub = np.zeros((K, Q), dtype=bool)
            np.put_along_axis(sub, order, True, axis=1)
            v[:, P:] = sub
        else:
            v[:, P:] = score > eps_c * G_d
    return v


def category_scores(data: CraftData, st: State) -> np.ndarray:
    """G_d - G_kd per cluster and categorical feature (n_k KL(eta_k || eta_0))."""
    G_d = -np.asarray((st.counts * data.log_eta0[None, :]) @ data.level_sum)
    G_kd = -np.asarray((st.counts * st.log_eta) @ data.level_sum)
    return G_d - G_kd


# ----------------------------------------------------------------------- the pass
def caf_pass(
    data: CraftData,
    st: State,
    threshold: float,
    consts: dict[str, float],
    rng: np.random.Generator,
    *,
    select_all: bool = False,
    sigma_override: float | None = None,
) -> tuple[np.ndarray, State, np.ndarray]:
    """One CAF assignment pass in data order, exact to the sequential rule.

    Returns (labels, state with opened clusters appended, cost of each point to
    the cluster it took).
    """
    F_delta = consts["F_delta"]
    a0, b0 = consts["a0"], consts["b0"]
    D = costs(data, st, F_delta, sigma_override=sigma_override)
    idx = D.argmin(axis=1)
    dmin = D[np.arange(data.n), idx]
    cand = np.flatnonzero(dmin > threshold)
    if cand.size == 0:
        return idx, st, dmin
    vsum = st.v.sum(axis=0).astype(float)
    K_now = st.K
    openers: list[int] = []
    new: State | None = None
    while cand.size:
        i = int(cand[0])
        p = (a0 * K_now + vsum) / (K_now * (a0 + b0))
        v_new = np.ones(p.size, dtype=bool) if select_all else rng.random(p.size) < p
        one = singleton(data, i, v_new)
        new = one if new is None else stack(new, one)
        openers.append(i)
        vsum += v_new
        K_now += 1
        rest = cand[1:]
        if rest.size:
            c = costs(data, one, F_delta, rows=rest, sigma_override=sigma_override)[:, 0]
            cand = rest[c > threshold]
        else:
            cand = rest
    op = np.asarray(openers)
    Dn = costs(data, new, F_delta, sigma_override=sigma_override)
    Dn[op[None, :] > np.arange(data.n)[:, None]] = np.inf  # not yet open when visited
    j = Dn.argmin(axis=1)
    dj = Dn[np.arange(data.n), j]
    better = dj < dmin  # ties keep the earlier (old) cluster, as a sequential argmin
    labels = np.where(better, st.K + j, idx)
    labels[op] = st.K + np.arange(op.size)
    cost = np.where(better, dj, dmin)
    cost[op] = Dn[op, np.arange(op.size)]
    return labels, stack(st, new), cost


def objective(
    data: CraftData,
    st: State,
    labels: np.ndarray,
    lam: float,
    consts: dict[str, float],
    own_cost: np.ndarray | None = None,
    sigma_override: float | None = None,
) -> float:
    """The CRAFT objective: discrepancies + (lambda + D F0) K + F_delta sum v."""
    if own_cost is None:
        own_cost = costs(data, st, consts["F_delta"], sigma_override=sigma_override)[
            np.arange(data.n), labels
        ]
    nv = st.v.sum(axis=1)
    discrepancy = float(own_cost.sum() - consts["F_delta"] * nv[labels].sum())
    D = data.P + data.Q
    return discrepancy + (lam + D * consts["F0"]) * st.K + consts["F_delta"] * float(nv.sum())


def discrepancy(data: CraftData, st: State, labels: np.ndarray, consts: dict[str, float]) -> float:
    """Numeric + categorical discrepancy terms only (the data-fit part of the objective)."""
    own = costs(data, st, consts["F_delta"])[np.arange(data.n), labels]
    return float(own.sum() - consts["F_delta"] * st.v.sum(axis=1)[labels].sum())


# ------------------------------------------------------------------------ the fit
def craft_fit(
    data: CraftData,
    lam: float,
    *,
    m: float,
    rho: float,
    budget: str = "fixed",
    eps_c: float | None = None,
    eps_v: float | None = None,
    sigma_floor: float = 0.05,
    max_iter: int = 100,
    shuffle: bool = False,
    select_all: bool = False,
    sigma_override: float | None = None,
    feature_terms: bool = True,
    max_clusters: int | None = None,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """One run of CRAFT (Algorithm 1 with CAF) at a given lambda.

    ``max_clusters``: stop early (``aborted=True``, not converged) once a pass leaves
    more clusters than this; lambda calibration only needs to know that lambda is
    too small, and such fits are the expensive ones.

    Returns labels (0-based), the final :class:`State`, objective trace (one value per
    pass, computed with the parameters the pass used), n_iter, converged.

    The degenerate methods share this loop: ``select_all=True`` keeps every feature
    (no selection, no Bernoulli draws); ``sigma_override`` fixes the sigma used in
    the costs (``1/sqrt(2)`` turns the numeric cost into the squared Euclidean
    distance of DP-means) while selection still ranks features by their real sd;
    ``feature_terms=False`` drops the F0 / F_delta terms (threshold = lambda).
    """
    consts = craft_constants(m, rho)
    if not feature_terms:
        consts = {**consts, "F0": 0.0, "F_delta": 0.0}
    with single_blas_thread():
        return _fit(
            data,
            lam,
            consts=consts,
            m=m,
            budget=budget,
            eps_c=eps_c,
            eps_v=eps_v,
            sigma_floor=sigma_floor,
            max_iter=max_iter,
            shuffle=shuffle,
            select_all=select_all,
            sigma_override=sigma_override,
            max_clusters=max_clusters,
            rng=rng,
        )


def _fit(
    data,
    lam,
    *,
    consts,
    m,
    budget,
    eps_c,
    eps_v,
    sigma_floor,
    max_iter,
    shuffle,
    select_all,
    sigma_override,
    max_clusters,
    rng,
):
    D = data.P + data.Q
    threshold = lam + D * consts["F0"]
    opts = {"select_all": select_all, "sigma_override": sigma_override}
    # Step 1: one cluster holding every point, centred at a random data point,
    # v_1 ~ Bernoulli(m)^D, sigma_1 = 1.
    start = int(rng.integers(data.n))
    v1 = np.ones(D, dtype=bool) if select_all else rng.random(D) < m
    st = singleton(data, start, v1)
    labels = np.zeros(data.n, dtype=np.int64)
    trace: list[float] = []
    converged = aborted = False
    it = 0
    for it in range(1, max_iter + 1):
        if shuffle:
            order = rng.permutation(data.n)
            sub = replace(data, **_permuted(data, order))
            new_labels_p, cand_state, cost_p = caf_pass(sub, st, threshold, consts, rng, **opts)
            new_labels = np.empty_like(new_labels_p)
            new_labels[order] = new_labels_p
            cost = np.empty_like(cost_p)
            cost[order] = cost_p
        else:
            new_labels, cand_state, cost = caf_pass(data, st, threshold, consts, rng, **opts)
        # objective of the configuration the pass produced, with the parameters it used
        nv = cand_state.v.sum(axis=1)
        used = np.flatnonzero(np.bincount(new_labels, minlength=cand_state.K))
        trace.append(
            float(cost.sum() - consts["F_delta"] * nv[new_labels].sum())
            + threshold * used.size
            + consts["F_delta"] * float(nv[used].sum())
        )
        st_new, new_labels = update(data, new_labels, cand_state.K, cand_state.v, sigma_floor)
        if select_all:
            v = np.ones_like(st_new.v)
        else:
            v = select(data, st_new, m=m, budget=budget, eps_c=eps_c, eps_v=eps_v)
        st_new = replace(st_new, v=v)
        same = it > 1 and st_new.K == st.K and np.array_equal(new_labels, labels)
        labels, st = new_labels, st_new
        if same:
            converged = True
            break
        if max_clusters is not None and st.K > max_clusters:
            aborted = True
            break
    trace.append(objective(data, st, labels, lam, consts, sigma_override=sigma_override))
    return {
        "labels": labels,
        "state": st,
        "objective": np.asarray(trace),
        "n_iter": it,
        "converged": converged,
        "aborted": aborted,
        "consts": consts,
        "start": start,
    }


def _permuted(data: CraftData, order: np.ndarray) -> dict[str, Any]:
    return {
        "X0": data.X0[order],
        "X0sq": data.X0sq[order],
        "M": None if data.M is None else data.M[order],
        "onehot": data.onehot[order],
        "codes": data.codes[order],
        "g0": data.g0[order],
    }


def neg_loglik(data: CraftData, st: State, labels: np.ndarray) -> float:
    """Negative log-likelihood of the generative model with the Gaussian normalisers kept.

    Selected numeric features: ``(x - zeta_kd)^2 / (2 sigma_kd^2) + log sigma_kd``;
    unselected ones: the same with the global mean and sd; categorical features:
    ``-log eta_kd(x)`` when selected, ``-log eta_0d(x)`` otherwise (the paper's terms
    I and II); missing cells contribute nothing. Used to compare restarts: the
    asymptotic numeric discrepancy alone equals ``n_k / 2`` per selected feature
    whatever the clustering, so it cannot tell a good partition from a bad one.
    """
    total = 0.0
    P = data.P
    if P:
        sd = np.where(data.col_sd > 0, data.col_sd, 1.0)
        for s in range(0, data.n, 8192):
            lab = labels[s : s + 8192]
            x = data.X0[s : s + 8192]
            sig = st.sigma[lab]
            sel = (x - st.zeta[lab]) ** 2 / (2 * sig * sig) + np.log(sig)
            uns = (x - data.col_mean) ** 2 / (2 * sd * sd) + np.log(sd)
            term = np.where(st.v[lab, :P], sel, uns)
            if data.M is not None:
                term = term * data.M[s : s + 8192]
            total += float(term.sum())
    if data.Q:
        vcat = st.v[:, P:]
        A = (data.log_eta0[None, :] - st.log_eta) * vcat[:, data.level_q]
        per = np.asarray(data.onehot @ A.T)[np.arange(data.n), labels]
        total += float(per.sum() + data.g0.sum())
    return total
