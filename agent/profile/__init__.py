"""Profiling on demand (`argus profile`): tasks run in a subprocess worker, locally or over SSH.

The entry point is agent.profile.api.profile; the CLI is agent.profile.cli.main.
"""
