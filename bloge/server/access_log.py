"""The access log ``bloge serve`` writes: uvicorn's, with the credentials a request's query
may carry (``?api_key=``, ``?key=``, ``?token=``, …) masked, as every other log line's are.

A client that cannot send headers (a browser's ``EventSource``, a webhook) puts its key in the
query; uvicorn logs each request line whole. :class:`MaskedQueries` is a logging filter on
``uvicorn.access``; :func:`log_config` is uvicorn's own logging configuration with it
installed, given to ``uvicorn.run(log_config=…)`` so that every worker process has it.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from bloge.core.masking import mask_url_credentials

#: uvicorn's access record: its ``args`` are (client, method, path with query, HTTP version,
#: status); the path is the third.
_PATH = 2


class MaskedQueries(logging.Filter):
    """Masks the credentials in the query of an access record's path (never drops one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) > _PATH:
            path = args[_PATH]
            if isinstance(path, str):
                record.args = (*args[:_PATH], mask_url_credentials(path), *args[_PATH + 1:])
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's default logging configuration, its access handler filtered by
    :class:`MaskedQueries`."""
    from uvicorn.config import LOGGING_CONFIG  # noqa: PLC0415 -- the extra [server]

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["masked_queries"] = {"()": f"{__name__}.MaskedQueries"}
    config["handlers"]["access"].setdefault("filters", []).append("masked_queries")
    return config
