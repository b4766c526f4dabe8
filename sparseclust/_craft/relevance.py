"""Per-variable relevance of a CRAFT fit: what selecting a variable saves a cluster.

For cluster ``k`` and variable ``d`` the relevance is the drop in the CRAFT objective
when ``v_kd`` goes from 0 (the variable follows the whole data's distribution in
cluster ``k``) to 1 (it follows the cluster's own), everything else fixed:

    R_kd = sum over the cluster's rows of [cost unselected - cost selected] - F_delta

* categorical ``d``: ``-log eta_0d(x) + log eta_kd(x)`` summed over the rows, i.e.
  ``G_d - G_kd`` of the paper's selection step (``n_k KL(eta_kd || eta_0d)`` up to the
  smoothing), exactly the change of the CAF cost ``d_nk`` (Algorithm 2);
* numeric ``d``: the generative model's Gaussian terms (paper section 2, the density
  ``f(x_nd | v_kd)`` with its normaliser ``Z_kd``): ``(x - zeta_d)^2 / (2 sigma_d^2) +
  log sigma_d`` unselected (global mean and sd) minus ``(x - zeta_kd)^2 / (2
  sigma_kd^2) + log sigma_kd`` selected (``n_k KL(N(zeta_kd, sigma_kd) || N(zeta_d,
  sigma_d))`` for an unfloored sigma). The asymptotic CAF cost keeps only the selected
  term, which sums to ``n_k / 2`` for every feature and every partition, so it cannot
  rank numeric variables; the terms used here are those of the model's negative
  log-likelihood, the criterion the restarts are compared by
  (:func:`~sparseclust._craft.core.neg_loglik`).

Both are log-likelihood ratios in nats, so numeric and categorical relevances are on
one scale, and a numeric relevance does not depend on the variable's units (nor on
``scale=``). ``F_delta`` is the feature-control term, paid once per selected cell (0
at ``m = 0.5`` with the default ``rho``). Missing cells add nothing.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from . import core as core

__all__ = ["relevance_matrix"]

#: Rows per piece of the numeric sums.
_PIECE = 8192


def relevance_matrix(
    data: core.CraftData,
    st: core.State,
    labels: np.ndarray,
    F_delta: float,
    sigma_override: float | None = None,
) -> np.ndarray:
    """(K, P + Q) relevance of every cluster and feature (numeric first), see the module.

    ``labels``: 0-based cluster of each row of ``data``. ``sigma_override`` (DP-RF:
    ``1/sqrt(2)``) replaces the clusters' and the global sds alike: a numeric
    relevance is then the cluster's between-cluster sum of squares on the feature,
    ``n_k (zeta_kd - zeta_d)^2`` for a fully observed feature.

    Examples
    --------
    >>> import numpy as np
    >>> d = core.prepare(np.array([[0.0], [0.2], [5.0], [5.2]]), np.zeros((4, 0)), [], alpha=0.01)
    >>> lab = np.array([0, 0, 1, 1])
    >>> st, _ = core.update(d, lab, 2, np.ones((2, 1), dtype=bool), 0.05)
    >>> bool((relevance_matrix(d, st, lab, 0.0) > 0).all())
    True
    """
    labels = np.asarray(labels, dtype=np.intp)
    K, P = st.K, data.P
    out = np.zeros((K, P + data.Q))
    if P:
        out[:, :P] = _numeric(data, st, labels, sigma_override)
    if data.Q:
        out[:, P:] = core.category_scores(data, st)
    return out - F_delta


def _numeric(
    data: core.CraftData, st: core.State, labels: np.ndarray, sigma_override: float | None
) -> np.ndarray:
    """(K, P): per cluster, the summed unselected minus selected Gaussian terms."""
    K, P = st.K, data.P
    if sigma_override is None:
        sig_k = st.sigma
        sd = np.where(data.col_sd > 0, data.col_sd, 1.0)
    else:
        sig_k = np.full((K, P), float(sigma_override))
        sd = np.full(P, float(sigma_override))
    out = np.zeros((K, P))
    for a in range(0, data.n, _PIECE):
        b = min(a + _PIECE, data.n)
        lab = labels[a:b]
        x = data.X0[a:b]
        sig = sig_k[lab]
        sel = (x - st.zeta[lab]) ** 2 / (2 * sig * sig) + np.log(sig)
        uns = (x - data.col_mean) ** 2 / (2 * sd * sd) + np.log(sd)
        term = uns - sel
        if data.M is not None:
            term *= data.M[a:b]
        Z = sparse.csr_matrix((np.ones(b - a), (lab, np.arange(b - a))), shape=(K, b - a))
        out += Z @ term
    return out
