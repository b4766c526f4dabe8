"""Sparse k-means against R's sparcl 1.0.4 (tests/r_reference/, see its README).

Everything deterministic is compared at the README's tolerances in ``weights="sparcl"``
mode: BinarySearch, UpdateWs for given partitions (every recorded ``Cs``), the gap
arithmetic, ``tots`` from the recorded partitions, and whole sparse k-means runs
replayed with Hartigan–Wong from the recorded starting partition or centres.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparseclust import kmeans_sparse_permute, sparse_kmeans, sparse_kmeans_path, sparse_weights
from sparseclust._sparse.kmeans_core import sparse_kmeans_fit, update_labels
from sparseclust._sparse.weights import between_ss, binary_search_sparcl, project_weights, soft
from sparseclust._tuning.gap import choose_by_gap, gap_statistics
from sparseclust.metrics import ari

pytestmark = pytest.mark.r_reference

REF = Path(__file__).parents[1] / "r_reference"
RTOL = 1e-10


def load(case: str) -> tuple[np.ndarray, dict, dict]:
    x = pd.read_csv(REF / case / "input.csv").to_numpy(dtype=np.float64)
    out = json.loads((REF / case / "output.json").read_text())
    params = json.loads((REF / case / "params.json").read_text())
    chk = out["x_checksum"]
    np.testing.assert_allclose(np.nansum(x), chk["sum"], rtol=1e-14)
    np.testing.assert_allclose(np.nansum(x**2), chk["sumsq"], rtol=1e-14)
    assert int(np.isnan(x).sum()) == chk["n_na"]
    runs = {r["id"]: r for r in out["runs"]}
    pruns = {r["id"]: r for r in params["runs"]}
    return x, runs, pruns


def kmeans_runs():
    """(case, run id, run) for every recorded sparse k-means run."""
    items = []
    for case in ("det_sim3_p100", "sim3_p100_s1", "motivating_2d"):
        _, runs, _ = load(case)
        for rid, r in runs.items():
            if r["task"] == "kmeans" and "results" in r["output"]:
                items.append((case, rid))
    return items


KM_RUNS = kmeans_runs()


def test_binary_search_edge_cases():
    _, runs, _ = load("det_sim3_p100")
    for case in runs["binarysearch_edge"]["output"]:
        a = np.array(case["argu"], dtype=float)
        lam = binary_search_sparcl(a, case["sumabs"])
        assert lam == pytest.approx(case["lam"], abs=1e-10)
        su = soft(a, lam)
        np.testing.assert_allclose(su, case["soft"], rtol=RTOL, atol=1e-14)
        if np.any(su != 0):
            np.testing.assert_allclose(su / np.linalg.norm(su), case["normalized"], rtol=RTOL)


def test_updatews_given_the_true_clusters():
    x, runs, _ = load("det_sim3_p100")
    out = runs["updatews_truth"]["output"]
    cs = np.asarray(out["Cs"]) - 1
    bcss, wcss, tss = between_ss(x, cs)
    np.testing.assert_allclose(bcss, out["bcss_perfeature"], rtol=RTOL)
    np.testing.assert_allclose(wcss, out["wcss_perfeature"], rtol=RTOL)
    np.testing.assert_allclose(tss, out["tss_perfeature"], rtol=RTOL)
    for res in out["results"]:
        w, lam = project_weights(bcss, res["wbound"], "sparcl")
        assert lam == pytest.approx(res["lam"], abs=1e-10)
        np.testing.assert_allclose(w, res["ws"], rtol=RTOL, atol=1e-15)
        assert int((w != 0).sum()) == res["nnonzero"]
        # the public function, on a DataFrame with R's labels
        pub = sparse_weights(pd.DataFrame(x), out["Cs"], res["wbound"], weights="sparcl")
        np.testing.assert_allclose(pub.to_numpy(), res["ws"], rtol=RTOL, atol=1e-15)


@pytest.mark.parametrize(("case", "rid"), KM_RUNS)
def test_weights_of_every_recorded_partition(case, rid):
    x, runs, _ = load(case)
    for res in runs[rid]["output"]["results"]:
        cs = np.asarray(res["Cs"]) - 1
        bcss, wcss, _ = between_ss(x, cs)
        np.testing.assert_allclose(bcss, res["bcss_perfeature"], rtol=RTOL, atol=1e-12)
        np.testing.assert_allclose(wcss, res["wcss_perfeature"], rtol=RTOL)
        w, lam = project_weights(bcss, res["wbound"], "sparcl")
        np.testing.assert_allclose(w, res["ws"], rtol=RTOL, atol=1e-15)
        assert lam == pytest.approx(res["lam_binarysearch"], abs=1e-10)
        assert int((w != 0).sum()) == res["nnonzero"]
        assert float(np.sum(w * bcss)) == pytest.approx(res["bcss_ws"], rel=RTOL)


def test_maxiter_one_is_updatews_of_the_initial_kmeans():
    x, runs, _ = load("sim3_p100_s1")
    out = runs["km_w5_maxiter1"]["output"]
    w, _ = project_weights(between_ss(x, np.asarray(out["Cs_init"]) - 1)[0], 5, "sparcl")
    np.testing.assert_allclose(w, out["results"][0]["ws"], rtol=RTOL, atol=1e-15)


def _replay(x, k, wbounds, cs_init, maxiter, path):
    """The whole sparcl run from its initial partition, Hartigan-Wong, sparcl weights."""
    outs, start = [], np.asarray(cs_init) - 1
    for s in wbounds:
        out = sparse_kmeans_fit(
            x,
            k,
            s,
            init_labels=start,
            mode="sparcl",
            algorithm="hartigan-wong",
            max_iter=maxiter,
            rng=np.random.default_rng(0),
        )
        outs.append(out)
        if path:
            start = out["labels"]
    return outs


@pytest.mark.parametrize(("case", "rid"), KM_RUNS)
def test_whole_run_replayed_from_the_initial_partition(case, rid):
    x, runs, pruns = load(case)
    run, par = runs[rid]["output"], pruns[rid]
    assert run["deterministic_given_Cs_init"]
    k = par.get("K") or len(par["centers_rows"])
    wb = np.atleast_1d(par["wbounds"]).tolist()
    outs = _replay(x, k, wb, run["Cs_init"], par.get("maxiter", 6), path=True)
    for out, res in zip(outs, run["results"], strict=True):
        assert ari(out["labels"], np.asarray(res["Cs"])) == 1.0
        assert out["n_iter"] == res["iterations"]
        np.testing.assert_allclose(out["weights"], res["ws"], rtol=RTOL, atol=1e-15)
        np.testing.assert_allclose(out["objective_path"], res["crit"], rtol=RTOL)


@pytest.mark.parametrize("rid", ["km_centers_seedA", "km_centers_seedB", "km_centers_bad_start"])
def test_public_path_from_recorded_centres(rid):
    """sparcl's KMeansSparseCluster(x, centers=x[rows, ], wbounds=c(2, 5, 8)) end to end."""
    x, runs, pruns = load("det_sim3_p100")
    run, par = runs[rid]["output"], pruns[rid]
    centers = x[np.asarray(par["centers_rows"]) - 1]
    path = sparse_kmeans_path(
        pd.DataFrame(x),
        wbounds=par["wbounds"],
        centers=centers,
        weights="sparcl",
        algorithm="hartigan-wong",
        max_iter=par["maxiter"],
    )
    for fit, res in zip(path.fits, run["results"], strict=True):
        assert ari(fit.labels.to_numpy(dtype=int), np.asarray(res["Cs"])) == 1.0
        np.testing.assert_allclose(fit.weights.to_numpy(), res["ws"], rtol=RTOL, atol=1e-15)
        assert fit.n_iter == res["iterations"]
        assert fit.n_nonzero == res["nnonzero"]
        assert float(fit.weights.sum()) == pytest.approx(res["sum_ws"], rel=1e-6)


def test_single_wbound_from_centres_equals_the_first_path_element():
    x, runs, pruns = load("det_sim3_p100")
    par = pruns["km_centers_seedA"]
    res = runs["km_centers_seedA"]["output"]["results"][0]
    fit = sparse_kmeans(
        x,
        wbound=2,
        centers=x[np.asarray(par["centers_rows"]) - 1],
        weights="sparcl",
        max_iter=par["maxiter"],
    )
    assert ari(fit.labels.to_numpy(dtype=int), np.asarray(res["Cs"])) == 1.0
    assert fit.objective == pytest.approx(res["bcss_ws"], rel=RTOL)


@pytest.mark.parametrize(
    ("case", "rid"),
    [
        ("sim3_p100_s1", "kmperm_seq15"),
        ("sim3_p100_s1", "kmperm_default_grid"),
        ("motivating_2d", "kmperm"),
    ],
)
def test_permute_arithmetic(case, rid):
    x, runs, pruns = load(case)
    out = runs[rid]["output"]
    wb = np.asarray(out["wbounds"])
    if pruns[rid]["wbounds"] is None:  # sparcl's default grid
        p = x.shape[1]
        np.testing.assert_allclose(
            wb, np.exp(np.linspace(np.log(1.2), np.log(0.9 * np.sqrt(p)), 10)), rtol=1e-12
        )
    # tots from the recorded unpermuted partitions
    for i, (cs, ws) in enumerate(
        zip(out["unpermuted_Cs_per_wbound"], out["unpermuted_ws_per_wbound"], strict=True)
    ):
        bcss = between_ss(x, np.asarray(cs) - 1)[0]
        w, _ = project_weights(bcss, wb[i], "sparcl")
        np.testing.assert_allclose(w, ws, rtol=RTOL, atol=1e-15)
        assert float(np.sum(w * bcss)) == pytest.approx(out["tots"][i], rel=RTOL)
        assert int((w != 0).sum()) == out["nnonzerows"][i]
    gaps, sds = gap_statistics(out["tots"], out["permtots"])
    np.testing.assert_allclose(gaps, out["gaps"], rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(sds, out["sdgaps"], rtol=RTOL, atol=1e-14)
    assert wb[choose_by_gap(wb, gaps, sds, "max")] == out["bestw"]
    assert wb[choose_by_gap(wb, gaps, sds, "1se")] == out["one_sd_rule_wbound_NOT_sparcl"]


def test_permute_statistically_like_sparcl():
    """Random starts cannot be replayed: compare the gap curve's shape and the choice."""
    x, runs, _ = load("sim3_p100_s1")
    out = runs["kmperm_seq15"]["output"]
    perm = kmeans_sparse_permute(
        x, 3, wbounds=out["wbounds"], nperms=10, weights="sparcl", max_iter=6, rng=1
    )  # sparcl's permute fits with maxiter=6 whatever the caller asks
    np.testing.assert_array_equal(perm.table["wbound"], out["wbounds"])
    # the number of non-zero weights grows with the bound, as sparcl's
    assert perm.table["n_nonzero"].is_monotonic_increasing
    best_r = out["nnonzerows"][out["bestw_index_1based"] - 1]
    best = perm.table["n_nonzero"].iloc[perm.best_index]
    assert best_r / 2.5 <= best <= best_r * 2.5
    # the curve's shape: rising, then a plateau once every feature has weight, as sparcl's
    ours, theirs = perm.table["gap"].to_numpy(), np.asarray(out["gaps"])
    assert np.corrcoef(ours, theirs)[0, 1] > 0.9
    assert ours[-1] > ours[0] + 0.2 and theirs[-1] > theirs[0] + 0.2
    full = perm.table["n_nonzero"].to_numpy() == x.shape[1]
    assert np.ptp(ours[full]) < 0.05


# ---------------------------------------------------------------- argument checks
def test_errors_p4_same_conditions_our_messages():
    x, runs, _ = load("errors_p4")
    for rid in ("err_km_wbound_le1", "err_km_noK", "err_km_K_centers_mismatch"):
        assert "error" in runs[rid]["output"]
    with pytest.raises(ValueError, match=r"wbounds\[0\] must be a finite number > 1"):
        sparse_kmeans_path(x, 3, wbounds=[1, 2])
    with pytest.raises(ValueError, match="wbound must be a finite number > 1"):
        sparse_kmeans(x, 3, wbound=1)
    with pytest.raises(ValueError, match="k is required"):
        sparse_kmeans(x, wbound=1.5)
    with pytest.raises(ValueError, match="k=2 but centers has 3 rows"):
        sparse_kmeans(x, 2, wbound=1.5, centers=x[[0, 20, 40]])
    with pytest.raises(ValueError, match="wbounds must hold at least 2 numbers"):
        kmeans_sparse_permute(x, 3, wbounds=1.5, nperms=2)
    with pytest.raises(ValueError, match=r"centers must be a \(k, 4\) array"):
        sparse_kmeans(x, wbound=1.5, centers=x[[0, 20, 40], :3])
    # where sparcl's defaults fail, ours run: the permute's default grid on p = 4
    perm = kmeans_sparse_permute(x, 3, nperms=2, nstart=2, rng=0)
    assert perm.table.shape == (10, 4)


def test_single_nonzero_weight_works_where_sparcl_crashes():
    x, runs, _ = load("det_sim3_p100")
    assert "error" in runs["err_km_wbound_1.00001_single_weight"]["output"]
    fit = sparse_kmeans(x, 3, wbound=1.00001, weights="sparcl", rng=0)
    assert fit.labels.nunique() == 3 and "wbound=1.00001" in repr(fit)
    # exact weights: ||w||_1 = 1.00001 leaves a second weight of about 1e-5
    fit = sparse_kmeans(x, 3, wbound=1.00001, rng=0)
    assert fit.labels.nunique() == 3 and fit.weights.sum() == pytest.approx(1.00001)
    # the partition step with exactly one non-zero weight (sparcl's crash)
    w = np.zeros(x.shape[1])
    w[1] = 1.0
    lab = update_labels(
        x,
        3,
        w,
        np.repeat([0, 1, 2], 20),
        algorithm="hartigan-wong",
        rng=np.random.default_rng(0),
        notes=[],
    )
    assert np.unique(lab).size == 3
    # clusters are intervals of the one feature used
    v = x[:, 1]
    spans = sorted((v[lab == c].min(), v[lab == c].max()) for c in range(3))
    assert spans[0][1] < spans[1][0] and spans[1][1] < spans[2][0]


def test_missing_values_where_sparcl_fails():
    x, runs, _ = load("hclust_missing")
    assert "error" in runs["km_na_error"]["output"]
    fit = sparse_kmeans(x, 3, wbound=3, rng=0)
    assert fit.labels.notna().all() and fit.n_nonzero >= 1
    assert np.isfinite(fit.weights).all() and float(fit.weights.sum()) <= 3 + 1e-9
