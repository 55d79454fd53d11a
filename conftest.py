import os

import pytest
from hypothesis import HealthCheck, settings

# One Hypothesis profile for the whole suite: `ci` by default (the README's test command), `thorough` on demand
# (HYPOTHESIS_PROFILE=thorough python3 -m pytest), for the properties that leave max_examples to the profile.
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
settings.register_profile("ci", max_examples=120, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("thorough", max_examples=3000, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(params=["per_node", "batch"])
def batch(request):
    """Run a table through the per-node path and through the vectorised path."""
    return request.param == "batch"
