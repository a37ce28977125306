"""The composition root: wires bloge from settings, and the ``bloge`` command line."""
