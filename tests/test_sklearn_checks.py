"""scikit-learn's own estimator checks (``check_estimator``) on every wrapper in
:mod:`sparseclust.sklearn`, each with its default parameters.

No check is expected to fail. Checks that cannot apply are switched off by the
estimators' tags (``__sklearn_tags__``), with the reason there; scikit-learn skips
``check_array_api_input`` itself unless ``SCIPY_ARRAY_API`` is set.
"""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.exceptions import DataConversionWarning  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from sparseclust.sklearn import (  # noqa: E402
    CRAFT,
    CovariateClustering,
    SparseHierarchical,
    SparseKMeans,
)


# The checks' data are small random sets: CovariateClustering's sigma lands on the
# edge of its CV grid there and says so (a CalibrationWarning, an error in this suite),
# and CRAFT's automatic K may say its criterion is flat there (a DataWarning).
@pytest.mark.filterwarnings("ignore::sparseclust.exceptions.CalibrationWarning")
@pytest.mark.filterwarnings("ignore:automatic K:sparseclust.exceptions.DataWarning")
@parametrize_with_checks(
    [SparseKMeans(), SparseHierarchical(), CRAFT(), CovariateClustering()],
)
def test_sklearn_check(estimator, check):
    check(estimator)


# ------------------------------------------------------- what the checks found
def test_sparse_kmeans_one_cluster():
    """n_clusters=1 (the checks fit it): one cluster at the column means; no weights to
    choose (every between-cluster sum of squares is 0): NaN, result_ None."""
    X = np.array([[0.0, 1.0], [2.0, np.nan], [4.0, 5.0]])
    est = SparseKMeans(n_clusters=1).fit(X)
    np.testing.assert_array_equal(est.labels_, [0, 0, 0])
    np.testing.assert_allclose(est.cluster_centers_, [[2.0, 3.0]])
    assert np.isnan(est.weights_).all() and est.result_ is None and est.n_iter_ == 0
    np.testing.assert_array_equal(est.predict(X[:2]), [0, 0])


@pytest.mark.parametrize("make", [SparseKMeans, SparseHierarchical, CovariateClustering, CRAFT])
def test_object_column_mixing_numbers_and_strings_is_named(make):
    X = pd.DataFrame(
        {"a": np.arange(8.0), "b": pd.Series([1, 2.5, "lo", 4, 5, 6, 7, 8], dtype=object)}
    )
    y = np.arange(8) % 2
    if make is CRAFT:  # CRAFT reads a column of strings and numbers as categorical
        assert make(n_clusters=2, n_init=2, random_state=0).fit(X).n_features_in_ == 2
        with pytest.raises(ValueError, match=r"column 'x1' \(object\) holds 'lo'.*pd.to_numeric"):
            make(n_clusters=2).fit(X.to_numpy(dtype=object))
        return
    with pytest.raises(ValueError, match=r"column 'b' \(object\) holds 'lo'.*pd.to_numeric"):
        make().fit(X, y)
    # numbers in an object column: the package reads the column as categorical and says so
    with pytest.raises(TypeError, match=r"columns \['b'\] are categorical.*numeric=\['b'\]"):
        make().fit(X.assign(b=pd.Series(list(range(8)), dtype=object)), y)


def test_covariate_clustering_targets():
    X = np.random.default_rng(0).normal(size=(30, 4))
    y = np.arange(30) % 2
    with pytest.warns(DataConversionWarning):
        est = CovariateClustering(sigma=1.0).fit(X, y.reshape(-1, 1))
    assert est.n_iter_ >= 1 and list(est.classes_) == [0, 1]
    with pytest.raises(ValueError, match="Unknown label type"):
        CovariateClustering(sigma=1.0).fit(X, np.linspace(0, 1, 30))
    with pytest.raises(ValueError, match=r"1 feature\(s\)"):
        CovariateClustering(sigma=1.0).fit(X[:, :1], y)
    with pytest.raises(ValueError, match="NaN"):
        est.predict(np.where(np.eye(30, 4) > 0, np.nan, X))
