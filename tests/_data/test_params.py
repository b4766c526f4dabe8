"""Generated from the declarations: every parameter rule of every public function is fed
the values it must reject, through the function itself.

Each public function declares its parameters' rules once (``@rules(...)``, see
``sparseclust/_data/params.py``); ``__rules__`` keeps them on the function. For every
(function, parameter, bad value) the call must raise ``ValueError`` or ``TypeError``
naming the parameter, before any fitting, on data the function otherwise accepts (the
same call with the parameter left at its default runs).
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import sparseclust
from sparseclust._data.params import Rule

RNG = np.random.default_rng(0)
NUM = pd.DataFrame(RNG.normal(size=(12, 3)), columns=["a", "b", "c"])
NUM.iloc[6:, 0] += 4.0
MIXED = NUM.assign(g=pd.Categorical(list("xyzxyzxyzxyz")))
CAT = pd.DataFrame({"g": list("xxyyxxyyxxyy"), "h": list("ppqqppqqpqpq")}).astype("category")
Y = np.arange(12) % 2
LABELS = np.repeat([0, 1], 6)


def _linkage():
    from scipy.cluster.hierarchy import linkage

    return linkage(NUM.to_numpy(), "average")


#: A call each function accepts: (positional args, keyword args) built on demand.
BASE = {
    "build_table": lambda: ((NUM,), {}),
    "color_dendrogram": lambda: ((_linkage(), LABELS), {}),
    "covariate_clustering": lambda: ((NUM,), {"y": Y, "nu": [0.1], "sigma": 1.0}),
    "craft": lambda: ((MIXED,), {"m": 0.5, "lam": 4.0, "n_init": 1}),
    "craft_lambda": lambda: ((MIXED,), {"k": 2}),
    "dp_rf": lambda: ((MIXED,), {"lam": 4.0, "n_init": 1}),
    "dpmeans": lambda: ((NUM,), {"lam": 4.0}),
    "entropy_clustering": lambda: ((CAT,), {"lam": 1.0, "n_init": 1}),
    "farthest_first_lambda": lambda: ((NUM,), {"k": 2}),
    "hclust_sparse_permute": lambda: ((NUM,), {"nperms": 2, "wbounds": [1.2, 1.5]}),
    "kmeans_sparse_permute": lambda: ((NUM, 2), {"nperms": 2, "wbounds": [1.2, 1.5]}),
    "preview_columns": lambda: ((MIXED,), {}),
    "sparse_hclust": lambda: ((NUM,), {"wbound": 1.5}),
    "sparse_hclust_permute": lambda: ((NUM,), {"nperms": 2, "wbounds": [1.2, 1.5]}),
    "sparse_kmeans": lambda: ((NUM, 2), {"wbound": 1.5}),
    "sparse_kmeans_path": lambda: ((NUM, 2), {"wbounds": [1.2, 1.5]}),
    "sparse_kmeans_permute": lambda: ((NUM, 2), {"nperms": 2, "wbounds": [1.2, 1.5]}),
    "sparse_weights": lambda: ((NUM, LABELS, 1.5), {}),
}


def _public_functions() -> dict[str, object]:
    return {
        name: obj
        for name in sparseclust.__all__
        if inspect.isfunction(obj := getattr(sparseclust, name))
    }


def _cases() -> list:
    cases = []
    for fname, func in sorted(_public_functions().items()):
        for pname, rule in sorted(getattr(func, "__rules__", {}).items()):
            for bad in rule.bad_values():
                cases.append(pytest.param(fname, pname, bad, id=f"{fname}-{pname}={bad!r}"))
    return cases


def test_every_public_function_declares_its_rules():
    funcs = _public_functions()
    assert set(funcs) == set(BASE), "a public function without a base call here"
    missing = [name for name, f in funcs.items() if not getattr(f, "__rules__", None)]
    assert not missing, f"public functions without declared rules: {missing}"
    for name, f in funcs.items():
        assert all(isinstance(r, Rule) for r in f.__rules__.values()), name
        # the wrapper keeps the function's own signature (defaults, keyword-only marks)
        assert "checked" not in repr(inspect.signature(f)), name


@pytest.mark.parametrize("fname", sorted(BASE))
def test_base_call_is_accepted(fname):
    """The calls below differ from these only in the parameter under test."""
    func = _public_functions()[fname]
    args, kwargs = BASE[fname]()
    func(*args, **kwargs)


@pytest.mark.parametrize(("fname", "pname", "bad"), _cases())
def test_rule_rejects_bad_value(fname, pname, bad):
    func = _public_functions()[fname]
    args, kwargs = BASE[fname]()
    params = list(inspect.signature(func).parameters)
    pos = params.index(pname)
    if pos < len(args):  # given positionally in the base call: replace it there
        args = (*args[:pos], bad, *args[pos + 1 :])
    else:
        kwargs = {**kwargs, pname: bad}
    with pytest.raises((ValueError, TypeError)) as err:
        func(*args, **kwargs)
    assert pname in str(err.value), str(err.value)


def test_ctrl_c_inside_a_compiled_kernel_reaches_the_caller_as_keyboard_interrupt():
    """numba reports a KeyboardInterrupt raised while its code called back into Python
    as a SystemError caused by it; the public boundary gives the caller the Ctrl-C."""
    from sparseclust._data.params import Int, rules

    def kernel_hit_by_sigint():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise SystemError("returned a result with an exception set") from e

    @rules(k=Int(min=1))
    def fit(k):
        kernel_hit_by_sigint()

    @rules(k=Int(min=1))
    def broken(k):
        raise SystemError("a real internal error")

    with pytest.raises(KeyboardInterrupt) as got:
        fit(1)
    assert isinstance(got.value.__cause__, SystemError)
    with pytest.raises(SystemError, match="real internal"):
        broken(1)


def _sigint_swallowed():
    """What a finaliser or a compiled kernel's error handling can do to a Ctrl-C."""
    import os
    import signal
    import time

    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)  # the handler runs here
    except KeyboardInterrupt:
        pass


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGINT"), reason="needs SIGINT")
def test_a_lost_ctrl_c_still_stops_the_call():
    import signal

    from sparseclust._data.params import Int, check_interrupt, rules

    ran = []

    @rules(k=Int(min=0))
    def fit(k):
        for i in range(k):
            check_interrupt()  # as run_shared does between tasks
            ran.append(i)
            _sigint_swallowed()
        return "finished"

    with pytest.raises(KeyboardInterrupt):
        fit(3)
    assert ran == [0]  # stopped at the next task, not at the end
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert fit(0) == "finished"  # the next call starts clean


def test_a_users_own_sigint_handler_is_left_alone():
    import signal

    from sparseclust._data.params import Int, rules

    seen = []
    mine = lambda signum, frame: seen.append(signum)  # noqa: E731

    @rules(k=Int(min=1))
    def fit(k):
        assert signal.getsignal(signal.SIGINT) is mine
        _sigint_swallowed()
        return "finished"

    old = signal.signal(signal.SIGINT, mine)
    try:
        assert fit(1) == "finished"
    finally:
        signal.signal(signal.SIGINT, old)
    assert seen == [signal.SIGINT]


def test_run_shared_stops_at_the_next_task_after_a_lost_ctrl_c():
    from sparseclust._data.params import watch_sigint
    from sparseclust._engine.parallel import run_shared

    ran = []

    def task(shared, i):
        ran.append(i)
        if i == 1:
            _sigint_swallowed()

    with pytest.raises(KeyboardInterrupt), watch_sigint():
        run_shared(task, None, [(i,) for i in range(5)], n_jobs=1)
    assert ran == [0, 1]


# -------------------------------------------------- unknown keywords (issue 34.2)
@pytest.mark.parametrize("fname", sorted(BASE))
def test_unknown_keyword_names_the_function_and_the_nearest_parameters(fname):
    """Every public function answers a keyword it does not take with its own name, the
    keyword and the parameters nearest to it (all of them when none is near), not
    Python's bare ``got an unexpected keyword argument``."""
    func = _public_functions()[fname]
    args, kwargs = BASE[fname]()
    name = func.__name__  # an alias reports the function it names
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument 'rnd'"):
        func(*args, **kwargs, rnd=0)
    with pytest.raises(TypeError, match=r"parameters: ") as err:
        func(*args, **kwargs, zzzzzz=0)
    params = [
        n
        for n, p in inspect.signature(func).parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    assert all(p in str(err.value) for p in params), str(err.value)


#: (function, arguments, keywords as sparcl / R / scikit-learn users write them, the
#: message expected): sparcl's ``KMeansSparseCluster(x, K, wbounds, nstart, silent,
#: maxiter)``, ``HierarchicalSparseCluster(x, wbound, niter, standardize.arrays, ...)``,
#: ``*.permute(nperms, wbounds)``, ``ColorDendrogram(hc, y)``.
SPELLED = [
    (
        "sparse_kmeans",
        (NUM,),
        {"k": 2, "wbounds": 1.5},
        r"^sparse_kmeans\(\) got an unexpected keyword argument 'wbounds': sparse_kmeans "
        r"takes one bound, wbound=.*kmeans_sparse_permute.* take wbounds=.*Nearest "
        r"parameters: wbound",
    ),
    ("sparse_kmeans", (NUM,), {"K": 2, "wbound": 1.5}, r"sparcl's K is k=.*Nearest parameters: k"),
    ("sparse_kmeans", (NUM, 2), {"wbound": 1.5, "maxiter": 6}, r"maxiter is max_iter="),
    ("sparse_kmeans", (NUM, 2), {"wbound": 1.5, "silent": True}, r"sparse_kmeans prints nothing"),
    ("sparse_kmeans", (NUM, 2), {"wbound": 1.5, "nperms": 5}, r"kmeans_sparse_permute.*nperms="),
    (
        "sparse_kmeans",
        (NUM, 2),
        {"wbound": 1.5, "n_init": 5},
        r"nstart=.*Nearest parameters: nstart",
    ),
    ("sparse_kmeans", (NUM, 2), {"wbound": 1.5, "random_state": 0}, r"is rng="),
    ("sparse_kmeans", (NUM, 2), {"wbound": 1.5, "n_clusters": 2}, r"n_clusters is k="),
    ("sparse_kmeans", (), {"x": NUM, "k": 2, "wbound": 1.5}, r"takes the data first, by position"),
    ("kmeans_sparse_permute", (NUM, 2), {"wbound": 1.5}, r"takes a sequence of bounds, wbounds="),
    ("kmeans_sparse_permute", (NUM, 2), {"silent": True}, r"silent=TRUE is progress=False"),
    ("sparse_kmeans_path", (NUM, 2), {"maxiter": 6}, r"maxiter is max_iter="),
    ("sparse_hclust", (NUM,), {"wbounds": [1.5, 2.0]}, r"sparse_hclust takes one bound, wbound="),
    ("sparse_hclust", (NUM,), {"wbound": 1.5, "maxiter": 15}, r"sparse_hclust caps .* niter="),
    ("sparse_hclust", (NUM,), {"wbound": 1.5, "max_iter": 15}, r"niter="),
    (
        "sparse_hclust",
        (NUM,),
        {"wbound": 1.5, "standardize.arrays": True},
        r"standardize.arrays is standardize_arrays= here",
    ),
    ("hclust_sparse_permute", (NUM,), {"nvals": 5}, r"kmeans_sparse_permute takes nvals="),
    ("hclust_sparse_permute", (NUM,), {"wbound": 1.5}, r"takes a sequence of bounds, wbounds="),
    ("craft", (MIXED,), {"nstart": 5}, r"nstart is n_init="),
    ("craft", (MIXED,), {"K": 2}, r"K is k="),
    ("craft", (MIXED,), {"k.max": 4}, r"k.max is k_max= here"),
    ("dpmeans", (NUM,), {"lambda": 4.0}, r"lambda is lam="),
    ("color_dendrogram", (), {"hc": None, "y": LABELS}, r"hc is the first argument"),
]


@pytest.mark.parametrize(
    ("fname", "args", "kwargs", "match"), SPELLED, ids=[f"{c[0]}-{list(c[2])}" for c in SPELLED]
)
def test_sparcl_and_r_spellings_are_mapped(fname, args, kwargs, match):
    func = _public_functions()[fname]
    with pytest.raises(TypeError, match=match):
        func(*args, **kwargs)


def test_r_spellings_of_values_are_accepted():
    """sparcl's dissimilarity values and R's kmeans algorithm names, in R's case."""
    a = sparseclust.sparse_hclust(NUM, wbound=1.5, dissimilarity="squared.distance")
    b = sparseclust.sparse_hclust(NUM, wbound=1.5, dissimilarity="absolute.value")
    assert (a.dissimilarity, b.dissimilarity) == ("squared", "absolute")
    for spelled, algorithm in [("Hartigan-Wong", "hartigan-wong"), ("Forgy", "lloyd")]:
        fit = sparseclust.sparse_kmeans(NUM, 2, wbound=1.5, algorithm=spelled, rng=0)
        assert fit.algorithm == algorithm
