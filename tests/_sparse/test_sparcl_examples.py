"""Every example of sparcl 1.0.4's manual, translated line by line to sparseclust.

The R code is in ``tests/r_reference/manual_examples/sparcl_calls.R`` (each example as
its ``man/*.Rd`` writes it), its data (drawn with R's RNG) in ``x_*.csv`` and its
outputs in ``values.csv``. What does not depend on random starts is compared with
sparcl's numbers (``weights="sparcl"``, and ``niter=15``, sparcl's cap, for the
hierarchical fits): the k-means path from given centres, the
k-means permute's fits on the data from given centres, and every hierarchical fit.
What does (R's k-means starts, the permutations) is compared statistically. The
choice of the bound in the two permute examples is in ``test_sparcl_choice.py``.
Not ported: ``HierarchicalSparseCluster.wrapper`` (GenePattern GCT files), the output
files (``output.cluster.files``) and ``silent`` (see ``docs/guide/sparcl.md``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import pdist

from sparseclust import (
    color_dendrogram,
    hclust_sparse_permute,
    kmeans_sparse_permute,
    sparse_hclust,
    sparse_kmeans,
    sparse_kmeans_path,
)
from sparseclust._sparse.tree import r_merge, r_order, tree_linkage
from sparseclust.exceptions import CalibrationWarning, ConvergenceWarning
from sparseclust.metrics import ari

DIR = Path(__file__).parents[1] / "r_reference" / "manual_examples"
# sparcl's manual grids: their edge is what sparcl chooses (the edge-of-grid
# warning is tested in tests/_results/test_analyst.py)
pytestmark = [
    pytest.mark.r_reference,
    pytest.mark.filterwarnings("ignore:.*the gap may be larger beyond the grid"),
]
RTOL = 1e-9
#: sparcl's caps, passed explicitly: KMeansSparseCluster's maxiter (ours default to 50)
MAXITER = 6


@pytest.fixture(scope="module")
def values() -> pd.DataFrame:
    return pd.read_csv(DIR / "values.csv")


def _x(name: str) -> np.ndarray:
    return np.loadtxt(DIR / f"x_{name}.csv", delimiter=",")


def _get(values: pd.DataFrame, name: str) -> np.ndarray:
    return values.loc[values["name"] == name, "value"].astype(float).to_numpy()


def _merge(values: pd.DataFrame, prefix: str) -> np.ndarray:
    return _get(values, f"{prefix}.merge").astype(int).reshape(2, -1).T  # R stores columns


def _quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # sparcl stops silently
        warnings.simplefilter("ignore", CalibrationWarning)  # a choice at the grid's edge
        return f(*args, **kwargs)


# --------------------------------------------------------------- ?KMeansSparseCluster
def test_kmeans_sparse_cluster_example(values):
    x = _x("km")  # set.seed(11); 50 x 70; rows 1-25 shifted on 20 features; scale(x)
    truth = np.repeat([0, 1], 25)
    # km.perm <- KMeansSparseCluster.permute(x, K=2, wbounds=seq(3,7,len=15), nperms=5)
    km_perm = _quiet(
        kmeans_sparse_permute,
        x,
        2,
        wbounds=np.linspace(3, 7, 15),
        nperms=5,
        max_iter=MAXITER,
        rng=0,
    )
    text = repr(km_perm)  # print(km.perm)
    assert "Tuning parameter selection results for Sparse K-means Clustering" in text
    assert km_perm.plot() is not None  # plot(km.perm)
    r_bestw = _get(values, "km.perm.bestw")[0]
    assert abs(km_perm.best_index - int(np.argmin(np.abs(np.linspace(3, 7, 15) - r_bestw)))) <= 3
    # km.out <- KMeansSparseCluster(x, K=2, wbounds=km.perm$bestw)
    km_out = _quiet(sparse_kmeans, x, 2, wbound=km_perm.best_wbound, max_iter=MAXITER, rng=0)
    assert "Sparse k-means" in repr(km_out) and km_out.plot() is not None
    r_ari = ari(_get(values, "km.best.1.Cs").astype(int), truth)
    assert ari(km_out.labels.to_numpy(dtype=int), truth) >= r_ari - 0.1
    # km.out <- KMeansSparseCluster(x, K=2, wbounds=seq(1.3,4,len=8))
    path = _quiet(sparse_kmeans_path, x, 2, wbounds=np.linspace(1.3, 4, 8), max_iter=MAXITER, rng=0)
    assert "Wbound is" in repr(path) and path.plot() is not None
    r_nnz = [np.count_nonzero(_get(values, f"km.path.{j}.ws")) for j in range(1, 9)]
    ours = path.table["n_nonzero"].to_numpy()
    assert np.all(np.abs(ours - r_nnz) <= np.maximum(3, 0.5 * np.array(r_nnz)))
    # km.out <- KMeansSparseCluster(x, wbounds=2:7, centers=x[c(1,3,5),]): no random start,
    # so sparcl's weights and partitions exactly
    given = _quiet(
        sparse_kmeans_path,
        x,
        centers=x[[0, 2, 4]],
        wbounds=range(2, 8),
        weights="sparcl",
        max_iter=MAXITER,
    )
    for j, fit in enumerate(given.fits, 1):
        np.testing.assert_allclose(fit.weights, _get(values, f"km.centers.{j}.ws"), rtol=RTOL)
        labels = fit.labels.to_numpy(dtype=int) + 1
        np.testing.assert_array_equal(labels, _get(values, f"km.centers.{j}.Cs"))


# ------------------------------------------------------- ?KMeansSparseCluster.permute
def test_kmeans_sparse_cluster_permute_example(values):
    x = _x("kmp")  # set.seed(11); rows 1-25 shifted by 1.5 on 10 features; scale(x)
    truth = np.repeat([0, 1], 25)
    # km.perm <- KMeansSparseCluster.permute(x, K=2, wbounds=seq(2,5,len=8), nperms=3)
    km_perm = _quiet(
        kmeans_sparse_permute, x, 2, wbounds=np.linspace(2, 5, 8), nperms=3, max_iter=MAXITER, rng=0
    )
    assert km_perm.best_wbound == pytest.approx(_get(values, "kmp.perm.bestw")[0], rel=1e-14)
    assert km_perm.plot() is not None
    # km.out <- KMeansSparseCluster(x, K=2, wbounds=km.perm$bestw)
    km_out = _quiet(sparse_kmeans, x, 2, wbound=km_perm.best_wbound, max_iter=MAXITER, rng=0)
    r_ari = ari(_get(values, "kmp.best.1.Cs").astype(int), truth)
    assert ari(km_out.labels.to_numpy(dtype=int), truth) >= r_ari - 1e-12
    # km.out <- KMeansSparseCluster(x, K=2, wbounds=2:7)
    path = _quiet(sparse_kmeans_path, x, 2, wbounds=range(2, 8), max_iter=MAXITER, rng=0)
    r_nnz = [np.count_nonzero(_get(values, f"kmp.path.{j}.ws")) for j in range(1, 7)]
    assert path.table["n_nonzero"].tolist()[-2:] == r_nnz[-2:] == [70, 70]
    # km.perm.out <- KMeansSparseCluster.permute(x, wbounds=2:6, centers=x[1:4,], nperms=3):
    # the fits on the data start from the given centres: sparcl's objectives exactly
    four = _quiet(
        kmeans_sparse_permute, x, centers=x[:4], wbounds=range(2, 7), nperms=3,
        weights="sparcl", max_iter=MAXITER, rng=0,
    )  # fmt: skip
    np.testing.assert_allclose(four.tots, _get(values, "kmp.centers.tots"), rtol=RTOL)
    np.testing.assert_array_equal(four.table["n_nonzero"], _get(values, "kmp.centers.nnonzerows"))


# ------------------------------ ?HierarchicalSparseCluster, ?HierarchicalSparseCluster.permute
@pytest.mark.parametrize("dissimilarity", ["squared", "absolute"])
def test_hierarchical_sparse_cluster_example(values, dissimilarity):
    x = _x("hc")  # set.seed(1); 100 x 50; rows 1-50 shifted by 2 on 25 features
    y = _get(values, "hc.y").astype(int)
    suffix = "" if dissimilarity == "squared" else "_abs"
    # perm.out <- HierarchicalSparseCluster.permute(x, wbounds=c(1.5,2:6), nperms=5,
    #                                               dissimilarity=...)
    perm = _quiet(
        hclust_sparse_permute, x, wbounds=[1.5, 2, 3, 4, 5, 6], nperms=5,
        dissimilarity=dissimilarity, weights="sparcl", null="dissimilarities", niter=15,
        rng=0,
    )  # fmt: skip
    assert "Sparse Hierarchical Clustering" in repr(perm) and perm.plot() is not None
    np.testing.assert_allclose(perm.tots, _get(values, f"hc.perm{suffix}.tots"), rtol=RTOL)
    nnz = _get(values, f"hc.perm{suffix}.nnonzerows")
    np.testing.assert_array_equal(perm.table["n_nonzero"], nnz)
    assert perm.best_wbound == _get(values, f"hc.perm{suffix}.bestw")[0]
    # sparsehc <- HierarchicalSparseCluster(dists=perm.out$dists, wbound=perm.out$bestw,
    #                                       method="complete", dissimilarity=...)
    sparsehc = _quiet(
        sparse_hclust, dists=perm.dists, wbound=perm.best_wbound, method="complete",
        dissimilarity=dissimilarity, weights="sparcl", niter=15,
    )  # fmt: skip
    _same_tree(sparsehc, values, f"hc.fit{suffix}")
    assert sparsehc.plot() is not None  # plot(sparsehc): tree and weights
    assert "Sparse hierarchical clustering" in repr(sparsehc)  # print(sparsehc)
    ax = sparsehc.plot_dendrogram(labels=False)  # plot(sparsehc$hc, labels=rep("", 100))
    assert ax is not None
    # ColorDendrogram(sparsehc$hc, y=y, main="My Simulated Data", branchlength=.007)
    ax = color_dendrogram(sparsehc, y, main="My Simulated Data", branchlength=0.007)
    assert ax.get_title() == "My Simulated Data"
    if dissimilarity == "squared":
        # sparsehc.comp <- HierarchicalSparseCluster(x, wbound=perm.out$bestw,
        #                                            method="complete", uorth=sparsehc$u)
        comp = _quiet(
            sparse_hclust, x, wbound=perm.best_wbound, method="complete",
            uorth=sparsehc.u_matrix(), weights="sparcl", niter=15,
        )  # fmt: skip
        _same_tree(comp, values, "hc.comp")


def _same_tree(fit, values: pd.DataFrame, prefix: str) -> None:
    np.testing.assert_allclose(fit.weights, _get(values, f"{prefix}.ws"), rtol=RTOL, atol=1e-15)
    assert fit.crit == pytest.approx(_get(values, f"{prefix}.crit")[0], rel=RTOL)
    np.testing.assert_array_equal(fit.merge, _merge(values, prefix))
    np.testing.assert_allclose(fit.height, _get(values, f"{prefix}.height"), rtol=RTOL)
    np.testing.assert_array_equal(fit.order + 1, _get(values, f"{prefix}.order"))


def test_exact_weights_from_the_same_dists_choose_the_same_features(values):
    """The default (exact weights) on the example: the same selected features as sparcl."""
    x = _x("hc")
    perm = _quiet(hclust_sparse_permute, x, wbounds=[1.5, 2, 3, 4, 5, 6], nperms=5, rng=0)
    fit = sparse_hclust(dists=perm.dists, wbound=perm.best_wbound, method="complete")
    again = sparse_hclust(x, wbound=perm.best_wbound, method="complete")
    np.testing.assert_array_equal(fit.weights, again.weights)  # dists= skips only set-up
    np.testing.assert_array_equal(fit.merge, again.merge)
    r_ws = _get(values, "hc.fit.ws")
    np.testing.assert_array_equal(fit.weights.to_numpy() > 0, r_ws > 0)


def test_dists_must_match_the_settings():
    x = _x("hc")[:20, :10]
    fit = sparse_hclust(x, wbound=2.0)
    with pytest.raises(ValueError, match="dissimilarity='squared'"):
        sparse_hclust(dists=fit.dists, wbound=2.0, dissimilarity="absolute")
    with pytest.raises(ValueError, match="weights='exact'"):
        sparse_hclust(dists=fit.dists, wbound=2.0, weights="sparcl")
    with pytest.raises(ValueError, match="not both"):
        sparse_hclust(x, dists=fit.dists, wbound=2.0)
    with pytest.raises(TypeError, match="dists must be"):
        sparse_hclust(dists=np.zeros((190, 10)), wbound=2.0)
    assert sparse_hclust(x, wbound=2.0, keep_data=False).dists is None


# --------------------------------------------------------------------- ?ColorDendrogram
def test_color_dendrogram_example(values):
    x = _x("cd")  # set.seed(1); 100 x 20; rows 1-50 shifted by 2
    y = np.repeat([1, 2], 50)
    # hc <- hclust(dist(x), method="complete")
    hc = tree_linkage(pdist(x), "complete")
    np.testing.assert_array_equal(r_merge(hc), _merge(values, "cd"))
    np.testing.assert_allclose(hc[:, 2], _get(values, "cd.height"), rtol=1e-12)
    np.testing.assert_array_equal(r_order(r_merge(hc)) + 1, _get(values, "cd.order"))
    # ColorDendrogram(hc, y=y, main="My Simulated Data", branchlength=3)
    ax = color_dendrogram(hc, y, main="My Simulated Data", branchlength=3)
    assert ax.get_title() == "My Simulated Data"
    bars = [c for c in ax.collections if c.get_gid() == "leaf_colours"][0]
    assert len(bars.get_segments()) == 100
    lengths = [abs(s[0][1] - s[1][1]) for s in bars.get_segments()]
    np.testing.assert_allclose(lengths, 3.0)
    # a plain scipy linkage of the same data gives the same tree
    np.testing.assert_array_equal(r_merge(linkage(pdist(x), "complete")), r_merge(hc))
