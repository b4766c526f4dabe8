"""Type aliases shared by the public signatures."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import pandas as pd

#: What a method accepts as data: a DataFrame, a 2-D array-like, or a formula string
#: (with ``data=``).
DataLike: TypeAlias = pd.DataFrame | np.ndarray | str | Any
#: Anything :func:`numpy.random.default_rng` accepts (SPEC 7).
RNGLike: TypeAlias = None | int | np.random.Generator | np.random.SeedSequence
Number: TypeAlias = int | float
ArrayLike: TypeAlias = Any
