"""``Summary``: named tables plus notes, printable as text, HTML and LaTeX."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import pandas as pd

__all__ = ["Summary"]


@dataclass(frozen=True, eq=False)
class Summary:
    """What ``result.summary()`` returns.

    Attributes
    ----------
    title : str
    call : str
    tables : dict of str -> DataFrame
        Machine-readable tables, e.g. ``s.tables["clusters"]``.
    notes : list of str
        Dropped rows, convergence, scaling and other remarks.

    Examples
    --------
    >>> from sparseclust import dpmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> summary = dpmeans(sparse_sim(rng=1).data, k=3).summary()
    >>> type(summary).__name__, "clusters" in summary.tables
    ('Summary', True)
    """

    title: str
    call: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    float_format: str = "{:.4g}"

    def _fmt(self, df: pd.DataFrame) -> pd.DataFrame:
        def f(v: object) -> object:
            if isinstance(v, float):
                return "NA" if pd.isna(v) else self.float_format.format(v)
            return v

        return df.apply(lambda col: col.map(f)) if len(df) else df

    def __str__(self) -> str:
        lines = [self.title, "=" * len(self.title)]
        if self.call:
            lines.append(f"Call: {self.call}")
        for name, df in self.tables.items():
            lines += ["", f"{name.replace('_', ' ').capitalize()}:", self._fmt(df).to_string()]
        if self.notes:
            lines += ["", "Notes:"] + [f"[{i}] {n}" for i, n in enumerate(self.notes, 1)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        parts = [f"<h4>{html.escape(self.title)}</h4>"]
        if self.call:
            parts.append(f"<p><code>{html.escape(self.call)}</code></p>")
        for name, df in self.tables.items():
            parts.append(f"<h5>{html.escape(name.replace('_', ' ').capitalize())}</h5>")
            parts.append(self._fmt(df).to_html())
        if self.notes:
            items = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
            parts.append(f"<p>Notes:</p><ol>{items}</ol>")
        return "\n".join(parts)

    def as_latex(self) -> str:
        """All tables as LaTeX ``tabular`` blocks (notes as a final paragraph)."""
        out = []
        for name, df in self.tables.items():
            out.append(f"% {name}\n{_latex_table(self._fmt(df))}")
        if self.notes:
            out.append("\n".join(self.notes))
        return "\n".join(out)


def _latex_escape(v: object) -> str:
    text = str(v)
    for a, b in (
        ("\\", r"\textbackslash{}"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("$", r"\$"),
        ("#", r"\#"),
        ("_", r"\_"),
        ("{", r"\{"),
        ("}", r"\}"),
    ):
        text = text.replace(a, b)
    return text


def _latex_table(df: pd.DataFrame) -> str:
    """A plain ``tabular`` (no jinja2 needed, unlike ``DataFrame.to_latex``)."""
    cols = "l" + "r" * df.shape[1]
    head = " & ".join([""] + [_latex_escape(c) for c in df.columns]) + r" \\"
    rows = [
        " & ".join([_latex_escape(i)] + [_latex_escape(v) for v in row]) + r" \\"
        for i, row in zip(df.index, df.itertuples(index=False))
    ]
    return "\n".join(
        [
            rf"\begin{{tabular}}{{{cols}}}",
            r"\hline",
            head,
            r"\hline",
            *rows,
            r"\hline",
            r"\end{tabular}",
        ]
    )
