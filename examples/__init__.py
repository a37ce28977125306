"""Example applications built on bloge: each folder holds an agent's DSL file, its operators
and the hooks that teach the offline model its results (registered in ``settings.yaml``).

- ``examples.support``: the customer-support agent (knowledge-base search, tickets, escalation).
- ``examples.analyst``: the streaming data-analyst agent (metrics and read-only SQL).

The ``.bloge`` files are the public example agents, copied unchanged.
"""
