"""The front: formula, column types, the typed column table, parameter rules.

See docs/architecture.md for the map and the import rule."""
