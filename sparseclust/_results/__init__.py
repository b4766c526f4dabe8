"""The result base class, Summary, and the shared text formatting.

See docs/architecture.md for the map and the import rule."""
