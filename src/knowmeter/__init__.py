"""knowmeter: measure whether a change to an agent's knowledge made the agent better."""

__version__ = "0.1.0"
