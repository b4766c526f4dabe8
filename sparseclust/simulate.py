"""Synthetic designs of the CRAFT paper (Garg, Rudin & Jaakkola, AISTATS 2016, section 4),
of the sparse k-means simulation (Witten & Tibshirani 2010, as in the slides) and of
convex covariate clustering (Andrade, Fukumizu & Okajima, section 4).

Each simulator returns a :class:`Simulated`: the data (columns ``"f1"`` .. ``"fD"``),
the true 0-based labels and the true cluster subspaces as a boolean clusters x
features DataFrame, ready for :func:`sparseclust.plotting.plot_subspaces`.
:func:`covariate_sim` returns its subclass :class:`CovariateSimulated` (covariates
``"x1"`` .. ``"xd"`` as in the paper, labels = classes, plus the true covariate
clustering and covariance).

:func:`make_customers` is not a paper's design (so not in :data:`DESIGNS`): a
customer-like table of issue 32 with segments carried by two numeric and two
categorical columns, eight irrelevant columns, and on request the messy columns real
tables carry (an identifier, free text, numbers stored as text, many-level cities, an
integer code).

Binary designs have pandas ``bool`` columns (read as categorical by the package);
numeric designs have ``float64`` columns. Rows come grouped by cluster (cluster 0
first), as in the paper's figures; ``shuffle=True`` permutes them. Every random step
uses ``rng`` (None, an int seed or a ``numpy.random.Generator``).

The paper gives exact layouts only for Figs. 2(a) and 3(a); the layouts chosen for
the other designs are listed in each docstring (features numbered from 1, clusters
from 0) and in the table below.

==============  ======  =====  ==========================  ============================
design          type    D      subspace sizes              what it tests
==============  ======  =====  ==========================  ============================
craft_fig2a     binary  24     8 / 8 / 8                   disjoint subspaces
craft_fig2c     binary  24     8 / 8 / 8                   fragments, overlap, a noisy
                                                           feature, unequal sizes
craft_fig3a     numeric 36     12 / 12 / 13                overlap of clusters 1 and 2
craft_fig3c     numeric 36     12 / 12 / 12                non-contiguous subspace,
                                                           containment, extra features
craft_fig4a     binary  30     9 / 16 / 8                  approximate budget (eps_c)
craft_fig4c     numeric 30     9 / 16 / 8                  approximate budget (eps_v)
sparse_sim      numeric 100    50 / 50 / 50                sparse k-means simulation
sparse_motiv.   numeric 2      1 / 1                       correlated 2-D motivating case
covariate_sim   numeric 10 m   4 classes, 10 covariate     covariate clustering for
                               clusters of m               classification (returns a
                                                           CovariateSimulated)
==============  ======  =====  ==========================  ============================

Examples
--------
>>> from sparseclust.simulate import craft_fig2a, list_designs
>>> sim = craft_fig2a(rng=0)
>>> sim
Simulated(design='craft_fig2a', n_obs=300, n_features=24, cluster_sizes=[100, 100, 100], subspace_sizes=[8, 8, 8])
>>> sim.subspaces.loc[0].loc[lambda s: s].index.tolist()
['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8']
>>> list_designs()
['covariate_sim', 'craft_fig2a', 'craft_fig2c', 'craft_fig3a', 'craft_fig3c', 'craft_fig4a', 'craft_fig4c', 'sparse_motivating', 'sparse_sim']
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ._data.params import as_rng, check_bool, check_choice, check_int, check_number

__all__ = [
    "DESIGNS",
    "CovariateSimulated",
    "Simulated",
    "craft_fig2a",
    "craft_fig2c",
    "craft_fig3a",
    "craft_fig3c",
    "craft_fig4a",
    "craft_fig4c",
    "covariate_sim",
    "list_designs",
    "make_customers",
    "sparse_motivating",
    "sparse_sim",
]


@dataclass(frozen=True, eq=False, repr=False)
class Simulated:
    """A simulated data set with its known clusters and cluster subspaces.

    Attributes
    ----------
    data : DataFrame
        ``n_obs`` x ``D`` features named ``"f1"`` .. ``"fD"``: ``bool`` columns for
        binary designs, ``float64`` for numeric ones (:func:`make_customers`: named
        columns of mixed types).
    labels : Series of int64
        True 0-based cluster of each row (name ``"cluster"``, same index as ``data``).
    subspaces : DataFrame of bool
        One row per true cluster ``0 .. K-1`` (index name ``"cluster"``), one column
        per feature; True where the feature belongs to the cluster's subspace.
    design : str
        Name of the simulator, e.g. ``"craft_fig2a"``.
    params : dict
        The parameters of the simulation (``rng`` excluded).

    Examples
    --------
    >>> from sparseclust.simulate import craft_fig3a
    >>> sim = craft_fig3a(n_per_cluster=5, rng=1)
    >>> sim.frame().shape
    (15, 37)
    >>> sim.subspaces.sum(axis=1).tolist()
    [12, 12, 13]
    """

    data: pd.DataFrame
    labels: pd.Series
    subspaces: pd.DataFrame
    design: str
    params: dict

    def frame(self) -> pd.DataFrame:
        """The data with the true labels appended as a ``"cluster"`` column (a copy).

        Returns
        -------
        pandas.DataFrame
            ``data`` and the ``"cluster"`` column.

        Examples
        --------
        >>> from sparseclust.simulate import craft_fig2a
        >>> craft_fig2a(n_per_cluster=2, rng=0).frame()["cluster"].tolist()
        [0, 0, 1, 1, 2, 2]
        """
        out = self.data.copy()
        out["cluster"] = self.labels
        return out

    @property
    def n_clusters(self) -> int:
        """Number of true clusters.

        Examples
        --------
        >>> from sparseclust.simulate import craft_fig2a
        >>> craft_fig2a(n_per_cluster=2, rng=0).n_clusters
        3
        """
        return int(self.subspaces.shape[0])

    def __repr__(self) -> str:
        sizes = self.labels.value_counts().reindex(range(self.n_clusters), fill_value=0)
        return (
            f"Simulated(design={self.design!r}, n_obs={self.data.shape[0]}, "
            f"n_features={self.data.shape[1]}, cluster_sizes={sizes.tolist()}, "
            f"subspace_sizes={self.subspaces.sum(axis=1).astype(int).tolist()})"
        )


# ----------------------------------------------------------------------------- layouts
# Features are numbered from 1 as in the paper; clusters from 0.
def _span(first: int, last: int) -> list[int]:
    return list(range(first, last + 1))


_LAYOUTS: dict[str, tuple[int, list[list[int]]]] = {
    "craft_fig2a": (24, [_span(1, 8), _span(9, 16), _span(17, 24)]),
    "craft_fig2c": (
        24,
        [_span(1, 4) + _span(14, 17), _span(5, 12), _span(12, 13) + _span(19, 24)],
    ),
    "craft_fig3a": (36, [_span(1, 12), _span(13, 24), _span(22, 34)]),
    "craft_fig3c": (36, [_span(1, 12), _span(9, 14) + _span(25, 30), _span(21, 32)]),
    "craft_fig4a": (30, [_span(1, 9), _span(12, 27), _span(8, 11) + _span(20, 23)]),
    "craft_fig4c": (30, [_span(1, 9), _span(12, 27), _span(8, 11) + _span(20, 23)]),
}


def _subspaces(design: str) -> pd.DataFrame:
    n_features, blocks = _LAYOUTS[design]
    S = np.zeros((len(blocks), n_features), dtype=bool)
    for k, feats in enumerate(blocks):
        S[k, np.asarray(feats) - 1] = True
    return pd.DataFrame(
        S,
        index=pd.RangeIndex(len(blocks), name="cluster"),
        columns=[f"f{j + 1}" for j in range(n_features)],
    )


# ----------------------------------------------------------------------------- checks
def _check_sizes(sizes: Any, k: int) -> tuple[int, ...]:
    if isinstance(sizes, str | bytes) or not isinstance(sizes, Sequence | np.ndarray):
        raise TypeError(
            f"sizes must be a sequence of {k} positive integers (one per cluster); got "
            f"sizes={sizes!r}. Use e.g. sizes=(120, 80, 100)."
        )
    if len(sizes) != k:
        raise ValueError(
            f"sizes must have {k} entries (one per cluster); got {len(sizes)} in "
            f"sizes={list(sizes)!r}. Use e.g. sizes=(120, 80, 100)."
        )
    return tuple(check_int(f"sizes[{i}]", s, min=1) for i, s in enumerate(sizes))


def _check_means(means: Any, k: int) -> tuple[float, ...]:
    if isinstance(means, str | bytes | numbers.Number) or not isinstance(
        means, Sequence | np.ndarray
    ):
        raise TypeError(
            f"means must be a sequence of {k} numbers (one per cluster); got means={means!r}. "
            "Use e.g. means=(1.0, 5.0, 10.0)."
        )
    if len(means) != k:
        raise ValueError(
            f"means must have {k} entries (one per cluster); got {len(means)} in "
            f"means={list(means)!r}. Use e.g. means=(1.0, 5.0, 10.0)."
        )
    return tuple(check_number(f"means[{i}]", m) for i, m in enumerate(means))


def _check_prob(name: str, value: Any) -> float:
    return check_number(name, value, min=0.0, max=1.0)


def _check_sd(name: str, value: Any) -> float:
    return check_number(name, value, min=0.0, min_inclusive=False)


# ----------------------------------------------------------------------------- engines
def _labels(sizes: tuple[int, ...]) -> np.ndarray:
    return np.repeat(np.arange(len(sizes)), sizes)


def _finish(
    design: str,
    values: np.ndarray,
    labels: np.ndarray,
    subspaces: pd.DataFrame,
    params: dict,
    shuffle: bool,
    gen: np.random.Generator,
) -> Simulated:
    if shuffle:
        perm = gen.permutation(labels.size)
        values, labels = values[perm], labels[perm]
    index = pd.RangeIndex(labels.size)
    data = pd.DataFrame(values, index=index, columns=subspaces.columns.copy())
    lab = pd.Series(labels.astype(np.int64), index=index, name="cluster")
    return Simulated(data=data, labels=lab, subspaces=subspaces, design=design, params=params)


def _binary(
    design: str,
    sizes: tuple[int, ...],
    size_params: dict,
    p_signal: Any,
    p_noise: Any,
    shuffle: Any,
    rng: Any,
) -> Simulated:
    """A binary design: Bernoulli(``p_signal``) inside a point's cluster subspace,
    Bernoulli(``p_noise``) outside. ``size_params`` (the checked sizes) open ``params``."""
    p1 = _check_prob("p_signal", p_signal)
    p0 = _check_prob("p_noise", p_noise)
    shuffle = check_bool("shuffle", shuffle)
    params = {**size_params, "p_signal": p1, "p_noise": p0, "shuffle": shuffle}
    gen = as_rng(rng)
    S = _subspaces(design)
    labels = _labels(sizes)
    prob = np.where(S.to_numpy()[labels], p1, p0)
    values = gen.random(prob.shape) < prob
    return _finish(design, values, labels, S, params, shuffle, gen)


def _equal_binary(
    design: str, n_per_cluster: Any, p_signal: Any, p_noise: Any, shuffle: Any, rng: Any
) -> Simulated:
    """A binary design of three clusters of ``n_per_cluster`` points."""
    n = check_int("n_per_cluster", n_per_cluster, min=1)
    sizes = (n, n, n)
    params = {"n_per_cluster": n, "sizes": sizes}
    return _binary(design, sizes, params, p_signal, p_noise, shuffle, rng)


def _numeric(
    design: str, n_per_cluster: Any, noise_sd: Any, means: Any, shuffle: Any, rng: Any
) -> Simulated:
    """A numeric design of three clusters of ``n_per_cluster`` points: N(the cluster's
    mean, 1) inside a point's cluster subspace, N(0, ``noise_sd``^2) outside."""
    n = check_int("n_per_cluster", n_per_cluster, min=1)
    sd = _check_sd("noise_sd", noise_sd)
    mu = _check_means(means, 3)
    shuffle = check_bool("shuffle", shuffle)
    sizes = (n, n, n)
    params = {"n_per_cluster": n, "sizes": sizes, "noise_sd": sd, "means": mu, "shuffle": shuffle}
    gen = as_rng(rng)
    S = _subspaces(design)
    labels = _labels(sizes)
    inside = S.to_numpy()[labels]
    loc = np.where(inside, np.asarray(mu)[labels][:, None], 0.0)
    scale = np.where(inside, 1.0, sd)
    values = loc + scale * gen.standard_normal(inside.shape)
    return _finish(design, values, labels, S, params, shuffle, gen)


# ----------------------------------------------------------------------------- designs
def craft_fig2a(
    n_per_cluster: int = 100,
    *,
    p_signal: float = 1.0,
    p_noise: float = 0.1,
    shuffle: bool = False,
    rng: Any = None,
) -> Simulated:
    """Fig. 2(a): binary, 3 equal clusters with disjoint 8-feature subspaces (D = 24).

    Layout (features numbered from 1): cluster 0 owns f1-f8, cluster 1 f9-f16,
    cluster 2 f17-f24. Inside its own subspace a point's features are
    Bernoulli(``p_signal``); every other feature is Bernoulli(``p_noise``). The
    default ``p_signal=1`` gives the solid blocks of the paper's figure. CRAFT's fixed
    budget with ``m = 1/3`` selects round(24/3) = 8 features per cluster, the exact
    subspace size.

    Parameters
    ----------
    n_per_cluster : int, default 100
        Points per cluster (the paper: 100, so 300 x 24).
    p_signal, p_noise : float in [0, 1]
        Probability of ``True`` inside / outside a point's cluster subspace.
    shuffle : bool, default False
        Permute the rows (otherwise grouped by cluster, cluster 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        ``data`` has 24 ``bool`` columns ``"f1"`` .. ``"f24"``.

    Examples
    --------
    >>> sim = craft_fig2a(rng=0)
    >>> sim.data.shape, sim.data.dtypes.unique().tolist()
    ((300, 24), [dtype('bool')])
    >>> sim.data[sim.labels == 0].mean().round(2).iloc[[0, 7, 8]].tolist()
    [1.0, 1.0, 0.13]
    """
    return _equal_binary("craft_fig2a", n_per_cluster, p_signal, p_noise, shuffle, rng)


def craft_fig2c(
    sizes: Sequence[int] = (120, 80, 100),
    *,
    p_signal: float = 1.0,
    p_noise: float = 0.1,
    shuffle: bool = False,
    rng: Any = None,
) -> Simulated:
    """Fig. 2(c): binary, unequal clusters, fragmented and overlapping subspaces (D = 24).

    The paper lists the modifications of Fig. 2(a) but not the numbers; this layout
    (features numbered from 1) has every subspace of exactly 8 features, so CRAFT's
    fixed budget with ``m = 1/3`` (round(24/3) = 8) is the right budget:

    * cluster 0 (120 points): f1-f4 and f14-f17 (fragmented, two blocks of 4);
    * cluster 1 (80 points): f5-f12 (contiguous);
    * cluster 2 (100 points): f12-f13 and f19-f24 (fragmented, 2 + 6); f12 is shared
      with cluster 1 (the overlap between the second and third clusters);
    * f18 belongs to no subspace: Bernoulli(``p_noise``) for every point (the
      completely noisy feature).

    Inside its own subspace a point's features are Bernoulli(``p_signal``), every
    other feature Bernoulli(``p_noise``).

    With D = 24, one noisy feature and three 8-feature subspaces the overlap can only
    be one feature, and it makes the design hard for the fixed budget: even with the
    true labels, the rule "the 8 features with the largest ``G_d - G_kd``"
    (pseudo-count 0.01) missed at least one subspace on 22% of 300 seeds at the
    default sizes (cluster 1 on 14%, cluster 2 on 6%: the absence of another
    cluster's block outscores the shared f12; cluster 0 on 4%: the common f12, at
    share about 0.1 in cluster 0, outscores one of its own features). These sizes did
    about best among the splits of 300 points tried (60/100/140 failed on every seed
    tried), so keep them unless you want a harder design.

    Parameters
    ----------
    sizes : sequence of 3 int, default (120, 80, 100)
        Points in clusters 0, 1, 2.
    p_signal, p_noise : float in [0, 1]
        Probability of ``True`` inside / outside a point's cluster subspace.
    shuffle : bool, default False
        Permute the rows (otherwise grouped by cluster, cluster 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        The data, the true labels and the true subspaces.

    Examples
    --------
    >>> sim = craft_fig2c(rng=0)
    >>> sim.labels.value_counts().sort_index().tolist()
    [120, 80, 100]
    >>> sim.subspaces.sum(axis=1).tolist(), sim.subspaces.columns[~sim.subspaces.any()].tolist()
    ([8, 8, 8], ['f18'])
    """
    sz = _check_sizes(sizes, 3)
    return _binary("craft_fig2c", sz, {"sizes": sz}, p_signal, p_noise, shuffle, rng)


def craft_fig3a(
    n_per_cluster: int = 100,
    *,
    noise_sd: float = 3.0,
    means: Sequence[float] = (1.0, 5.0, 10.0),
    shuffle: bool = False,
    rng: Any = None,
) -> Simulated:
    """Fig. 3(a): numeric, 3 equal clusters, subspaces f1-f12, f13-f24, f22-f34 (D = 36).

    Cluster 0's features f1-f12 are N(1, 1), cluster 1's f13-f24 N(5, 1) and cluster
    2's f22-f34 N(10, 1) (13 features; f22-f24 are shared with cluster 1: mean 10 for
    cluster-2 points, 5 for cluster-1 points). Every feature outside a point's
    cluster subspace is N(0, ``noise_sd``^2); f35-f36 are in no subspace.
    With ``m = 1/3`` the fixed budget is round(36/3) = 12, one short of cluster 2's
    13 features: exact recovery of that cluster is impossible by construction (expect
    12 of its 13 features, none extra: so it went, given the true labels, on all of
    300 seeds), or use the approximate budget.

    Parameters
    ----------
    n_per_cluster : int, default 100
        Points per cluster (the paper: 100, so 300 x 36).
    noise_sd : float > 0, default 3
        Standard deviation of the features outside a point's subspace.
    means : sequence of 3 float, default (1, 5, 10)
        Mean of clusters 0, 1, 2 on their subspace features (standard deviation 1).
    shuffle : bool, default False
        Permute the rows (otherwise grouped by cluster, cluster 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        ``data`` has 36 ``float64`` columns.

    Examples
    --------
    >>> sim = craft_fig3a(rng=0)
    >>> sim.data.shape, sim.subspaces.sum(axis=1).tolist()
    ((300, 36), [12, 12, 13])
    >>> sim.data.groupby(sim.labels)["f23"].mean().round().tolist()
    [0.0, 5.0, 10.0]
    """
    return _numeric("craft_fig3a", n_per_cluster, noise_sd, means, shuffle, rng)


def craft_fig3c(
    n_per_cluster: int = 100,
    *,
    noise_sd: float = 3.0,
    means: Sequence[float] = (1.0, 5.0, 10.0),
    shuffle: bool = False,
    rng: Any = None,
) -> Simulated:
    """Fig. 3(c): numeric, a non-contiguous subspace, containment, extra features (D = 36).

    Layout (features numbered from 1), every subspace exactly 12 features so the fixed
    budget with ``m = 1/3`` (round(36/3) = 12) is right:

    * cluster 0: f1-f12, N(1, 1);
    * cluster 1: f9-f14 and f25-f30, N(5, 1) (non-contiguous: the first part overlaps
      cluster 0 on f9-f12, the second lies wholly inside cluster 2's subspace);
    * cluster 2: f21-f32, N(10, 1);
    * f15-f20 and f33-f36 (10 features) belong to no subspace.

    Every feature outside a point's cluster subspace is N(0, ``noise_sd ** 2``). Given
    the true labels, the fixed budget (the 12 features of lowest within-cluster sd)
    recovered every subspace exactly on all of 300 seeds.

    Parameters
    ----------
    n_per_cluster : int, default 100
        Points per cluster.
    noise_sd : float > 0, default 3
        Standard deviation of the features outside a point's subspace.
    means : sequence of 3 float, default (1, 5, 10)
        Mean of clusters 0, 1, 2 on their subspace features (standard deviation 1).
    shuffle : bool, default False
        Permute the rows (otherwise grouped by cluster, cluster 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        The data, the true labels and the true subspaces.

    Examples
    --------
    >>> sim = craft_fig3c(rng=0)
    >>> sim.subspaces.sum(axis=1).tolist(), int((~sim.subspaces.any()).sum())
    ([12, 12, 12], 10)
    >>> sim.subspaces.loc[1].loc[lambda s: s].index.tolist()
    ['f9', 'f10', 'f11', 'f12', 'f13', 'f14', 'f25', 'f26', 'f27', 'f28', 'f29', 'f30']
    """
    return _numeric("craft_fig3c", n_per_cluster, noise_sd, means, shuffle, rng)


def craft_fig4a(
    n_per_cluster: int = 100,
    *,
    p_signal: float = 1.0,
    p_noise: float = 0.1,
    shuffle: bool = False,
    rng: Any = None,
) -> Simulated:
    """Fig. 4(a): binary, subspaces of 9, 16 and 8 features for the approximate budget (D = 30).

    Layout (features numbered from 1):

    * cluster 0: f1-f9 (9 features);
    * cluster 1: f12-f27 (16 features);
    * cluster 2: f8-f11 and f20-f23 (8 features in two halves of 4: the first overlaps
      cluster 0 on f8-f9, the second lies wholly inside cluster 1's subspace);
    * f28-f30 belong to no subspace.

    Inside its own subspace a point's features are Bernoulli(``p_signal``), every
    other feature Bernoulli(``p_noise``). No single fraction ``m`` fits all three
    clusters: this is the design for the approximate budget (``eps_c``). Given the
    true labels, the approximate rule ``G_d - G_kd > eps_c G_d`` (pseudo-count 0.01)
    recovered every subspace on 299 of 300 seeds for ``eps_c`` from 0.95 to 0.999 and
    on 98% at 0.9; lower values (the paper reports 0.76) often also select a feature
    shared by the two other clusters (f8-f9, f20-f23; global share of ``True`` about
    0.7): recovery on 71% of seeds at 0.8 and 25% at 0.76.

    Parameters
    ----------
    n_per_cluster : int, default 100
        Points per cluster.
    p_signal, p_noise : float in [0, 1]
        Probability of ``True`` inside / outside a point's cluster subspace.
    shuffle : bool, default False
        Permute the rows (otherwise grouped by cluster, cluster 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        The data, the true labels and the true subspaces.

    Examples
    --------
    >>> sim = craft_fig4a(rng=0)
    >>> sim.data.shape, sim.subspaces.sum(axis=1).tolist()
    ((300, 30), [9, 16, 8])
    """
    return _equal_binary("craft_fig4a", n_per_cluster, p_signal, p_noise, shuffle, rng)


def craft_fig4c(
    n_per_cluster: int = 100,
    *,
    noise_sd: float = 3.0,
    means: Sequence[float] = (1.0, 5.0, 10.0),
    shuffle: bool = False,
    rng: Any = None,
) -> Simulated:
    """Fig. 4(c): numeric analogue of Fig. 4(a), subspaces of 9, 16 and 8 features (D = 30).

    Same layout as :func:`craft_fig4a` (features numbered from 1): cluster 0 f1-f9,
    cluster 1 f12-f27, cluster 2 f8-f11 and f20-f23 (overlapping cluster 0 on f8-f9,
    wholly inside cluster 1 on f20-f23), f28-f30 in no subspace. Subspace features
    are N(mean of the point's cluster, 1), means 1, 5, 10 by default; every other
    feature is N(0, ``noise_sd``^2). Given the true labels, the approximate rule
    ``sigma_kd^2 < eps_v`` recovered every subspace on all of 300 seeds for ``eps_v``
    from 3 to 4 and on 299 at 5; at 6 (the paper's upper end) a noise feature's
    sample variance (9 on average over 100 points) dips below the threshold on about
    one seed in four.

    Parameters
    ----------
    n_per_cluster : int, default 100
        Points per cluster.
    noise_sd : float > 0, default 3
        Standard deviation of the features outside a point's subspace.
    means : sequence of 3 float, default (1, 5, 10)
        Mean of clusters 0, 1, 2 on their subspace features (standard deviation 1).
    shuffle : bool, default False
        Permute the rows (otherwise grouped by cluster, cluster 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        The data, the true labels and the true subspaces.

    Examples
    --------
    >>> sim = craft_fig4c(rng=0)
    >>> sim.data.dtypes.unique().tolist(), sim.subspaces.sum(axis=1).tolist()
    ([dtype('float64')], [9, 16, 8])
    """
    return _numeric("craft_fig4c", n_per_cluster, noise_sd, means, shuffle, rng)


# ------------------------------------------------------------------ sparse k-means
def sparse_sim(
    n_per_cluster: int = 20,
    p: int = 100,
    q: int = 50,
    *,
    means: Any = (0.0, 0.6, 1.2),
    shuffle: bool = False,
    rng: Any = None,
) -> Simulated:
    """The sparse k-means simulation of Witten & Tibshirani (2010), as in the slides.

    ``len(means)`` clusters of ``n_per_cluster`` rows; ``X_ij ~ N(mu_ij, 1)`` with
    ``mu_ij = means[k]`` for a row of cluster ``k`` on the first ``q`` features and
    ``0`` on the other ``p - q``. Every cluster's subspace is the first ``q``
    features. Columns ``f1`` .. ``fp`` (float64).

    Parameters
    ----------
    n_per_cluster : int, default 20
        Rows per cluster.
    p : int, default 100
        Number of features.
    q : int, default 50
        Number of informative features (the first ``q``).
    means : sequence of float, default (0.0, 0.6, 1.2)
        Mean of each cluster on the informative features; one cluster per value.
    shuffle : bool, default False
        Permute the rows (otherwise grouped by cluster, cluster 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        The data, the true labels and the true subspaces.

    Examples
    --------
    >>> sim = sparse_sim(rng=0)
    >>> sim.data.shape, sim.labels.value_counts().tolist()
    ((60, 100), [20, 20, 20])
    >>> int(sim.subspaces.iloc[0].sum())
    50
    """
    n = check_int("n_per_cluster", n_per_cluster, min=1)
    p = check_int("p", p, min=1)
    q = check_int("q", q, min=0, max=p)
    mu = tuple(float(m) for m in np.atleast_1d(np.asarray(means, dtype=float)))
    if len(mu) < 1 or not np.isfinite(mu).all():
        raise ValueError(f"means must be finite numbers, one per cluster; got {means!r}.")
    k = len(mu)
    cols = pd.Index([f"f{j}" for j in range(1, p + 1)])
    S = pd.DataFrame(
        np.tile(np.arange(p) < q, (k, 1)), columns=cols, index=pd.RangeIndex(k, name="cluster")
    )
    gen = as_rng(rng)
    labels = _labels((n,) * k)
    values = gen.standard_normal((labels.size, p))
    values[:, :q] += np.asarray(mu)[labels][:, None]
    params = {"n_per_cluster": n, "p": p, "q": q, "means": mu, "shuffle": shuffle}
    return _finish("sparse_sim", values, labels, S, params, shuffle, gen)


def sparse_motivating(
    n_per_cluster: int = 100,
    *,
    shift: float = 0.5,
    rho: float = 0.78,
    shuffle: bool = False,
    rng: Any = None,
) -> Simulated:
    """The slides' motivating example: two 2-D Gaussians with correlated features.

    Means ``(-shift, 0)`` and ``(shift, 0)``, covariance ``[[1, rho], [rho, 1]]``:
    the clusters differ on ``f1`` only, but standard k-means splits along the long
    axis of the ellipses. Both subspaces are ``{f1}``.

    Parameters
    ----------
    n_per_cluster : int, default 100
        Rows per cluster.
    shift : float, default 0.5
        Half the distance between the means along ``f1``.
    rho : float in (-1, 1), default 0.78
        Correlation of ``f1`` and ``f2`` within a cluster.
    shuffle : bool, default False
        Permute the rows (otherwise grouped by cluster, cluster 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        The data, the true labels and the true subspaces.

    Examples
    --------
    >>> sim = sparse_motivating(rng=0)
    >>> sim.data.shape, sim.subspaces.to_numpy().tolist()
    ((200, 2), [[True, False], [True, False]])
    """
    n = check_int("n_per_cluster", n_per_cluster, min=1)
    rho = check_number("rho", rho, min=-1, max=1, min_inclusive=False, max_inclusive=False)
    shift = check_number("shift", shift)
    gen = as_rng(rng)
    labels = _labels((n, n))
    chol = np.linalg.cholesky(np.array([[1.0, rho], [rho, 1.0]]))
    values = gen.standard_normal((2 * n, 2)) @ chol.T
    values[:, 0] += np.where(labels == 0, -shift, shift)
    cols = pd.Index(["f1", "f2"])
    S = pd.DataFrame(
        [[True, False], [True, False]], columns=cols, index=pd.RangeIndex(2, name="cluster")
    )
    params = {"n_per_cluster": n, "shift": shift, "rho": rho, "shuffle": shuffle}
    return _finish("sparse_motivating", values, labels, S, params, shuffle, gen)


# ------------------------------------------------------------- covariate clustering
@dataclass(frozen=True, eq=False, repr=False)
class CovariateSimulated(Simulated):
    """A simulated classification data set with a known clustering of its covariates.

    Besides the :class:`Simulated` fields (``labels`` are the classes, name
    ``"class"``; ``subspaces`` has one row per class, True on the covariates whose
    mean is non-zero in that class):

    Attributes
    ----------
    covariate_labels : Series of int64
        True cluster ``0 .. 9`` of each covariate (index ``x1 .. xd``, name
        ``"cluster"``).
    sigma : DataFrame
        The true covariance ``Sigma*`` (d x d, index and columns ``x1 .. xd``); the
        authors' experiments pass it (off the diagonal) as the similarity ``S``.
    means : DataFrame
        The class means ``B*`` (classes x covariates).

    Examples
    --------
    >>> sim = covariate_sim(8, m=1, rng=0)
    >>> sim.covariate_labels.tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    >>> sim.frame().columns[-1]
    'class'
    """

    covariate_labels: pd.Series
    sigma: pd.DataFrame
    means: pd.DataFrame

    def frame(self) -> pd.DataFrame:
        """The data with the classes appended as a ``"class"`` column (a copy).

        Returns
        -------
        pandas.DataFrame
            ``data`` and the ``"class"`` column.

        Examples
        --------
        >>> covariate_sim(8, m=1, rng=0).frame()["class"].tolist()
        [0, 0, 1, 1, 2, 2, 3, 3]
        """
        out = self.data.copy()
        out["class"] = self.labels
        return out

    @property
    def n_clusters(self) -> int:
        """Number of classes.

        Examples
        --------
        >>> from sparseclust.simulate import covariate_sim
        >>> covariate_sim(8, m=1, rng=0).n_clusters
        4
        """
        return int(self.means.shape[0])

    def __repr__(self) -> str:
        sizes = self.labels.value_counts().reindex(range(self.n_clusters), fill_value=0)
        return (
            f"CovariateSimulated(design={self.design!r}, variant={self.params['variant']!r}, "
            f"n_obs={self.data.shape[0]}, n_covariates={self.data.shape[1]}, "
            f"class_sizes={sizes.tolist()}, "
            f"covariate_clusters={int(self.covariate_labels.max()) + 1})"
        )


def covariate_sim(
    n: int = 400,
    m: int = 4,
    *,
    variant: str = "paper",
    shuffle: bool = False,
    rng: Any = None,
) -> CovariateSimulated:
    """Section 4 of Andrade, Fukumizu & Okajima (convex covariate clustering).

    ``c = 4`` classes with ``n / 4`` samples each; ``d = 10 m`` covariates ``x1 .. xd``
    in 10 true clusters of ``m`` consecutive covariates (cluster ``k`` holds
    ``x{km+1} .. x{(k+1)m}``). A covariate of true cluster ``k`` has mean
    ``5k/9 + 0.5`` (0.5, 1.06, ..., 5.5) in class ``k mod 4`` and 0 in the other
    classes (the authors' generator; the paper's text says ``0.5 x cluster id``).
    A sample of class ``y`` is ``N(B*_y, Sigma*)``:

    * ``variant="paper"`` (section 4, Figure 1): ``Sigma*`` is 1 on the diagonal and
      0.9 inside the blocks joining true clusters ``{0, 1}, {2, 3}, ..., {8, 9}``
      (each block of ``2m`` covariates straddles two classes), 0 elsewhere;
    * ``variant="appendix"`` (appendix A.4, Figure 2): 0.9 only within each true
      cluster.

    Sampled exactly through the block structure: inside a block,
    ``x_i = mean_i + sqrt(0.9) g + sqrt(0.1) e_i`` with ``g, e_i`` independent
    standard normals.

    Parameters
    ----------
    n : int, default 400
        Number of samples, a multiple of 4 (the paper: 40, 400, 4000).
    m : int, default 4
        Covariates per true cluster (the paper: 4, 20, 100 for d = 40, 200, 1000).
    variant : {"paper", "appendix"}
    shuffle : bool, default False
        Permute the rows (otherwise grouped by class, class 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    CovariateSimulated
        ``labels`` are the classes (0..3, equal counts, name ``"class"``);
        ``covariate_labels`` the true covariate clustering; ``sigma`` ``Sigma*``.

    Examples
    --------
    >>> sim = covariate_sim(40, rng=0)
    >>> sim
    CovariateSimulated(design='covariate_sim', variant='paper', n_obs=40, n_covariates=40, class_sizes=[10, 10, 10, 10], covariate_clusters=10)
    >>> sim.means.loc[1, ["x1", "x5", "x9"]].round(3).tolist()
    [0.0, 1.056, 0.0]
    >>> float(sim.sigma.loc["x1", "x8"]), float(sim.sigma.loc["x1", "x9"])
    (0.9, 0.0)
    >>> float(covariate_sim(40, variant="appendix", rng=0).sigma.loc["x1", "x8"])
    0.0
    """
    n = check_int("n", n, min=4)
    if n % 4:
        raise ValueError(
            f"n must be a multiple of 4 (equal numbers of samples in the 4 classes); "
            f"got n={n}. Use e.g. n={4 * (n // 4 + 1)}."
        )
    m = check_int("m", m, min=1)
    variant = check_choice("variant", variant, ["paper", "appendix"])
    shuffle = check_bool("shuffle", shuffle)
    gen = as_rng(rng)
    c, k_true = 4, 10
    d = k_true * m
    cols = pd.Index([f"x{j}" for j in range(1, d + 1)])
    cluster = np.repeat(np.arange(k_true), m)
    means = np.zeros((c, d))
    means[cluster % c, np.arange(d)] = 5.0 * cluster / 9.0 + 0.5
    block = cluster // 2 if variant == "paper" else cluster
    sigma = np.where(block[:, None] == block[None, :], 0.9, 0.0)
    np.fill_diagonal(sigma, 1.0)
    labels = _labels((n // c,) * c)
    n_blocks = int(block.max()) + 1
    common = gen.standard_normal((n, n_blocks))
    values = (
        means[labels] + np.sqrt(0.9) * common[:, block] + np.sqrt(0.1) * gen.standard_normal((n, d))
    )
    classes = pd.RangeIndex(c, name="class")
    subspaces = pd.DataFrame(means != 0, index=classes, columns=cols.copy())
    params = {"n": n, "m": m, "d": d, "variant": variant, "shuffle": shuffle}
    sim = _finish("covariate_sim", values, labels, subspaces, params, shuffle, gen)
    return CovariateSimulated(
        data=sim.data,
        labels=sim.labels.rename("class"),
        subspaces=subspaces,
        design="covariate_sim",
        params=params,
        covariate_labels=pd.Series(cluster.astype(np.int64), index=cols.copy(), name="cluster"),
        sigma=pd.DataFrame(sigma, index=cols.copy(), columns=cols.copy()),
        means=pd.DataFrame(means, index=classes, columns=cols.copy()),
    )


# ------------------------------------------------------------------ customer-like table
_MESSY_KINDS: tuple[str, ...] = (  # what make_customers(messy=...) can add
    "customer_id",
    "comment",
    "spend_text",
    "city400",
    "city60",
    "code5",
)

_SEGMENTS = {  # segment j: spend N(spend_mean + j spend_step, (spend_sd + j spend_sd_step)^2), ...
    "spend_mean": 1200.0,
    "spend_step": 1800.0,
    "spend_sd": 350.0,
    "spend_sd_step": 100.0,
    "visits_mean": 4.0,
    "visits_step": 2.75,
    "visits_sd": 1.2,
    "share": 0.6,  # of the segment's own channel and plan
}
_CHANNELS = ("store", "web", "app", "phone")
_PLANS = ("basic", "plus", "premium")
_NOISE_LEVELS = {
    "region": ("north", "south", "east", "west"),
    "newsletter": ("yes", "no"),
    "device": ("desktop", "android", "ios"),
    "payment": ("card", "cash", "paypal", "transfer", "voucher"),
}
_WORDS = (
    "great service friendly staff slow delivery late parcel damaged box price too high "
    "good value will return again never recommend website app crashed easy checkout "
    "helpful support long queue fresh products wrong size refund quick card declined "
    "nice colours small shop"
).split()
_CITY_HEADS = (
    "Ash Bel Cal Dun Elm Fair Glen Hart Iron Kings Lake Mill North Oak Pine Red Stone "
    "West Wood York"
).split()
_CITY_TAILS = "bury ford ham ley mouth port stead ton ville wick worth field".split()


def _check_messy(messy: Any) -> tuple[str, ...]:
    names = (messy,) if isinstance(messy, str) else messy
    if not isinstance(names, Sequence | np.ndarray):
        raise TypeError(
            f"messy must be a sequence of column kinds (a list or tuple); got "
            f"messy={messy!r}. Use e.g. messy=['customer_id', 'city400']; the kinds: "
            f"{list(_MESSY_KINDS)}."
        )
    names = tuple(str(n) if isinstance(n, str) else n for n in names)
    unknown = [n for n in names if not isinstance(n, str) or n not in _MESSY_KINDS]
    if unknown:
        raise ValueError(
            f"messy must name column kinds among {list(_MESSY_KINDS)}; got unknown "
            f"{unknown!r} in messy={list(names)!r}. Use e.g. messy=['customer_id']."
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(
            f"messy must name each column kind at most once; got {repeated!r} more than "
            f"once in messy={list(names)!r}. Use e.g. messy={sorted(set(names))!r}."
        )
    return names


def _shares(k: int, n_levels: int, main: float) -> np.ndarray:
    """k x n_levels level shares: segment j puts ``main`` on level ``j mod n_levels``
    and spreads the rest evenly."""
    out = np.full((k, n_levels), (1.0 - main) / (n_levels - 1))
    out[np.arange(k), np.arange(k) % n_levels] = main
    return out


def _draw_levels(gen: np.random.Generator, levels: Sequence[str], shares: np.ndarray) -> np.ndarray:
    """One level per row; ``shares`` is rows x levels (each row sums to 1)."""
    u = gen.random(shares.shape[0])
    idx = (u[:, None] > np.cumsum(shares, axis=1)[:, :-1]).sum(axis=1)
    return np.asarray(levels, dtype=object)[idx]


def _text(values: Any) -> pd.Series:
    """pandas' default string dtype (``str``), as ``read_csv`` gives text columns."""
    return pd.Series(np.asarray(values, dtype=object), dtype="str")


def _city_names(n_levels: int) -> list[str]:
    heads, tails = len(_CITY_HEADS), len(_CITY_TAILS)
    out = []
    for i in range(n_levels):
        name = _CITY_HEADS[i % heads] + _CITY_TAILS[(i // heads) % tails]
        rep = i // (heads * tails)
        out.append(name if rep == 0 else f"{name} {rep + 1}")
    return out


def _city(gen: np.random.Generator, n: int, n_levels: int) -> pd.Series:
    """``n_levels`` cities, each seen at least once (when ``n_levels <= n``), the other
    rows uniform over the cities."""
    names = np.asarray(_city_names(n_levels), dtype=object)
    first = np.arange(min(n_levels, n))
    rest = gen.integers(n_levels, size=n - first.size)
    return _text(names[gen.permutation(np.concatenate([first, rest]))])


def _comments(gen: np.random.Generator, n: int) -> pd.Series:
    """Free text: 4-9 words from a small vocabulary, distinct across rows."""
    seen: set[str] = set()
    out = []
    while len(out) < n:
        words = gen.choice(_WORDS, size=int(gen.integers(4, 10)))
        text = " ".join(words).capitalize() + "."
        if text not in seen:
            seen.add(text)
            out.append(text)
    return _text(out)


def _messy_column(kind: str, gen: np.random.Generator, n: int, spend: np.ndarray) -> pd.Series:
    if kind == "customer_id":
        width = max(5, len(str(n)))
        return _text([f"C{i:0{width}d}" for i in range(1, n + 1)])
    if kind == "comment":
        return _comments(gen, n)
    if kind == "spend_text":
        return _text([f"{v:,.1f}" for v in spend])
    if kind in ("city400", "city60"):
        per600 = 400 if kind == "city400" else 60
        return _city(gen, n, max(2, round(per600 * n / 600)))
    return pd.Series(gen.integers(1, 6, size=n), dtype=np.int64)  # code5


def make_customers(
    n_samples: int = 600,
    *,
    k: int = 3,
    messy: Sequence[str] = (),
    shuffle: bool = True,
    rng: Any = None,
) -> Simulated:
    """A customer-like table with ``k`` segments, and the messy columns real tables carry.

    The design of issue 32 (not a paper's): ``k`` segments of equal size (up to one
    row) carried by two numeric and two categorical columns, and eight irrelevant
    columns, four numeric and four categorical. Text columns have pandas' default
    string dtype (``str``), as :func:`pandas.read_csv` gives them; numeric columns are
    ``float64``. Segment ``j`` (0-based) has:

    * ``spend``: N(1200 + 1800 j, (350 + 100 j)^2), at least 0, rounded to 0.1;
    * ``visits`` (a monthly average): N(4 + 2.75 j, 1.2^2), at least 0, rounded to
      0.1;
    * ``channel`` (store, web, app, phone): share 0.6 on level ``j mod 4``, 0.4 / 3
      on each other;
    * ``plan`` (basic, plus, premium): share 0.6 on level ``j mod 3``, 0.2 on each
      other.

    The noise columns are the same for every segment: ``age`` N(42, 12^2) in whole
    years (float64), ``tenure_years`` N(6, 2^2) (at least 0), ``income_k``
    N(55, 15^2), ``basket_avg`` N(45, 10^2), and ``region`` (4 levels),
    ``newsletter`` (2), ``device`` (3), ``payment`` (5), each uniform over its levels.
    At the defaults ``craft(data, k=3, m=0.5, rng=s)`` finds the segments with ARI
    0.96-0.99 on seeds 0-3 and ``craft(data, rng=s)`` (K and m chosen) with ARI
    0.95-0.99 at K = 3 on the same seeds (on 10 of seeds 0-11; K = 2 on the others):
    the issue's clean table. One messy column then takes the fit apart (see
    ``benchmarks/messy_tables.py``).

    ``messy`` adds columns of the kinds issue 32 lists, each named by its kind and
    appended in the order given, except ``"spend_text"``, which takes ``spend``'s
    place:

    * ``"customer_id"``: ``"C00001"``, ``"C00002"``, ... in row order (one per row,
      string);
    * ``"comment"``: free text of 4-9 words from a vocabulary of 41 words, distinct across
      rows (string);
    * ``"spend_text"``: REPLACES ``spend`` by its values as text with grouping marks,
      ``"3,456.7"`` (``"871.9"`` below 1000; string): only the text carries the
      signal;
    * ``"city400"``: a city with ``round(400 n / 600)`` levels (400 over 600 rows),
      each seen at least once, the other rows uniform over them (string);
    * ``"city60"``: the same with ``round(60 n / 600)`` levels (string);
    * ``"code5"``: an integer code 1-5 (``int64``), uniform.

    The comment, the cities and the code are irrelevant to the segments. Each kind
    is drawn from its own stream of ``rng``, so the clean columns, and any one messy
    column, are the same whatever else is asked for.

    Parameters
    ----------
    n_samples : int, default 600
        Number of rows (at least ``k``); the segments' sizes differ by at most one
        (the first ``n_samples mod k`` segments have one row more).
    k : int, default 3
        Number of segments (at least 2).
    messy : sequence of str, default ()
        Messy columns to add, any of ``"customer_id"``, ``"comment"``,
        ``"spend_text"``, ``"city400"``, ``"city60"``, ``"code5"``, each at most once
        (one name alone may be given as a str).
    shuffle : bool, default True
        Permute the rows (otherwise grouped by segment, segment 0 first).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Simulated
        ``data`` (12 columns plus the messy ones), ``labels`` (the segments),
        ``subspaces`` (True on the four segment columns for every segment: ``spend``
        or ``spend_text``, ``visits``, ``channel``, ``plan``), ``design`` =
        ``"customers"`` and ``params`` (``n_samples``, ``k``, ``messy``,
        ``shuffle``).

    See Also
    --------
    sparseclust.craft : CRAFT, which should find the segments with or without the
        messy columns.

    Notes
    -----
    Not one of the papers' designs, so not in :data:`DESIGNS`.

    Examples
    --------
    >>> from sparseclust.simulate import make_customers
    >>> sim = make_customers(rng=0)
    >>> sim
    Simulated(design='customers', n_obs=600, n_features=12, cluster_sizes=[200, 200, 200], subspace_sizes=[4, 4, 4])
    >>> sim.data.groupby(sim.labels)["spend"].mean().round(-2).tolist()
    [1200.0, 3000.0, 4800.0]
    >>> messy = make_customers(rng=0, messy=["customer_id", "spend_text", "code5"])
    >>> messy.data.columns.tolist()[:3], messy.data.columns.tolist()[-2:]
    (['spend_text', 'visits', 'channel'], ['customer_id', 'code5'])
    >>> messy.data["customer_id"].head(3).tolist(), messy.data["spend_text"].head(3).tolist()
    (['C00001', 'C00002', 'C00003'], ['871.9', '3,878.1', '886.2'])
    >>> messy.data.dtypes[["customer_id", "spend_text", "code5"]].astype(str).tolist()
    ['str', 'str', 'int64']
    """
    k = check_int("k", k, min=2)
    n = check_int("n_samples", n_samples, min=k)
    kinds = _check_messy(messy)
    shuffle = check_bool("shuffle", shuffle)
    gen = as_rng(rng)
    labels = np.arange(n) % k
    if not shuffle:
        labels = np.sort(labels)
    else:
        labels = labels[gen.permutation(n)]
    seg, d = np.arange(k), _SEGMENTS
    spend_mean = d["spend_mean"] + d["spend_step"] * seg
    spend_sd = d["spend_sd"] + d["spend_sd_step"] * seg
    spend = np.maximum(gen.normal(spend_mean[labels], spend_sd[labels]), 0)
    visits_mean = d["visits_mean"] + d["visits_step"] * seg
    visits = np.maximum(gen.normal(visits_mean[labels], d["visits_sd"]), 0)
    cols: dict[str, Any] = {
        "spend": np.round(spend, 1),
        "visits": np.round(visits, 1),
        "channel": _text(_draw_levels(gen, _CHANNELS, _shares(k, 4, d["share"])[labels])),
        "plan": _text(_draw_levels(gen, _PLANS, _shares(k, 3, d["share"])[labels])),
        "age": np.round(gen.normal(42, 12, n)),
        "tenure_years": np.round(np.maximum(gen.normal(6, 2, n), 0), 1),
        "income_k": np.round(gen.normal(55, 15, n), 1),
        "basket_avg": np.round(gen.normal(45, 10, n), 2),
    }
    for name, levels in _NOISE_LEVELS.items():
        uniform = np.full((n, len(levels)), 1.0 / len(levels))
        cols[name] = _text(_draw_levels(gen, levels, uniform))
    streams = dict(zip(_MESSY_KINDS, gen.spawn(len(_MESSY_KINDS)), strict=True))
    for kind in kinds:
        column = _messy_column(kind, streams[kind], n, np.round(spend, 1))
        if kind == "spend_text":  # in spend's place
            cols = {kind if c == "spend" else c: v for c, v in cols.items()}
        cols[kind] = column
    index = pd.RangeIndex(n)
    data = pd.DataFrame({c: pd.Series(v).set_axis(index) for c, v in cols.items()})
    signal = ["spend_text" if "spend_text" in kinds else "spend", "visits", "channel", "plan"]
    subspaces = pd.DataFrame(
        np.tile(data.columns.isin(signal), (k, 1)),
        index=pd.RangeIndex(k, name="cluster"),
        columns=data.columns.copy(),
    )
    lab = pd.Series(labels.astype(np.int64), index=index, name="cluster")
    params = {"n_samples": n, "k": k, "messy": kinds, "shuffle": shuffle}
    return Simulated(data=data, labels=lab, subspaces=subspaces, design="customers", params=params)


DESIGNS: MappingProxyType[str, Callable[..., Simulated]] = MappingProxyType(
    {
        "craft_fig2a": craft_fig2a,
        "craft_fig2c": craft_fig2c,
        "craft_fig3a": craft_fig3a,
        "craft_fig3c": craft_fig3c,
        "craft_fig4a": craft_fig4a,
        "craft_fig4c": craft_fig4c,
        "sparse_sim": sparse_sim,
        "sparse_motivating": sparse_motivating,
        "covariate_sim": covariate_sim,
    }
)
"""Read-only registry: design name -> simulator."""


def list_designs() -> list[str]:
    """Return the names of the simulated designs, sorted.

    Returns
    -------
    list of str
        The keys of :data:`DESIGNS`, each a function of this module.

    Examples
    --------
    >>> from sparseclust.simulate import DESIGNS
    >>> DESIGNS["craft_fig3c"](n_per_cluster=2, rng=0).data.shape
    (6, 36)
    >>> len(list_designs())
    9
    """
    return sorted(DESIGNS)
