"""An example out-of-tree kubesched plugin package (see docs/plugins.md)."""
