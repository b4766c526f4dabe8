"""Sparse k-means and sparse hierarchical clustering (Witten & Tibshirani 2010).

See docs/architecture.md for the map and the import rule."""
