"""What a compiled CRAFT fit keeps between fits on one block (``core._loop_buffers``:
the loop's buffers, the uniforms last drawn and the generator state they came from)
changes no fit: a fit after others equals the same fit on a fresh store, bit for bit,
leaves its generator in the same state, and hands back nothing the next fits overwrite.
"""

from __future__ import annotations

import numpy as np

import sparseclust._craft.core as core


def _data(seed: int = 0, n: int = 240) -> core.CraftData:
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, 3)) + 2.5 * (np.arange(n) % 3)[:, None]
    X[g.random(X.shape) < 0.05] = np.nan
    codes = (g.integers(0, 2, size=(n, 3)) + np.arange(n)[:, None]) % np.array([3, 4, 2])
    return core.prepare(X, codes, [3, 4, 2], alpha=0.01)


def _fit(data, lam, seed=5, **kw):
    rng = np.random.default_rng(seed)
    fit = core.craft_fit(data, lam, rng=rng, m=0.4, rho=0.2, **kw)
    return fit, rng.bit_generator.state


def _record(fit):
    st = fit.state
    return [fit.labels, fit.objective, fit.sizes, st.zeta, st.sigma, st.log_eta, st.counts, st.v]


def _fresh() -> None:
    core._LOOP_BUFFERS.__dict__.clear()


def test_fit_does_not_depend_on_earlier_fits():
    data = _data()
    _fresh()
    want = [(_fit(data, lam), lam) for lam in (40.0, 8.0)]
    # fits at small lambdas first: many candidates grow the buffers and the uniforms held
    for lam in (0.05, 1.0, 0.05):
        _fit(data, lam, seed=1)
    for (fit0, state0), lam in want:
        fit, state = _fit(data, lam)
        for a, b in zip(_record(fit0), _record(fit)):
            np.testing.assert_array_equal(a, b)
        assert state == state0  # the generator where the fit's draws leave it


def test_same_seed_twice_reuses_the_uniforms_with_the_same_result():
    data = _data(1)
    _fresh()
    (a, sa), (b, sb) = _fit(data, 2.0), _fit(data, 2.0)
    for x, y in zip(_record(a), _record(b)):
        np.testing.assert_array_equal(x, y)
    assert sa == sb
    # a fit from another generator state draws its own
    (c, _) = _fit(data, 2.0, seed=9)
    _fresh()
    (d, _) = _fit(data, 2.0, seed=9)
    for x, y in zip(_record(c), _record(d)):
        np.testing.assert_array_equal(x, y)


def test_results_are_not_overwritten_by_later_fits():
    data = _data(2)
    _fresh()
    fit, _ = _fit(data, 3.0)
    kept = [np.array(a, copy=True) for a in _record(fit)]
    for lam in (0.1, 3.0, 30.0):
        _fit(data, lam, seed=11)
    for a, b in zip(kept, _record(fit)):
        np.testing.assert_array_equal(a, b)


def test_seeded_fit_after_calibration_fits():
    data = _data(3)
    _fresh()
    want = core.seeded_fit(data, 3, rng=np.random.default_rng(4), m=0.4, rho=0.2)
    _fit(data, 0.2, seed=2)
    got = core.seeded_fit(data, 3, rng=np.random.default_rng(4), m=0.4, rho=0.2)
    for a, b in zip(_record(want), _record(got)):
        np.testing.assert_array_equal(a, b)
    assert got.lam == want.lam


def test_generators_whose_state_holds_arrays():
    """A Mersenne Twister's (or Philox's) state holds arrays: compared element by
    element when a fit looks for the uniforms it may reuse."""
    data = _data(4)
    _fresh()
    for bit_generator in (np.random.MT19937, np.random.Philox):
        runs = []
        for _ in range(2):
            rng = np.random.Generator(bit_generator(3))
            fit = core.craft_fit(data, 2.0, rng=rng, m=0.4, rho=0.2)
            runs.append((_record(fit), rng.random()))
        for a, b in zip(runs[0][0], runs[1][0]):
            np.testing.assert_array_equal(a, b)
        assert runs[0][1] == runs[1][1]


def _numpy_path(fit_call):
    old, core.COMPILED_CELLS = core.COMPILED_CELLS, 0
    try:
        return fit_call()
    finally:
        core.COMPILED_CELLS = old


def test_final_costs_of_fits_stopped_early():
    """Fits whose last pass's costs are not the final ones (stopped by the cluster cap or
    at max_iter) take their final costs from the loop's compiled costs: the objective,
    the likelihood and a seeded fit's lambda equal the numpy path's."""
    data = _data(5)
    calls = [
        lambda: core.craft_fit(
            data, 0.3, rng=np.random.default_rng(2), m=0.4, rho=0.2, max_clusters=4, with_nll=True
        ),
        lambda: core.craft_fit(
            data, 4.0, rng=np.random.default_rng(2), m=0.4, rho=0.2, max_iter=1, with_nll=True
        ),
        lambda: core.seeded_fit(
            data, 4, rng=np.random.default_rng(6), m=0.4, rho=0.2, max_iter=1, with_nll=True
        ),
    ]
    for call in calls:
        got, want = call(), _numpy_path(call)
        assert not got.converged
        for a, b in zip(_record(got), _record(want)):
            np.testing.assert_array_equal(a, b)
        assert (got.nll, got.lam) == (want.nll, want.lam)
