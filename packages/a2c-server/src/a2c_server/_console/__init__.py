"""The read-only office console served at ``/console`` (``a2c-server --console``)."""
