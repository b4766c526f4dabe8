"""Calibration fits stopped once they are clearly going to end below k (``stop_below``).

``stop_below=(k, n)`` stops a fit once fewer than ``k`` clusters, and no more than the
pass before (the first pass starts from one cluster), have remained for ``n`` passes
in a row; the calibration's rules (``lam.stop_rules(k)``) use ``(k - 2, 3)``. Checked:
the rule on constructed counts (a fit gaining clusters, or two short of k, is never
stopped), the compiled and numpy loops stop at the same pass, the stop falls where the
unstopped fit's counts say, fits that reach k are never stopped on real data, and
calibrations give the same lambda and fit with the rule as without.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from sparseclust._craft import core, lam
from sparseclust._craft import restarts as restarts_
from sparseclust._craft.front import MISSING, default_rho
from sparseclust._craft.prepared import prepare_table
from sparseclust._data.table import build_table
from sparseclust.datasets import load_dataset

SETTINGS = core.Settings(m=0.5, rho=default_rho(0.5))


@cache
def _data(name: str) -> tuple[core.CraftData, int, float]:
    """A shipped set as CRAFT reads it, its class count k and a lambda calibrated to k."""
    X, y = load_dataset(name, as_frame=False)
    table = build_table(X, missing="native", missing_choices=MISSING, min_rows=2)
    d, k = prepare_table(table, True, 0.01).data, int(y.nunique())
    hi = lam.lambda_hi(d, core.craft_constants(SETTINGS.m, SETTINGS.rho))
    return d, k, lam.calibrated_run(d, SETTINGS, k, 0, hi).lam


def _expected(ks: list[int], k: int, n: int) -> int | None:
    """The pass after which ``stop_below=(k, n)`` stops a fit whose passes leave
    ``ks`` clusters (written out plainly), else None."""
    run, prev = 0, 1
    for t, K in enumerate(ks, 1):
        run = run + 1 if K < k and K <= prev else 0
        prev = K
        if run >= n:
            return t
    return None


def _short(ks: list[int], k: int, n: int) -> list[bool]:
    """The compiled rule after each pass of a trace with these counts."""
    from sparseclust._craft.loop_jit import _short as short

    trace = np.zeros((len(ks), 3))
    trace[:, 1] = ks
    return [bool(short(trace, it, k, n)) for it in range(1, len(ks) + 1)]


def test_rule_on_constructed_counts():
    """A fit gaining a cluster every pass, or staying two short of k for many passes
    (then reaching k), is never stopped by the calibration's rule; one three short
    and gaining none is, after 3 passes."""
    k = 10
    below_k, n = lam.stop_rules(k)["stop_below"]
    assert (below_k, n) == (k - 2, lam.PATIENCE_BELOW)
    climbing = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10]
    two_short = [4, 6, 7, 8, *[8] * 20, 9, 10, 10]
    for ks in (climbing, two_short):
        assert not any(_short(ks, below_k, n)) and _expected(ks, below_k, n) is None
    stuck = [3, 5, 7, 7, 7, 7, 8]
    assert _short(stuck, below_k, n) == [False] * 5 + [True, False]
    assert _expected(stuck, below_k, n) == 6  # pass 3 gained: passes 4-6 are the run
    g = np.random.default_rng(0)
    for _ in range(300):  # the kernel against the plain reading, random walks
        ks = list(np.maximum(1, 4 + np.cumsum(g.integers(-1, 2, size=12))))
        nn = int(g.integers(1, 5))
        fired = _short(ks, 6, nn)
        first = fired.index(True) + 1 if any(fired) else None
        assert first == _expected(ks, 6, nn)


def _counts(monkeypatch, d, lam_, seed, **stops):
    """(fit, the clusters each pass left) of one calibration-style fit."""
    seen = []
    orig = core._passes

    def spy(*a, **kw):
        loop = orig(*a, **kw)
        seen.append([int(t[1]) for t in loop.trace])
        return loop

    monkeypatch.setattr(core, "_passes", spy)
    fit = core.craft_fit(d, lam_, rng=np.random.default_rng(seed), **stops, **SETTINGS.kwargs())
    monkeypatch.setattr(core, "_passes", orig)
    return fit, seen[-1]


def _same_fit(a: core.Fit, b: core.Fit) -> None:
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.objective, b.objective)
    assert (a.n_iter, a.converged, a.aborted) == (b.n_iter, b.converged, b.aborted)
    for f in ("zeta", "sigma", "log_eta", "counts", "v"):
        np.testing.assert_array_equal(getattr(a.state, f), getattr(b.state, f), err_msg=f)


@pytest.mark.parametrize("name", ["zoo", "soybean_large"])
def test_compiled_and_numpy_loops_stop_at_the_same_pass(monkeypatch, name):
    """Fits stopped by ``stop_below`` in the compiled loop and in the numpy loop
    (``COMPILED_CELLS = 0``): the same pass, fit and generator state; the pass is the
    one the unstopped fit's counts give."""
    d, k, ref = _data(name)
    stops = {"stop_below": (k, 2)}
    stopped = 0
    for j, scale in enumerate((0.9, 1.1, 1.25, 1.5, 2.0)):
        free, ks = _counts(monkeypatch, d, scale * ref, j)
        want = _expected(ks, k, 2)
        want = want if want is not None and want < free.n_iter else None
        out = []
        for cells in (core.COMPILED_CELLS, 0):
            monkeypatch.setattr(core, "COMPILED_CELLS", cells)
            rng = np.random.default_rng(j)
            fit = core.craft_fit(d, scale * ref, rng=rng, **stops, **SETTINGS.kwargs())
            out.append((fit, rng.random(3)))
        monkeypatch.undo()
        (a, ra), (b, rb) = out
        _same_fit(a, b)
        np.testing.assert_array_equal(ra, rb)
        if want is None:
            _same_fit(a, free)
        else:
            stopped += 1
            assert a.aborted and not a.converged and a.n_iter == want
            np.testing.assert_array_equal(a.objective[:want], free.objective[:want])
    assert stopped >= 2  # the case this checks occurred


@pytest.mark.parametrize("name", ["zoo", "soybean_large"])
def test_fits_that_reach_k_are_never_stopped(monkeypatch, name):
    """Over lambdas around the calibrated one and several seeds: each fit with the
    calibration's rules equals the fit without ``stop_below`` unless that one ends
    below k (then it is stopped early, aborted, short of k by 3 or more)."""
    d, k, ref = _data(name)
    rules = lam.stop_rules(k)
    without = {key: v for key, v in rules.items() if key != "stop_below"}
    stopped = reached = 0
    for seed in range(4):
        for scale in (0.8, 1.0, 1.25, 1.6, 2.5, 4.0):
            a, _ = _counts(monkeypatch, d, scale * ref, seed, **rules)
            b, ks = _counts(monkeypatch, d, scale * ref, seed, **without)
            if b.state.K >= k or b.aborted:
                _same_fit(a, b)
                reached += 1
            elif a.n_iter < b.n_iter:
                stopped += 1
                assert a.aborted and not a.converged and a.state.K <= k - 3
                assert max(ks[a.n_iter - 1 :]) < k
    assert stopped >= 1 and reached >= 1


@pytest.mark.parametrize(
    ("name", "m"), [("zoo", 0.5), ("soybean_large", 0.5), ("soybean_large", 0.25)]
)
def test_calibration_same_with_and_without_the_rule(monkeypatch, name, m):
    """calibrated_run from the one-cluster lambda and restart_at from its lambda give
    the same lambdas and fits with the rule as without it (on Soybean, K = 19, in
    fewer passes; on Zoo, K = 7, these fits are never 3 short for long)."""
    d, k, _ = _data(name)
    settings = core.Settings(m=m, rho=default_rho(m))
    hi = lam.lambda_hi(d, core.craft_constants(m, settings.rho))
    orig = lam.stop_rules

    passes = []
    spy = core._passes

    def counted(*a, **kw):
        loop = spy(*a, **kw)
        passes.append(loop.n_iter)
        return loop

    def runs() -> tuple[list[core.Fit], int]:
        passes.clear()
        first = lam.calibrated_run(d, settings, k, 0, hi)
        more = [restarts_.restart_at(d, settings, k, s, first.lam) for s in range(1, 9)]
        return [first, *more], sum(passes)

    monkeypatch.setattr(core, "_passes", counted)
    with_rule, n_with = runs()
    monkeypatch.setattr(
        lam, "stop_rules", lambda kk: {x: v for x, v in orig(kk).items() if x != "stop_below"}
    )
    without, n_without = runs()
    assert n_with < n_without if k > 7 else n_with == n_without
    for a, b in zip(with_rule, without, strict=True):
        assert a.lam == b.lam and a.state.K == b.state.K
        _same_fit(a, b)
        assert a.nll == b.nll
        if a.calibration is not None:
            np.testing.assert_array_equal(a.calibration["lam"], b.calibration["lam"])
