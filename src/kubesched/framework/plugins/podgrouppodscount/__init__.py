"""PodGroupPodsCount: placements that fit more of a PodGroup's pods score higher (v1.36, alpha)."""
