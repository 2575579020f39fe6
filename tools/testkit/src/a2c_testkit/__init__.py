"""a2c_testkit (private)."""
