"""What stands in for kube-apiserver when `simulate` reads manifests: safe YAML, strict decoding against v1.36's
OpenAPI field types, defaulting, admission and validation.

It sits below the embedded cluster and the simulator and imports neither, so the same checks serve the input,
the objects controllers create and the UI's edits, and a newcomer can read it as upstream's apiserver alone.
"""
