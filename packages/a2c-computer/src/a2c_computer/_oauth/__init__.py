"""Remote MCP servers behind OAuth 2.1: settings, token store, transport auth, ``auth`` CLI."""
