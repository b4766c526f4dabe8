"""weights="sparcl", squared distance: Gram products plus the float32 corrections give
the streamed replica's numbers (sparcl's single-precision differences) on full-precision
data, where the corrections are not zero."""

from __future__ import annotations

import numpy as np
import pytest

from sparseclust._sparse.dissimilarity import (
    PairStream,
    SparclSquared,
    first_step,
    get_uw,
    make_operator,
)


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 40)) * np.exp(rng.normal(size=40))  # many binades
    X[:20, :5] += 2.0
    return X


def test_operator_products_are_sparcls(X):
    op, ref = SparclSquared(X, block_size=97), PairStream(X, "squared", single=True)
    w = np.abs(np.random.default_rng(0).normal(size=40))
    u = np.random.default_rng(1).normal(size=ref.npairs)
    np.testing.assert_allclose(op.dw(w), ref.dw(w), rtol=1e-13)
    np.testing.assert_allclose(
        op.utd(u), ref.utd(u), rtol=1e-12, atol=1e-12 * np.abs(ref.utd(u)).max()
    )
    gram = op.gram.dw(w)  # without the corrections: off by the float32 rounding
    assert np.abs(gram - ref.dw(w)).max() > 1e-12 * np.abs(ref.dw(w)).max()


@pytest.mark.parametrize("wbound", [1.5, 3.0, 5.5])
def test_alternation_is_sparcls(X, wbound):
    op = make_operator(X, "squared", "sparcl")
    assert isinstance(op, SparclSquared)
    ref_op = PairStream(X, "squared", single=True)
    got = get_uw(op, wbound, mode="sparcl", first=first_step(op))
    want = get_uw(ref_op, wbound, mode="sparcl")
    assert got.n_iter == want.n_iter
    np.testing.assert_allclose(got.w, want.w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(got.u, want.u, rtol=1e-10, atol=1e-14)
    assert got.crit == pytest.approx(want.crit, rel=1e-12)
    ut = want.u / np.linalg.norm(want.u)
    comp = get_uw(op, wbound, mode="sparcl", uorth=ut)
    np.testing.assert_allclose(
        comp.w, get_uw(ref_op, wbound, mode="sparcl", uorth=ut).w, atol=1e-12
    )


def test_missing_values_keep_the_streamed_replica(X):
    Y = X.copy()
    Y[3, 4] = np.nan
    assert isinstance(make_operator(Y, "squared", "sparcl"), PairStream)


@pytest.mark.parametrize("feature_gram", [True, False])
def test_scores_are_the_gram_products(X, feature_gram, monkeypatch):
    """(D w)'D and ||D w||^2 from X0'X0 (or its rows, beyond the memory budget) equal
    the Gram operator's full products."""
    import sparseclust._sparse.dissimilarity as dis

    if not feature_gram:
        monkeypatch.setattr(dis, "FEATURE_GRAM_BYTES", 0)
    op = SparclSquared(X)
    w = np.abs(np.random.default_rng(4).normal(size=40))
    w[::3] = 0.0
    score, norm2 = op.scores(w)
    dg = op.gram.dw(w)
    assert norm2 == pytest.approx(float(dg @ dg), rel=1e-13)
    want = op.gram.utd(dg)
    np.testing.assert_allclose(score, want, rtol=1e-12, atol=1e-13 * np.abs(want).max())


def test_single_precision_pass_and_threads(X):
    """The float32 pass is the float64 one to ~1e-6 of each product, and the same numbers
    bit for bit on one thread and on two."""
    from threadpoolctl import threadpool_limits

    op = SparclSquared(X, block_size=53)
    rng = np.random.default_rng(5)
    W = np.abs(rng.normal(size=(40, 3)))
    U = rng.normal(size=(2, op.npairs))
    cw, uc = op.corrections(W, U)
    with threadpool_limits(1):
        cw1, uc1 = op.corrections(W, U, dtype=np.float32)
    with threadpool_limits(2):
        cw2, uc2 = op.corrections(W, U, dtype=np.float32)
    np.testing.assert_array_equal(cw1, cw2)
    np.testing.assert_array_equal(uc1, uc2)
    np.testing.assert_allclose(cw1, cw, rtol=0, atol=1e-6 * np.abs(cw).max())
    np.testing.assert_allclose(uc1, uc, rtol=0, atol=1e-6 * np.abs(uc).max())
    assert np.abs(cw).max() > 0 and np.abs(uc).max() > 0


def test_a_step_off_the_recorded_run_gets_exact_passes(X, monkeypatch):
    """Where the second run's vectors are not the recorded ones, each product takes its
    own exact pass: still the streamed replica's fit."""
    import sparseclust._sparse.dissimilarity as dis

    monkeypatch.setattr(dis._Corrected, "_close", staticmethod(lambda a, b: False))
    op = make_operator(X, "squared", "sparcl")
    got = get_uw(op, 3.0, mode="sparcl")
    want = get_uw(PairStream(X, "squared", single=True), 3.0, mode="sparcl")
    assert got.n_iter == want.n_iter
    np.testing.assert_allclose(got.w, want.w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(got.u, want.u, rtol=1e-10, atol=1e-14)


def test_correction_scores_are_the_gram_product(X):
    """e'D of a correction-sized vector in single precision (triangular product): right
    to ~1e-6 of itself."""
    op = SparclSquared(X)
    e = np.random.default_rng(6).normal(size=op.npairs) * 1e-8
    want = op.gram.utd(e)
    np.testing.assert_allclose(op.e_scores(e), want, rtol=0, atol=1e-5 * np.abs(want).max())
