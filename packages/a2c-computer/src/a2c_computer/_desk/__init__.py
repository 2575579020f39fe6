"""The desktop: window metadata, the organize algorithm, rendering, and the window lint.

Pure rules plus the core's window list. May import ``_mcp`` and the core's shared base
(``_core``); never ``_server_link`` or ``_toolcalls``.
"""
