"""The streaming data-analyst agent's operators (``streaming-analysis-agent.bloge``)."""
