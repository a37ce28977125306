"""The runtime chapter's example: an ``Agent`` with a mock model and one tool, behind
``POST /chat``."""
