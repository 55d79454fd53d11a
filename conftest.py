import pytest


@pytest.fixture(params=["per_node", "batch"])
def batch(request):
    """Run a table through the per-node path and through the vectorised path."""
    return request.param == "batch"
