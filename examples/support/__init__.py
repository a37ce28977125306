"""The customer-support agent's operators (``agent-customer-support.bloge``)."""
