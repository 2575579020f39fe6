"""The desktop: window metadata, the organize algorithm, rendering, and the window lint.

Pure rules plus the desk (:class:`~._windows.Desk`), the sole owner of the window lists.
May import ``_mcp``; never ``_server_link`` or ``_toolcalls``.
"""
