"""The scheduling framework: interfaces, runtime, cycle state, node info and the in-tree plugins."""
