"""a2c_demo (private)."""
