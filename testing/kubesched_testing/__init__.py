"""What kubesched's tests and benchmarks share: fixtures, a stand-in API server, the control plane, parity.

Not part of the product: it lives outside src/, so neither the wheel nor the image holds it, and an
import-linter contract keeps kubesched from importing it. pytest finds it through pyproject's
`pythonpath`; the bench scripts put this folder on sys.path themselves.
"""
