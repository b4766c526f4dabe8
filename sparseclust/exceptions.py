"""Warnings and exceptions raised by sparseclust.

Every warning derives from :class:`SparseclustWarning`, so one line silences them all::

    import warnings, sparseclust
    warnings.simplefilter("ignore", sparseclust.SparseclustWarning)
"""

from __future__ import annotations

__all__ = [
    "CalibrationWarning",
    "ConvergenceWarning",
    "DataWarning",
    "FormulaError",
    "PerformanceWarning",
    "SparseclustWarning",
]


class SparseclustWarning(UserWarning):
    """Base class of every warning issued by sparseclust.

    Examples
    --------
    >>> import warnings
    >>> from sparseclust import DataWarning, SparseclustWarning
    >>> issubclass(DataWarning, SparseclustWarning)
    True
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", SparseclustWarning)  # silence them all
    """


class ConvergenceWarning(SparseclustWarning):
    """An iterative fit stopped at its iteration cap before converging.

    The result is still returned; its ``converged`` attribute is ``False`` and
    ``n_iter`` equals the cap.

    Examples
    --------
    >>> import warnings
    >>> from sparseclust import ConvergenceWarning, sparse_kmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> sim = sparse_sim(rng=1)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", ConvergenceWarning)
    ...     fit = sparse_kmeans(sim.data, 3, wbound=3, max_iter=1, rng=0)
    >>> caught[0].category.__name__, fit.converged
    ('ConvergenceWarning', False)
    """


class CalibrationWarning(SparseclustWarning):
    """Calibrating a penalty to a requested number of clusters could not hit it exactly.

    The fit closest to the request is returned and the number of clusters found is
    reported.

    Examples
    --------
    >>> import warnings
    >>> from sparseclust import CalibrationWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", CalibrationWarning)  # make a miss an error
    """


class DataWarning(SparseclustWarning):
    """Something about the input data deserves attention (e.g. many rows dropped).

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> from sparseclust import DataWarning, build_table
    >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": [1.0] * 4})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", DataWarning)
    ...     table = build_table(df, constant="drop")
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    Columns ['c'] are constant (one distinct value) ... dropped (...).
    """


class PerformanceWarning(SparseclustWarning):
    """The call will run, but another way of making it is much faster.

    For example data small enough for memory sent to a Dask cluster, where every pass
    is a round trip.

    Examples
    --------
    >>> import warnings
    >>> from sparseclust import PerformanceWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", PerformanceWarning)  # a small test cluster
    """


class FormulaError(ValueError):
    """A formula that sparseclust cannot use (left-hand side, interactions, bad terms).

    Examples
    --------
    >>> import pandas as pd
    >>> from sparseclust import FormulaError, build_table
    >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [2.0, 1.0, 3.0]})
    >>> try:
    ...     build_table("y ~ x", data=df)
    ... except FormulaError as err:
    ...     print(err)
    clustering formulas are one-sided; got a left-hand side in 'y ~ x'. Use '~ x'.
    """
