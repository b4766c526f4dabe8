"""Where passes run: row blocks in memory, joblib, BLAS threads, the Dask executor.

See docs/architecture.md for the map and the import rule."""
