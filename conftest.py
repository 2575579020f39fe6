"""Workspace-wide pytest configuration: hypothesis profiles.

``fast`` (default) keeps local runs quick; ``ci`` (selected by ``.ci/run`` through
``HYPOTHESIS_PROFILE=ci``) explores more examples. Neither has a deadline: the suite must
be deterministic on a noisy 2-core machine, and wall-clock deadlines are not.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fast", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))
