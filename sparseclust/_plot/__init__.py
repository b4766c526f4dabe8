"""Drawing helpers behind sparseclust.plotting (dendrograms).

See docs/architecture.md for the map and the import rule."""
