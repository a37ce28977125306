"""The customer-support agent's operators (``agent-customer-support.bloge``) and how their
results read from the offline model (:mod:`.answers`)."""
