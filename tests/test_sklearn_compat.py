"""scikit-learn compatibility of the wrappers in :mod:`sparseclust.sklearn`."""

import inspect

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import sparseclust as sc  # noqa: E402
from sparseclust.simulate import covariate_sim, sparse_sim  # noqa: E402
from sparseclust.sklearn import (  # noqa: E402
    CRAFT,
    CovariateClustering,
    SparseHierarchical,
    SparseKMeans,
)

# scikit-learn's check_estimator on every wrapper: tests/test_sklearn_checks.py


@pytest.fixture(scope="module")
def sim():
    return sparse_sim(n_per_cluster=15, p=20, q=4, rng=0)


def test_sparse_kmeans_matches_function(sim):
    est = SparseKMeans(n_clusters=3, wbound=2.0, random_state=1).fit(sim.data)
    res = sc.sparse_kmeans(sim.data, 3, wbound=2.0, rng=1)
    np.testing.assert_array_equal(est.labels_, res.labels.to_numpy(dtype=np.int64))
    np.testing.assert_allclose(est.weights_, res.weights.to_numpy())
    np.testing.assert_allclose(est.cluster_centers_, res.centers.to_numpy())
    assert est.n_iter_ == res.n_iter
    assert isinstance(est.weights_, np.ndarray)
    assert list(est.feature_names_in_) == list(sim.data.columns)
    np.testing.assert_array_equal(est.predict(sim.data), res.predict(sim.data).to_numpy())
    np.testing.assert_array_equal(est.fit_predict(sim.data), est.labels_)


def test_sparse_kmeans_array_names(sim):
    X = sim.data.to_numpy()
    est = SparseKMeans(n_clusters=3, wbound=2.0, random_state=1).fit(X)
    assert list(est.result_.weights.index) == [f"x{j}" for j in range(X.shape[1])]
    assert not hasattr(est, "feature_names_in_")
    res = sc.sparse_kmeans(X, 3, wbound=2.0, rng=1)
    np.testing.assert_array_equal(est.labels_, res.labels.to_numpy(dtype=np.int64))


def test_sparse_hierarchical_matches_function(sim):
    est = SparseHierarchical(n_clusters=3, wbound=1.5, niter=50).fit(sim.data)
    res = sc.sparse_hclust(sim.data, wbound=1.5, k=3, niter=50)
    np.testing.assert_array_equal(est.labels_, res.labels.to_numpy(dtype=np.int64))
    np.testing.assert_allclose(est.weights_, res.weights.to_numpy())
    np.testing.assert_array_equal(est.fit_predict(sim.data), est.labels_)


def test_craft_matches_function(sim):
    est = CRAFT(m=0.5, n_clusters=3, n_init=5, random_state=0).fit(sim.data)
    res = sc.craft(sim.data, m=0.5, k=3, n_init=5, rng=0)
    np.testing.assert_array_equal(est.labels_, res.labels.to_numpy(dtype=np.int64))
    pd.testing.assert_frame_equal(est.selected_, res.selected)
    np.testing.assert_array_equal(est.predict(sim.data), res.predict(sim.data).to_numpy())


def test_labels_na_become_minus_one():
    from sparseclust.sklearn import _labels

    s = pd.Series([0, pd.NA, 2], dtype="Int64")
    np.testing.assert_array_equal(_labels(s), [0, -1, 2])


def test_pipeline_and_clone(sim):
    km = SparseKMeans(n_clusters=3, wbound=2.0, max_iter=30, random_state=0)
    pipe = make_pipeline(StandardScaler(), km)
    labels = pipe.fit_predict(sim.data)
    assert labels.shape == (len(sim.data),)
    direct = sc.sparse_kmeans(
        StandardScaler().fit_transform(sim.data), 3, wbound=2.0, max_iter=30, rng=0
    )
    np.testing.assert_array_equal(labels, direct.labels.to_numpy(dtype=np.int64))
    np.testing.assert_array_equal(pipe.predict(sim.data), labels)

    # what GridSearchCV does: clone, then set_params per grid point
    params = pipe.get_params()
    assert params["sparsekmeans__wbound"] == 2.0
    for wb in (1.5, 3.0):
        est = clone(pipe).set_params(sparsekmeans__wbound=wb)
        assert est.get_params()["sparsekmeans__wbound"] == wb
        est.fit(sim.data)
        assert est[-1].result_.wbound == wb
        assert est[-1].weights_.sum() <= wb + 1e-9
    assert not hasattr(pipe[-1], "weights_") or pipe[-1].result_.wbound == 2.0


def test_random_state_forms(sim):
    a = SparseKMeans(n_clusters=3, wbound=2.0, random_state=3).fit(sim.data)
    b = SparseKMeans(n_clusters=3, wbound=2.0, random_state=np.random.default_rng(3)).fit(sim.data)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    SparseKMeans(n_clusters=3, wbound=2.0, random_state=np.random.RandomState(0)).fit(sim.data)
    with pytest.raises(ValueError, match="random_state"):
        SparseKMeans(n_clusters=3, wbound=2.0, random_state="x").fit(sim.data)


def test_covariate_clustering_classifier():
    sim = covariate_sim(40, m=2, rng=0)
    est = CovariateClustering(sigma=1.0, random_state=0)
    assert clone(est).get_params()["sigma"] == 1.0
    est.fit(sim.data, sim.labels)
    res = sc.covariate_clustering(sim.data, y=sim.labels, sigma=1.0, progress=False, rng=0)
    np.testing.assert_array_equal(est.clusters_, res.clusters.to_numpy())
    np.testing.assert_array_equal(est.classes_, np.asarray(res.classes))
    pred = est.predict(sim.data)
    np.testing.assert_array_equal(pred, res.predict(sim.data).to_numpy())
    proba = est.predict_proba(sim.data)
    assert proba.shape == (40, len(est.classes_))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], pred)
    assert est.score(sim.data, sim.labels) > 0.8


# Parameters a wrapper shares (by name) with the function it wraps, whose default it
# deliberately sets apart: (wrapper, parameter) -> why. Empty: every shared parameter
# takes the function's default. Parameters under other names are not compared:
# n_clusters (the function's k; scikit-learn's name, with a default since
# scikit-learn estimators need one) and random_state (the function's rng).
# SparseKMeans.wbound shares sparse_kmeans's default None but reads it as
# default_wbound(p) where sparse_kmeans requires a bound.
_OWN_DEFAULTS: dict[tuple[str, str], str] = {}

_WRAPPED = [
    (SparseKMeans, sc.sparse_kmeans),
    (SparseHierarchical, sc.sparse_hclust),
    (CRAFT, sc.craft),
    (CovariateClustering, sc.covariate_clustering),
]


@pytest.mark.parametrize(("wrapper", "func"), _WRAPPED, ids=lambda v: v.__name__)
def test_wrapper_defaults_are_the_functions(wrapper, func):
    """A wrapper never restates a default of the function it wraps: defaults read from one place."""
    ours = inspect.signature(wrapper.__init__).parameters
    theirs = inspect.signature(func).parameters
    shared = [name for name in ours if name != "self" and name in theirs]
    assert shared, f"{wrapper.__name__} passes nothing on to {func.__name__}?"
    drift = {
        name: (ours[name].default, theirs[name].default)
        for name in shared
        if (wrapper.__name__, name) not in _OWN_DEFAULTS
        and not (
            type(ours[name].default) is type(theirs[name].default)
            and ours[name].default == theirs[name].default
        )
    }
    assert not drift, f"{wrapper.__name__} defaults (wrapper, function) differ: {drift}"
