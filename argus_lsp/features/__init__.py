"""Language features of the server, one module each (diagnostics, code actions, hover)."""
