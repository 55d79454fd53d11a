"""TopologyPlacementGenerator: one placement per topology domain of a PodGroup's constraint (v1.36, alpha)."""
