"""Messages that name the parameter, the value and the fix where numpy's named
nothing; the one ``progress=`` rule and its bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sparseclust as sc
from sparseclust._data.params import Progress, interactive
from sparseclust._engine import parallel

X = pd.DataFrame(np.random.default_rng(0).normal(size=(24, 4)), columns=list("abcd"))
X.iloc[:12, :2] += 3.0
Y = np.arange(24) % 2


# ----------------------------------------------------------------------- messages
@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (
            lambda: sc.kmeans_sparse_permute(X, 2, wbounds="x", nperms=2),
            r"wbounds\[0\] must be a finite number > 1; got wbounds\[0\]='x'.*Use e\.g\. wbounds=",
        ),
        (
            lambda: sc.hclust_sparse_permute(X, wbounds=[1.5, "lo"], nperms=2),
            r"wbounds\[1\] must be a finite number > 1; got wbounds\[1\]='lo'",
        ),
        (
            lambda: sc.sparse_kmeans_path(X, 2, wbounds=[2.0, np.nan]),
            r"wbounds\[1\] must be a finite number > 1; got wbounds\[1\]=nan",
        ),
        (
            lambda: sc.sparse_kmeans(X, centers="x", wbound=1.5),
            r"centers must be a \(k, 4\) array of numbers.*centers='x'.*centers=X\[:k\]",
        ),
        (
            lambda: sc.covariate_clustering(X, y=Y, nu="x", sigma=1.0),
            r"nu\[0\] must be a finite number >= 0; got nu\[0\]='x'.*Use e\.g\. nu=",
        ),
        (
            lambda: sc.covariate_clustering(
                X, y=Y, method="convex_clustering", gammas=[1.0, "g"], sigma=1.0
            ),
            r"gammas\[1\] must be a finite number >= 0; got gammas\[1\]='g'",
        ),
    ],
    ids=["kmeans-wbounds", "hclust-wbounds", "path-wbounds", "centers", "nu", "gammas"],
)
def test_messages_name_the_parameter_and_the_fix(call, pattern):
    with pytest.raises((TypeError, ValueError), match=pattern):
        call()


def test_wbounds_too_few():
    with pytest.raises(
        ValueError, match=r"wbounds must hold at least 2 numbers; got wbounds=\[2\]"
    ):
        sc.kmeans_sparse_permute(X, 2, wbounds=[2], nperms=2)


# ----------------------------------------------------------------------- progress
def test_progress_rule_defaults_to_interactive(monkeypatch):
    rule = Progress()
    assert rule.check("progress", True) is True and rule.check("progress", False) is False
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    assert interactive() and rule.check("progress", None) is True
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    assert rule.check("progress", None) is ("ipykernel" in __import__("sys").modules)
    with pytest.raises(TypeError, match="progress must be True or False"):
        rule.check("progress", "yes")


#: Every long-running public function takes the same ``progress=`` rule.
LONG = [
    sc.craft,
    sc.dp_rf,
    sc.entropy_clustering,
    sc.kmeans_sparse_permute,
    sc.sparse_kmeans_path,
    sc.hclust_sparse_permute,
    sc.covariate_clustering,
]


@pytest.mark.parametrize("func", LONG, ids=lambda f: f.__name__)
def test_one_progress_rule(func):
    assert isinstance(func.__rules__["progress"], Progress)


@pytest.mark.parametrize(
    "call",
    [
        lambda p: sc.craft(X, k=2, n_init=3, progress=p, rng=0),
        lambda p: sc.craft(X, k_max=3, n_pairs=1, n_refs=1, n_init=2, progress=p, rng=0),
        lambda p: sc.kmeans_sparse_permute(X, 2, nperms=3, wbounds=[1.2, 1.5], progress=p, rng=0),
        lambda p: sc.sparse_kmeans_path(X, 2, wbounds=[1.2, 1.5], progress=p, rng=0),
        lambda p: sc.hclust_sparse_permute(X, nperms=3, wbounds=[1.2, 1.5], progress=p, rng=0),
        lambda p: sc.covariate_clustering(X, y=Y, sigma=1.0, nu=[1.0, 0.1], progress=p, rng=0),
    ],
    ids=[
        "craft-restarts",
        "craft-automatic-K",
        "kmeans-permute",
        "kmeans-path",
        "hclust-permute",
        "covariate",
    ],
)
@pytest.mark.filterwarnings(
    "ignore:automatic K. K = .* is the largest:sparseclust.exceptions.DataWarning"
)
def test_bars_with_progress_true_only(call, monkeypatch, capsys):
    monkeypatch.setattr(parallel, "BAR_DELAY", 0.0)
    call(False)
    assert "it/s" not in capsys.readouterr().err
    call(True)
    assert "it/s" in capsys.readouterr().err  # a tqdm bar on stderr


def test_path_bar_counts_the_bounds_and_keeps_the_fits(monkeypatch, capsys):
    monkeypatch.setattr(parallel, "BAR_DELAY", 0.0)
    quiet = sc.sparse_kmeans_path(X, 2, wbounds=[1.2, 1.5, 1.8], progress=False, rng=0)
    assert capsys.readouterr().err == ""
    shown = sc.sparse_kmeans_path(X, 2, wbounds=[1.2, 1.5, 1.8], progress=True, rng=0)
    err = capsys.readouterr().err
    assert "bounds:" in err and "/3" in err  # one step per bound
    pd.testing.assert_frame_equal(shown.table, quiet.table)  # the bar changes nothing


@pytest.mark.filterwarnings("ignore::sparseclust.exceptions.PerformanceWarning")
def test_bar_over_the_fits_of_a_dask_craft(monkeypatch, capsys):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(parallel, "BAR_DELAY", 0.0)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        ddf = dd.from_pandas(X, npartitions=2)
        sc.craft(ddf, k=2, n_init=4, progress=True, rng=0)
    assert "fits:" in capsys.readouterr().err
