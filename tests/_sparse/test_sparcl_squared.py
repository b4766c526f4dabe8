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
