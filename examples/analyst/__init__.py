"""The streaming data-analyst agent's operators (``streaming-analysis-agent.bloge``) and what
it teaches the offline model (:mod:`.answers`, :mod:`.queries`)."""
