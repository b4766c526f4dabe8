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
    """Base class of every warning issued by sparseclust."""


class ConvergenceWarning(SparseclustWarning):
    """An iterative fit stopped at its iteration cap before converging.

    The result is still returned; its ``converged`` attribute is ``False`` and
    ``n_iter`` equals the cap.
    """


class CalibrationWarning(SparseclustWarning):
    """Calibrating a penalty to a requested number of clusters could not hit it exactly.

    The fit closest to the request is returned and the number of clusters found is
    reported.
    """


class DataWarning(SparseclustWarning):
    """Something about the input data deserves attention (e.g. many rows dropped)."""


class PerformanceWarning(SparseclustWarning):
    """The call will run, but another way of making it is much faster (e.g. data small
    enough for memory sent to a Dask cluster, where every pass is a round trip)."""


class FormulaError(ValueError):
    """A formula that sparseclust cannot use (left-hand side, interactions, bad terms)."""
