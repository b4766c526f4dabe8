"""CRAFT: front, core, restarts, K selection, lambda, variants (DP-RF, entropy).

See docs/architecture.md for the map and the import rule."""
