"""Convex covariate clustering for classification: front, ADMM core, selection.

See docs/architecture.md for the map and the import rule."""
