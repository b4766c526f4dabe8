"""Selection rules shared by methods: the gap statistic, lambda calibration.

See docs/architecture.md for the map and the import rule."""
