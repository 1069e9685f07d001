"""The optimization agent: diagnose, retrieve, propose, three gates, history, stop, output.

The one entry point is `agent.optimize.api.optimize`; `evaluate_candidate` runs gates 1-3 on one
candidate source. docs/optimize.md documents both and the `argus optimize` command.
"""
