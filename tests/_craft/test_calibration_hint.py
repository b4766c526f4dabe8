"""Lambda calibrated from a hint (a lambda already calibrated to k on another restart)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparseclust import craft
from sparseclust._craft import core, lam
from sparseclust._craft import restarts as restarts_
from sparseclust._craft.front import default_rho
from sparseclust._craft.prepared import prepare_table as _prepare
from sparseclust._data.table import build_table
from sparseclust._tuning.penalty import calibrate_lambda
from sparseclust.exceptions import CalibrationWarning
from sparseclust.simulate import craft_fig2a


def clusters(lam_: float) -> int:
    """A monotone count: 1 cluster above 100, k clusters on (100 / k, 100 / (k - 1)]."""
    return int(np.ceil(100.0 / lam_))


@pytest.mark.parametrize("start", [33.4, 30.0, 1.0, 1e-3, 99.0, 1e4, 1e9])
def test_hint_reaches_exactly_k(start):
    """From a hint inside, below or far above the lambdas giving k: k is reached, the
    steps (1.25, its square, ...) bracket it and bisection finishes."""
    calls = []

    def fit(x):
        calls.append(x)
        return clusters(x)

    res, got, trace = calibrate_lambda(fit, lambda r: r, 3, start=start, max_fits=60)
    assert res == 3 and 100 / 3 <= got < 50
    assert trace["lam"].iloc[0] == start and list(trace["lam"]) == calls
    assert trace["n_clusters"].iloc[-1] == 3
    if 100 / 3 <= start < 50:
        assert len(trace) == 1  # the hint gives k: one fit


def test_hint_steps_grow():
    """The steps away from a hint square: step, step^2, step^4 (no bisection needed)."""
    _, _, trace = calibrate_lambda(lambda x: x, lambda r: 1 if r >= 100 else 5, 1, start=1.0)
    ratios = (trace["lam"].to_numpy()[1:] / trace["lam"].to_numpy()[:-1]).tolist()
    assert ratios[:4] == pytest.approx([1.25, 1.25**2, 1.25**4, 1.25**8])
    assert trace["n_clusters"].iloc[-1] == 1 and trace["lam"].iloc[-2] < 100


def test_hint_skipping_k_warns_with_the_nearest():
    """A count that jumps over k: every fit is spent, the nearest returned and warned
    (warn=True), not warned with warn=False."""

    def fit(x):
        return 1 if x > 10 else 3

    with pytest.warns(CalibrationWarning, match="no lambda gave exactly k=2 clusters after 8"):
        res, got, trace = calibrate_lambda(fit, lambda r: r, 2, start=12.0, max_fits=8)
    assert len(trace) == 8 and res in (1, 3)
    assert 10 < trace["lam"].max() and trace["lam"].min() <= 10  # bracketed, then bisected
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calibrate_lambda(fit, lambda r: r, 2, start=12.0, max_fits=8, warn=False)


def test_hint_or_hi_exactly_one():
    with pytest.raises(ValueError, match="exactly one of hi= .* and start="):
        calibrate_lambda(clusters, lambda r: r, 3)
    with pytest.raises(ValueError, match="exactly one of hi="):
        calibrate_lambda(clusters, lambda r: r, 3, hi=100.0, start=10.0)
    with pytest.raises(ValueError, match="step"):
        calibrate_lambda(clusters, lambda r: r, 3, start=10.0, step=1.0)


def test_hi_path_unchanged():
    """From hi: halved until k or more clusters, then bisected (the first calibration)."""
    _, got, trace = calibrate_lambda(clusters, lambda r: r, 3, hi=400.0)
    assert list(trace["lam"][:4]) == [400.0, 200.0, 100.0, 50.0]
    assert clusters(got) == 3


def test_restart_at_recalibrates_from_the_reference_lambda():
    """A restart landing elsewhere at the reference lambda is re-calibrated from it:
    its trace starts there (that fit, reused), it ends at k, in at most 8 fits."""
    sim = craft_fig2a(rng=0)
    d = _prepare(build_table(sim.data, min_rows=2), True, 0.01).data
    settings = core.Settings(m=1 / 3, rho=default_rho(1 / 3))
    consts = core.craft_constants(settings.m, settings.rho)
    seeds = np.random.default_rng(0).spawn(12)
    ref = lam.calibrated_run(d, settings, 3, seeds[0], lam.lambda_hi(d, consts)).lam
    moved = 0
    for seed in seeds[1:]:
        out = restarts_.restart_at(d, settings, 3, seed, ref)
        if out.calibration is not None:  # it landed elsewhere at ref
            moved += 1
            assert out.calibration["lam"].iloc[0] == ref and len(out.calibration) <= 8
            assert out.calibration["n_clusters"].iloc[0] != 3
            if out.state.K == 3:
                assert out.calibration["n_clusters"].iloc[-1] == 3
        else:
            assert out.state.K == 3 and out.lam == ref
    assert moved >= 1  # the case this checks occurred
    fit = craft(sim.data, m=1 / 3, k=3, rng=0, n_init=12, n_seeded=0)
    assert (fit.restarts["n_clusters"] == 3).sum() >= 6
