"""Workspace-wide pytest configuration: hypothesis profiles.

``fast`` (default) keeps local runs quick; ``ci`` (selected by ``.ci/run`` through
``HYPOTHESIS_PROFILE=ci``) explores more examples. Neither has a deadline: the suite must
be deterministic on a noisy 2-core machine, and wall-clock deadlines are not.
"""

import os
import tempfile

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fast", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# 150 derandomized examples: CI sees the same cases on every run, and the whole of
# .ci/run must stay under 15 minutes on a 2-core machine (300 cost ~2 minutes more).
settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

# Computers keep skills under the user's data directory by default: tests (and the
# processes they start) get a private one, so neither the developer's skills leak in
# nor test skills out.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="a2c-test-data-")
