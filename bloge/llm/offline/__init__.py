"""The offline default model: a deterministic, rule-based ``LlmProvider`` that needs no
network or key and does real work through an agent's tools.

:mod:`.words` reads words for matching; :mod:`.phrases` reads argument values out of a
message.
"""
