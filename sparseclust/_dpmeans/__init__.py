"""DP-means: front, core passes, farthest-first lambda, result.

See docs/architecture.md for the map and the import rule."""
