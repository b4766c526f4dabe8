"""Hartigan–Wong k-means (AS 136, as R's ``kmeans`` runs it), Lloyd and multi-start.

Expected numbers come from R (tests/r_reference/, see its README), from brute force, and
from a plain point-by-point implementation of AS 136 written below from the published
description (Hartigan & Wong 1979), independent of the vectorised code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparseclust._sparse.hartigan_wong import HWResult, hartigan_wong
from sparseclust._sparse.lloyd import kmeans_multi_start, lloyd

REF = Path(__file__).parents[1] / "r_reference"


# --------------------------------------------------------------------------- helpers
def load(case: str) -> tuple[np.ndarray, dict]:
    x = pd.read_csv(REF / case / "input.csv").to_numpy(dtype=np.float64)
    out = json.loads((REF / case / "output.json").read_text())
    assert x.sum() == pytest.approx(out["x_checksum"]["sum"], rel=1e-14)
    return x, {r["id"]: r for r in out["runs"]}


def wcss(x: np.ndarray, labels: np.ndarray) -> float:
    """Total within-cluster sum of squares, directly."""
    return float(sum(((x[labels == j] - x[labels == j].mean(0)) ** 2).sum() for j in set(labels)))


def mixture(rng, n, p, k, sep):
    means = rng.standard_normal((k, p)) * sep
    return means[rng.integers(0, k, n)] + rng.standard_normal((n, p))


def plain_as136(x, centers, max_iter=10, steps_per_point=50):
    """AS 136 one point at a time, as the paper describes it, with R's caps.

    Returns (labels, iterations as R reports them, ifault). Distances are summed
    left to right over the features in double precision.
    """
    x = np.asarray(x, dtype=float)
    c = np.array(centers, dtype=float)
    n, p = x.shape
    k = c.shape[0]

    def sq(i, L):
        s = 0.0
        for a, b in zip(x[i].tolist(), c[L].tolist()):
            s += (a - b) * (a - b)
        return s

    # start: nearest and second-nearest centre (ties: the lower index)
    best, second = [0] * n, [0] * n
    for i in range(n):
        d = [sq(i, L) for L in range(k)]
        a, b = (1, 0) if d[0] > d[1] else (0, 1)
        for L in range(2, k):
            if d[L] < d[b]:
                a, b = (L, a) if d[L] < d[a] else (a, L)
        best[i], second[i] = a, b
    size = [best.count(L) for L in range(k)]
    if min(size) == 0:
        raise ValueError("empty cluster")
    c[:] = 0.0
    for i in range(n):
        c[best[i]] = c[best[i]] + x[i]
    c /= np.array(size, dtype=float)[:, None]

    def loss(L):  # factor of a point leaving cluster L
        return size[L] / (size[L] - 1.0) if size[L] > 1 else np.inf

    def gain(L):  # factor of a point joining cluster L
        return size[L] / (size[L] + 1.0)

    def move(i, frm, to):
        nf, nt = float(size[frm]), float(size[to])
        c[frm] = (c[frm] * nf - x[i]) / (nf - 1.0)
        c[to] = (c[to] * nt + x[i]) / (nt + 1.0)
        size[frm] -= 1
        size[to] += 1
        best[i], second[i] = to, frm

    changed_in_quick = [True] * k  # R's ITRAN
    last_step = [-1] * k  # R's NCP
    live_until = [0] * k  # R's LIVE
    since = [0]  # optimal-transfer steps without a transfer (R's INDX)

    def optimal_transfer():
        for L in range(k):
            if changed_in_quick[L]:
                live_until[L] = n + 1
        for i in range(n):
            step = i + 1
            since[0] += 1
            here = best[i]
            if size[here] > 1:
                stay = sq(i, here) * loss(here)
                target = second[i]
                r2 = sq(i, target) * gain(target)
                for L in range(k):
                    both_dead = step >= live_until[here] and step >= live_until[L]
                    if both_dead or L == here or L == second[i]:
                        continue
                    dl = sq(i, L)
                    if dl < r2 / gain(L):
                        r2, target = dl * gain(L), L
                if r2 < stay:
                    since[0] = 0
                    live_until[here] = live_until[target] = n + step
                    last_step[here] = last_step[target] = step
                    move(i, here, target)
                else:
                    second[i] = target
            if since[0] == n:
                return
        for L in range(k):
            changed_in_quick[L] = False
            live_until[L] -= n

    def quick_transfer():
        quiet, step = 0, 0
        while True:
            for i in range(n):
                quiet += 1
                step += 1
                if step >= steps_per_point * n:
                    return False
                here, there = best[i], second[i]
                if size[here] > 1 and (step < last_step[here] or step < last_step[there]):
                    stay = sq(i, here) * loss(here)
                    if sq(i, there) < stay / gain(there):
                        quiet = 0
                        since[0] = 0
                        changed_in_quick[here] = changed_in_quick[there] = True
                        last_step[here] = last_step[there] = step + n
                        move(i, here, there)
                if quiet == n:
                    return True

    for it in range(1, max_iter + 1):
        optimal_transfer()
        if since[0] == n:
            return np.array(best), it, 0
        if not quick_transfer():
            return np.array(best), it, 4
        if k == 2:
            return np.array(best), it, 0
        last_step[:] = [0] * k
    return np.array(best), max_iter + 1, 2


# ------------------------------------------------------------------------ R parity
def updatecs_case():
    x, runs = load("det_sim3_p100")
    out = runs["updatecs_truth_w5"]["output"]
    ws = np.asarray(out["ws_in"])
    cs = np.asarray(out["Cs_in"])
    z = x[:, ws > 0] * np.sqrt(ws[ws > 0])
    _, first = np.unique(cs, return_index=True)
    mus = np.stack([z[cs == g].mean(axis=0) for g in cs[np.sort(first)]])
    return z, mus, np.asarray(out["Cs_out"])


@pytest.mark.r_reference
def test_r_updatecs_step_is_reproduced_exactly():
    z, mus, cs_out = updatecs_case()
    res = hartigan_wong(z, mus)
    np.testing.assert_array_equal(res.labels + 1, cs_out)
    assert res.converged and res.ifault == 0
    assert round(res.tot_withinss, 3) == 300.347  # README: HW 300.347
    assert res.tot_withinss == pytest.approx(wcss(z, res.labels), rel=1e-12)


@pytest.mark.r_reference
def test_r_updatecs_step_lloyd_differs():
    z, mus, cs_out = updatecs_case()
    res = lloyd(z, mus, max_iter=10)
    assert res.converged
    assert int(np.sum(res.labels + 1 != cs_out)) == 2  # README: Lloyd differs by 2 points
    assert round(res.tot_withinss, 3) == 300.759  # README: Lloyd 300.759


@pytest.mark.r_reference
@pytest.mark.parametrize(
    "run, rows", [("km_centers_seedA", [1, 21, 41]), ("km_centers_bad_start", [1, 2, 3])]
)
def test_r_kmeans_from_data_rows(run, rows):
    # sparcl's initial partition: kmeans(x, centers = x[rows, ]) (Hartigan-Wong)
    x, runs = load("det_sim3_p100")
    res = hartigan_wong(x, x[np.asarray(rows) - 1])
    np.testing.assert_array_equal(res.labels + 1, runs[run]["output"]["Cs_init"])
    # Lloyd from the same rows does not reproduce it
    assert np.any(lloyd(x, x[np.asarray(rows) - 1]).labels + 1 != runs[run]["output"]["Cs_init"])


@pytest.mark.r_reference
def test_r_plain_kmeans_fixed_point():
    x, runs = load("motivating_2d")
    out = runs["plain_kmeans"]["output"]
    res = hartigan_wong(x, np.asarray(out["centers"]))
    np.testing.assert_array_equal(res.labels + 1, out["Cs"])
    assert res.tot_withinss == pytest.approx(out["tot_withinss"], rel=1e-12)
    np.testing.assert_allclose(res.centers, out["centers"], rtol=1e-12)


# ----------------------------------------------------- against plain AS 136 / brute force
def random_case(rng, i):
    n = int(rng.integers(10, 61))
    p = int(rng.integers(1, 6))
    k = int(rng.integers(2, 6))
    if i % 3 == 0:  # small integers: many exact ties
        x = rng.integers(-3, 4, size=(n, p)).astype(float)
    else:
        x = rng.standard_normal((n, p)) + 2.0 * rng.integers(0, 3, size=(n, 1))
    return x, x[rng.choice(n, size=k, replace=False)]


# Code paths of the compiled stages: as chosen (the screen from _SCREEN_MIN_P columns on
# data near the origin, in single precision first from _F32_MIN_P), sequential sums
# only, the double-precision screen from one column on, alone and with every comparison
# too close to call (so each point is re-evaluated on the sequential sums), then the
# single-precision screen from one column on, alone, with every comparison too close
# there (decided by the double-precision screen), and too close in both.
PATHS = {
    "default": {},
    "sequential": {"_SCREEN_MIN_P": 10**9},
    "screened": {"_SCREEN_MIN_P": 1, "_F32_MIN_P": 10**9},
    "screened-all-sequential": {"_SCREEN_MIN_P": 1, "_F32_MIN_P": 10**9, "_TOL_SCALE": 1e15},
    "single": {"_SCREEN_MIN_P": 1, "_F32_MIN_P": 1},
    "single-all-double": {"_SCREEN_MIN_P": 1, "_F32_MIN_P": 1, "_TOL_SCALE32": 1e15},
    "single-all-sequential": {"_SCREEN_MIN_P": 1, "_F32_MIN_P": 1, "_TOL_SCALE": 1e15},
}


@pytest.mark.parametrize("path", list(PATHS))
def test_identical_to_plain_point_by_point_as136(path, monkeypatch):
    import sparseclust._sparse.hartigan_wong as core

    for name, value in PATHS[path].items():
        monkeypatch.setattr(core, name, value)
    rng = np.random.default_rng(136)
    compared = 0
    for i in range(60):
        x, c = random_case(rng, i)
        if np.unique(c, axis=0).shape[0] < c.shape[0]:
            continue
        max_iter = 1 + i % 3 if i % 4 == 0 else 10
        try:
            labels, n_iter, ifault = plain_as136(x, c, max_iter)
        except ValueError:
            with pytest.raises(ValueError, match="empty cluster"):
                hartigan_wong(x, c, max_iter=max_iter)
            continue
        res = hartigan_wong(x, c, max_iter=max_iter)
        np.testing.assert_array_equal(res.labels, labels, err_msg=f"case {i}")
        assert (res.n_iter, res.ifault) == (n_iter, ifault), f"case {i}"
        compared += 1
    assert compared >= 30


def test_identical_to_plain_as136_on_larger_tied_and_offset_data():
    rng = np.random.default_rng(7)
    for i in range(6):
        n, p, k = 150, 3, 4
        if i % 2:  # dyadic values far from the origin: exercises the shifted screen
            x = np.round(rng.standard_normal((n, p)) * 4) / 4 + 1000.0
        else:
            x = rng.integers(-2, 3, size=(n, p)).astype(float)
        c = np.unique(x, axis=0)[rng.choice(np.unique(x, axis=0).shape[0], k, replace=False)]
        labels, n_iter, ifault = plain_as136(x, c)
        res = hartigan_wong(x, c)
        np.testing.assert_array_equal(res.labels, labels)
        assert (res.n_iter, res.ifault) == (n_iter, ifault)


def test_no_single_move_improves_a_converged_partition():
    rng = np.random.default_rng(1979)
    checked = 0
    for _ in range(60):
        n, p, k = int(rng.integers(8, 30)), int(rng.integers(1, 4)), int(rng.integers(2, 5))
        x = rng.standard_normal((n, p))
        try:
            res = hartigan_wong(x, x[rng.choice(n, k, replace=False)])
        except ValueError:
            continue
        assert res.converged
        base = wcss(x, res.labels)
        assert res.tot_withinss == pytest.approx(base, rel=1e-12)
        size = np.bincount(res.labels, minlength=k)
        for i in range(n):
            if size[res.labels[i]] == 1:  # moving it would empty a cluster
                continue
            for L in range(k):
                if L != res.labels[i]:
                    moved = res.labels.copy()
                    moved[i] = L
                    assert wcss(x, moved) >= base * (1 - 1e-12)
        checked += 1
    assert checked >= 50


@pytest.mark.parametrize("screen_from", [1, 10**9])
def test_transfer_rule_closed_form(screen_from, monkeypatch):
    # Point 3.0 is nearer its own centre 1.5 (mean of {0, 3}) than the other one, 4.6
    # (mean of ten points), so Lloyd keeps it; AS 136 moves it because
    # 10/11 * 1.6^2 = 2.327 < 2/1 * 1.5^2 = 4.5 (the within sum of squares drops by the
    # difference). Then 0.0 is a singleton (never moves). On the screened and on the
    # sequential path alike (one column: screened only when forced).
    import sparseclust._sparse.hartigan_wong as core

    monkeypatch.setattr(core, "_SCREEN_MIN_P", screen_from)
    b = 4.6 + np.array([-0.5, -0.4, -0.3, -0.2, -0.1, 0.1, 0.2, 0.3, 0.4, 0.5])
    x = np.concatenate([[0.0, 3.0], b])[:, None]
    start = np.array([[1.5], [4.6]])
    assert lloyd(x, start).labels[:2].tolist() == [0, 0]
    res = hartigan_wong(x, start)
    assert res.labels.tolist() == [0] + [1] * 11
    assert (res.n_iter, res.ifault) == (1, 0)
    before, after = wcss(x, np.array([0, 0] + [1] * 10)), wcss(x, res.labels)
    assert before - after == pytest.approx(2 * 1.5**2 - 10 / 11 * 1.6**2, rel=1e-9)


def test_hartigan_wong_against_lloyd_from_the_same_start():
    rng = np.random.default_rng(2)
    worse = 0
    for _ in range(200):
        n, p, k = int(rng.integers(8, 40)), int(rng.integers(1, 4)), int(rng.integers(2, 5))
        x = rng.standard_normal((n, p))
        c = x[rng.choice(n, k, replace=False)]
        try:
            hw, ll = hartigan_wong(x, c), lloyd(x, c, max_iter=100)
        except ValueError:
            continue
        worse += hw.tot_withinss > ll.tot_withinss * (1 + 1e-12)
        # started from Lloyd's fixed point, Hartigan-Wong can only improve on it
        if ll.converged:
            assert hartigan_wong(x, ll.centers).tot_withinss <= ll.tot_withinss * (1 + 1e-12)
    # Not always: the two can stop in different local optima (HW is worse in 3 of these
    # 200 starts).
    assert worse <= 10


# ------------------------------------------------------------------------ special cases
def test_one_cluster():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 9.0]])
    res = hartigan_wong(x, x[:1])
    assert isinstance(res, HWResult)
    np.testing.assert_array_equal(res.labels, [0, 0, 0])
    np.testing.assert_allclose(res.centers, [[3.0, 5.0]])
    np.testing.assert_allclose(res.wss, [8.0 + 26.0])
    assert (res.n_iter, res.converged, res.ifault) == (1, True, 0)
    assert res.labels.dtype == np.int64


def test_one_column():
    x = np.array([0.0, 0.5, 1.0, 4.0, 4.5, 9.0, 9.5, 10.0])[:, None]
    res = hartigan_wong(x, np.array([[0.0], [4.0], [10.0]]))
    np.testing.assert_array_equal(res.labels, [0, 0, 0, 1, 1, 2, 2, 2])
    np.testing.assert_allclose(res.centers.ravel(), [0.5, 4.25, 9.5])
    np.testing.assert_allclose(res.wss, [0.5, 0.125, 0.5])


def test_ties_go_to_the_lower_centre_and_never_transfer():
    # point 2.0 is equidistant from both centres: the initial step gives it to centre 0;
    # afterwards moving it changes nothing strictly, so it stays
    x = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    res = hartigan_wong(x, np.array([[1.0], [3.0]]))
    labels, _, _ = plain_as136(x, np.array([[1.0], [3.0]]))
    np.testing.assert_array_equal(res.labels, labels)
    np.testing.assert_array_equal(res.labels, [0, 0, 0, 1, 1])
    # duplicated points and symmetric configurations: equal criteria everywhere
    x = np.array([[0.0], [0.0], [1.0], [1.0], [2.0], [2.0], [3.0], [3.0]])
    for c in ([[0.0], [1.0], [3.0]], [[1.0], [2.0]], [[0.0], [2.0], [3.0]]):
        res = hartigan_wong(x, np.array(c))
        np.testing.assert_array_equal(res.labels, plain_as136(x, np.array(c))[0])
    x = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, -1.0], [0.0, 1.0], [0.0, 0.0]])
    res = hartigan_wong(x, np.array([[-1.0, 0.0], [1.0, 0.0]]))
    np.testing.assert_array_equal(res.labels, plain_as136(x, x[:2])[0])


def test_empty_cluster_is_an_error():
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    with pytest.raises(ValueError, match="empty cluster"):
        hartigan_wong(x, np.array([[0.0], [100.0]]))
    with pytest.raises(ValueError, match="empty cluster"):
        lloyd(x, np.array([[0.0], [100.0]]))


def test_invalid_input():
    x = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="not distinct"):
        hartigan_wong(x, np.array([[0.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="between 1 and"):
        hartigan_wong(x, x)
    with pytest.raises(ValueError, match="more cluster centers"):
        hartigan_wong(x, np.arange(10.0).reshape(5, 2))
    with pytest.raises(ValueError, match="same number of columns"):
        hartigan_wong(x, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        hartigan_wong(np.where(x == 3.0, np.nan, x), x[:2])
    with pytest.raises(ValueError, match="positive"):
        hartigan_wong(x, x[:2], max_iter=0)


@pytest.mark.parametrize("steps_per_point", [1, 2, 3])
def test_quick_transfer_step_cap(steps_per_point, monkeypatch):
    # R stops a quick-transfer stage at 50 n steps (ifault 4); a lower cap makes it happen
    import sparseclust._sparse.hartigan_wong as core

    monkeypatch.setattr(core, "_QTRAN_STEPS", steps_per_point)
    rng = np.random.default_rng(4)
    faults = 0
    for i in range(30):
        x, c = random_case(rng, i)
        if np.unique(c, axis=0).shape[0] < c.shape[0]:
            continue
        try:
            labels, n_iter, ifault = plain_as136(x, c, steps_per_point=steps_per_point)
        except ValueError:
            continue
        res = hartigan_wong(x, c)
        np.testing.assert_array_equal(res.labels, labels)
        assert (res.n_iter, res.ifault, res.converged) == (n_iter, ifault, ifault == 0)
        faults += ifault == 4
    assert faults > 0


def test_iteration_cap_is_reported_not_warned():
    z, mus, _ = updatecs_case()  # needs 2 iterations
    assert hartigan_wong(z, mus).n_iter == 2
    res = hartigan_wong(z, mus, max_iter=1)  # pytest turns any warning into an error
    assert (res.converged, res.ifault, res.n_iter) == (False, 2, 2)
    assert res.tot_withinss == pytest.approx(wcss(z, res.labels), rel=1e-12)
    res = lloyd(z, mus, max_iter=1)
    assert (res.converged, res.ifault, res.n_iter) == (False, 2, 2)


def test_high_dimensional_run_matches_plain_as136():
    # the vectorised path with big blocks and the exact one-at-a-time path together
    rng = np.random.default_rng(3)
    x = mixture(rng, 90, 200, 3, 0.2)
    c = x[:3]
    labels, n_iter, ifault = plain_as136(x, c)
    res = hartigan_wong(x, c)
    np.testing.assert_array_equal(res.labels, labels)
    assert (res.n_iter, res.ifault) == (n_iter, ifault)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_structureless_wide_data_with_many_transfers_match_plain_as136(k):
    # no clusters, many columns (single-precision screen), k == 3 (its own OPTRA path),
    # and hundreds of transfers, most of them in the quick-transfer stage
    rng = np.random.default_rng(10 + k)
    x = rng.standard_normal((150, 70))
    c = x[rng.choice(150, size=k, replace=False)]
    labels, n_iter, ifault = plain_as136(x, c)
    res = hartigan_wong(x, c)
    np.testing.assert_array_equal(res.labels, labels)
    assert (res.n_iter, res.ifault) == (n_iter, ifault)


@pytest.mark.parametrize("scale", [1e-30, 1e-3, 1e20])
@pytest.mark.parametrize("offset", [0.0, 1000.0])
def test_wide_data_of_extreme_magnitude_match_plain_as136(scale, offset):
    # 1e-30: the single-precision products underflow (their bound says "too close" and
    # double precision decides); 1e20: squared norms beyond float32's range (no
    # single-precision screen); an offset: the shifted screen
    rng = np.random.default_rng(21)
    x = (mixture(rng, 60, 70, 3, 0.3) + offset) * scale
    c = x[[0, 1, 2]]
    labels, n_iter, ifault = plain_as136(x, c)
    res = hartigan_wong(x, c)
    np.testing.assert_array_equal(res.labels, labels)
    assert (res.n_iter, res.ifault) == (n_iter, ifault)


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e-21, 1e-30, 1e-160, 1e12, 1e20])
@pytest.mark.parametrize("offset", [0.0, 50.0])
def test_product_distances_are_within_their_error_bounds(scale, offset):
    # the screens' distances against the exact squared distances (rational arithmetic):
    # Lloyd's matrix products and the compiled stages' dot products, down to underflow
    from fractions import Fraction

    from sparseclust._sparse.hartigan_wong import (
        _TOL_SCALE32,
        _U32,
        _Screen,
        _screen_norms,
        _single_copy,
        _tolerances,
    )
    from sparseclust._sparse.hartigan_wong_jit import screen_distance

    rng = np.random.default_rng(8)
    x = (rng.standard_normal((40, 80)) + offset) * scale
    c = np.stack([x[:10].mean(axis=0), x[10:25].mean(axis=0), 0.5 * x[25:].mean(axis=0)])
    rows = np.arange(0, 40, 3)

    def exact(c):
        return np.array(
            [
                [
                    float(
                        sum((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(x[i], cj, strict=True))
                    )
                    for cj in c
                ]
                for i in rows
            ]
        )

    moved = c.copy()
    moved[1] = x[7]
    moved[2] *= 1.5
    xq = _screen_norms(x)
    assert xq.size == (0 if offset else 40)  # far from the origin: no compiled screen
    x32 = _single_copy(x, xq)
    assert x32.size == (0 if offset or scale > 1e12 else x.size)  # float32's range
    p = x.shape[1]
    tolf, tola = _tolerances(p)
    prm = np.array([tolf, tola, 0.0, 0.0])
    xqmax = float(xq.max()) if xq.size else 0.0
    prm32 = np.array([tolf + _TOL_SCALE32 * (p + 10) * _U32, tola, (p + 10) * 2.0**-124, xqmax])
    for cen in (c, moved):
        ex = exact(cen)
        scr = _Screen(x)
        scr.set_centers(cen)
        for d, tol in (scr.dist(rows), scr.dist(slice(0, 40, 3))):
            assert (np.abs(d - ex) <= tol[:, None]).all()
        if xq.size:
            cq = np.array([float(cen[j] @ cen[j]) for j in range(3)])
            screens = [(x, cen, prm)]
            if x32.size:
                screens.append((x32, cen.astype(np.float32), prm32))
            for xs, cs, pr in screens:
                for r, i in enumerate(rows.tolist()):
                    got = [screen_distance(xs, i, cs, j, xq, cq, pr) for j in range(3)]
                    d, tol = np.array([g[0] for g in got]), got[0][1]
                    assert (np.abs(d - ex[r]) <= tol).all()


def test_cluster_sums_are_sequential_in_data_order():
    from sparseclust._sparse.hartigan_wong import _seq_cluster_sums

    rng = np.random.default_rng(5)
    for p in (1, 2, 3, 17):
        n = 3000
        # magnitudes over 20 decades: the order of the additions shows in the bits
        x = rng.standard_normal((n, p)) * 10.0 ** rng.integers(-10, 10, size=(n, 1))
        x[rng.random((n, p)) < 0.2] = -0.0
        x[:, 0] = -0.0  # sums of -0.0s: 0.0, as from a sum started at 0.0
        labels = rng.integers(0, 4, n)
        labels[labels == 3] = 2  # cluster 3 stays empty
        expected = np.zeros((4, p))
        for i in range(n):
            expected[labels[i]] += x[i]
        got = _seq_cluster_sums(x, labels, 4)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


# -------------------------------------------------------------------------- multi-start
@pytest.mark.parametrize("algorithm", ["hartigan-wong", "lloyd"])
@pytest.mark.parametrize("init", ["random", "k-means++"])
def test_multi_start_reproducible_and_labelled(algorithm, init):
    rng = np.random.default_rng(11)
    x = mixture(rng, 120, 4, 3, 2.0)
    a = kmeans_multi_start(x, 3, n_init=8, rng=5, algorithm=algorithm, init=init)
    b = kmeans_multi_start(
        x, 3, n_init=8, rng=np.random.default_rng(5), algorithm=algorithm, init=init
    )
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2] == b[2]
    labels, centers, total, info = a
    assert labels.dtype == np.int64
    assert set(labels.tolist()) == {0, 1, 2}
    assert labels[0] == 0  # numbered by first appearance
    assert total == pytest.approx(wcss(x, labels), rel=1e-10)
    for j in range(3):
        np.testing.assert_allclose(centers[j], x[labels == j].mean(axis=0), rtol=1e-10)
    assert info["algorithm"] == algorithm and info["converged"]


@pytest.mark.parametrize("init", ["random", "k-means++"])
def test_gram_lloyd_phase_takes_the_data_space_decisions(monkeypatch, init):
    """Few rows of many features: the multi-start's Lloyd phase runs in the rows' Gram
    space; on continuous data its partitions (re-seeding of emptied clusters included)
    and so the refined result are those of the data-space phase, and the Lloyd WSS
    agree. (Exact ties of distances, on data with repeated values, may be resolved
    differently: the two round differently.)"""
    from sparseclust._sparse import lloyd as lloyd_mod

    gram = lloyd_mod._use_gram
    used = []
    monkeypatch.setattr(lloyd_mod, "_use_gram", lambda *a: used.append(gram(*a)) or used[-1])
    for seed in range(40):
        g = np.random.default_rng(seed)
        n = int(g.integers(12, 60))
        k = int(g.integers(2, 7))
        x = g.normal(size=(n, 3 * n))
        x[:, :10] += g.integers(0, k, n)[:, None] * g.uniform(0, 1.5)
        for algorithm in ("hartigan-wong", "lloyd"):
            a = kmeans_multi_start(x, k, n_init=10, rng=seed, algorithm=algorithm, init=init)
            monkeypatch.setattr(lloyd_mod, "_use_gram", lambda *a: False)
            b = kmeans_multi_start(x, k, n_init=10, rng=seed, algorithm=algorithm, init=init)
            monkeypatch.setattr(
                lloyd_mod, "_use_gram", lambda *a: used.append(gram(*a)) or used[-1]
            )
            np.testing.assert_array_equal(a[0], b[0])
            assert a[2] == pytest.approx(b[2], rel=1e-12)
            np.testing.assert_allclose(a[3]["lloyd_wss"], b[3]["lloyd_wss"], rtol=1e-9, atol=1e-9)
            np.testing.assert_array_equal(a[3]["lloyd_converged"], b[3]["lloyd_converged"])
    assert all(used)  # every call above took the Gram path


@pytest.mark.parametrize("seed", [157, 824, 1680, 2115, 2310])
def test_gram_lloyd_reseeds_emptied_clusters_as_the_data_space_phase(monkeypatch, seed):
    """Starts whose clusters empty during Lloyd (these seeds do) are re-seeded at the
    same farthest points, giving the same labels, centres and WSS."""
    from sparseclust._sparse import lloyd as lloyd_mod

    calls = []
    take = lloyd_mod._take_farthest
    monkeypatch.setattr(lloyd_mod, "_take_farthest", lambda *a: calls.append(1) or take(*a))
    g = np.random.default_rng(seed)
    n, k = int(g.integers(6, 14)), int(g.integers(3, 6))
    p = int(g.integers(2 * n, 3 * n))
    x = g.normal(size=(n, p)) * np.r_[np.ones(2) * 3, np.ones(p - 2) * 0.2]
    starts = np.stack([g.choice(n, k, replace=False) for _ in range(4)])
    mu = x.mean(axis=0)
    xs = x - mu
    want = lloyd_mod._batched_lloyd(lloyd_mod.one_block(x), None, mu, xs[starts], 10)
    assert calls  # a cluster emptied (in the data-space phase; the same in the compiled one)
    got = lloyd_mod._gram_lloyd(xs, starts, 10)
    np.testing.assert_array_equal(got[0][0]["lab"], want[0][0]["lab"])
    np.testing.assert_allclose(np.stack([got[1][s] for s in range(4)]), want[1], atol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12)
    np.testing.assert_array_equal(got[3], want[3])
    np.testing.assert_array_equal(got[4], want[4])


def test_multi_start_as_good_as_sklearn():
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(12)
    for n, p, k, sep in [(300, 5, 3, 1.0), (400, 50, 4, 0.4), (200, 200, 3, 0.2)]:
        x = mixture(rng, n, p, k, sep)
        _, _, total, _ = kmeans_multi_start(x, k, n_init=20, rng=1)
        with threadpool_limits(1):  # sklearn's OpenMP threads are erratic on a busy machine
            sk = KMeans(n_clusters=k, n_init=20, random_state=1).fit(x).inertia_
        assert total <= sk * 1.01


def test_multi_start_hartigan_wong_not_worse_than_lloyd():
    rng = np.random.default_rng(13)
    x = mixture(rng, 200, 10, 4, 0.5)
    hw = kmeans_multi_start(x, 4, n_init=10, rng=3)[2]
    ll = kmeans_multi_start(x, 4, n_init=10, rng=3, algorithm="lloyd")[2]
    assert hw <= ll * (1 + 1e-12)


def test_multi_start_edge_cases():
    x = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [5.0, 5.0], [5.0, 5.1]])
    labels, centers, total, _ = kmeans_multi_start(x, 1, n_init=3, rng=0)
    np.testing.assert_array_equal(labels, [0, 0, 0, 0, 0])
    np.testing.assert_allclose(centers, [x.mean(axis=0)])
    labels, _, _, _ = kmeans_multi_start(x, 2, n_init=5, rng=0)
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1])
    dup = np.array([[1.0], [1.0], [1.0], [2.0]])
    with pytest.raises(ValueError, match="distinct data points"):
        kmeans_multi_start(dup, 3, n_init=2, rng=0)
    with pytest.raises(ValueError, match="algorithm"):
        kmeans_multi_start(x, 2, n_init=2, rng=0, algorithm="elkan")
    with pytest.raises(ValueError, match="init"):
        kmeans_multi_start(x, 2, n_init=2, rng=0, init="forgy")


# ------------------------------------------------------------------ row-space screen
def _row_case(seed):
    g = np.random.default_rng(seed)
    n = int(g.integers(12, 90))
    p, k = int(g.integers(n + 1, 3 * n + 40)), int(g.integers(2, 7))
    groups = g.integers(0, k, n)
    x = g.standard_normal((n, p)) + groups[:, None] * g.uniform(0, 1.5) * (np.arange(p) < 15)
    if seed % 4 == 0:
        x = np.round(x, 1)  # many exact ties between distances
    if seed % 5 == 0:
        x = x + 4.0  # away from the origin
    lab0 = g.integers(0, k, n)
    lab0[:k] = np.arange(k)
    return x, k, lab0


@pytest.mark.parametrize("seed", range(60))
def test_row_screen_makes_the_sequential_decisions(seed):
    """Hartigan-Wong screened in the rows' space returns the same labels, the same kept
    centres (bit for bit: the same transfers in the same order), iterations and ifault
    as without it."""
    from sparseclust._sparse.hartigan_wong import HWRunner, RowScreen

    x, k, lab0 = _row_case(seed)
    xs = x - x.mean(axis=0)
    rs = RowScreen.from_gram(x, xs @ xs.T)
    assert rs is not None
    c0 = np.stack([x[lab0 == j].mean(axis=0) for j in range(k)])
    run = HWRunner(x)
    try:
        want = run.run(c0)
    except ValueError:  # an emptied cluster: the same error with the screen
        with pytest.raises(ValueError):
            run.run(c0, (rs, rs.centres(lab0, k)))
        return
    got = run.run(c0, (rs, rs.centres(lab0, k)))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2:] == want[2:]


@pytest.mark.parametrize("seed", range(8))
def test_row_screen_distances_within_their_bound(seed):
    """|y_i - mean of y over a cluster|^2 is within the screen's base bound of the exact
    squared distance of x_i to the exact mean of the same rows (rational arithmetic)."""
    from fractions import Fraction

    from sparseclust._sparse.hartigan_wong import RowScreen

    x, k, lab0 = _row_case(seed)
    x = x[:14, : x.shape[1]]
    lab0 = np.arange(14) % 3
    xs = x - x.mean(axis=0)
    rs = RowScreen.from_gram(x, xs @ xs.T)
    cy = rs.centres(lab0, 3)
    fx = [[Fraction(v) for v in row] for row in x]
    for j in range(3):
        members = [fx[i] for i in np.flatnonzero(lab0 == j)]
        mean = [sum(col) / len(members) for col in zip(*members, strict=True)]
        for i in range(14):
            exact = float(sum((a - b) ** 2 for a, b in zip(fx[i], mean, strict=True)))
            got = float(((rs.y[i] - cy[j]) ** 2).sum())
            assert abs(got - exact) <= rs.prm[0]
            assert abs(got - exact) <= 1e-9 * (1 + exact)  # and the screen is sharp


def test_row_screen_needs_more_columns_than_rows_and_full_rank():
    from sparseclust._sparse.hartigan_wong import RowScreen

    g = np.random.default_rng(3)
    x = g.standard_normal((20, 10))
    xs = x - x.mean(axis=0)
    assert RowScreen.from_gram(x, xs @ xs.T) is None  # p <= n: nothing to gain
    assert RowScreen.from_gram(x[:0], np.zeros((0, 0))) is None
    # duplicated rows: G + a 11' is singular; when the factor exists in floating point
    # (a tiny pivot) its backward error bound still holds, and the decisions are the same
    from sparseclust._sparse.hartigan_wong import HWRunner

    x = g.standard_normal((20, 50))
    x[5] = x[6]
    x[11] = x[6]
    xs = x - x.mean(axis=0)
    rs = RowScreen.from_gram(x, xs @ xs.T)
    lab0 = np.arange(20) % 3
    c0 = np.stack([x[lab0 == j].mean(axis=0) for j in range(3)])
    want = HWRunner(x).run(c0)
    if rs is not None:
        got = HWRunner(x).run(c0, (rs, rs.centres(lab0, 3)))
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("seed", range(12))
def test_multi_start_refinements_same_with_and_without_the_row_screen(monkeypatch, seed):
    """The multi-start's Hartigan-Wong refinements after the Gram-space Lloyd phase use
    the row screen; without it (``from_gram`` returning None) every output is the same."""
    from sparseclust._sparse.hartigan_wong import RowScreen

    g = np.random.default_rng(100 + seed)
    n = int(g.integers(30, 120))
    x = mixture(g, n, int(g.integers(2 * n, 4 * n)), int(g.integers(2, 5)), 0.3)
    used = []
    real = RowScreen.from_gram.__func__

    def spy(cls, *a):
        out = real(cls, *a)
        used.append(out is not None)
        return out

    monkeypatch.setattr(RowScreen, "from_gram", classmethod(spy))
    lab, cen, tot, info = kmeans_multi_start(x, 3, n_init=10, rng=seed, algorithm="hartigan-wong")
    assert used == [True]
    monkeypatch.setattr(RowScreen, "from_gram", classmethod(lambda cls, *a: None))
    lab2, cen2, tot2, info2 = kmeans_multi_start(
        x, 3, n_init=10, rng=seed, algorithm="hartigan-wong"
    )
    np.testing.assert_array_equal(lab, lab2)
    np.testing.assert_array_equal(cen, cen2)
    assert tot == tot2 and info["n_iter"] == info2["n_iter"]
