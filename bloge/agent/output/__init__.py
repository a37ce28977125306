"""Typed results: an agent's output schema, how answers are checked against it, and the
problems sent back to the model when one does not fit."""
