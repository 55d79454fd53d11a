"""KubeSchedulerConfiguration v1: types, decoding, defaults, validation and the legacy Policy translation."""
