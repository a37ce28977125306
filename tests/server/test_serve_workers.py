"""``bloge serve --workers N`` as one server: every worker serves the command's options, and a
scrape of ``/metrics`` counts the runs of all of them."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.server.test_serve_command import free_port, serving


def test_workers_answer_for_the_host_they_were_given(app: Path) -> None:
    # 127.0.0.2 is loopback too (served without keys) but none of the default allowed names
    with serving(app, "--host", "127.0.0.2", workers=2, port=free_port()) as url:
        assert url.startswith("http://127.0.0.2:")
        for _ in range(4):  # new connections: the kernel hands them to either worker
            answer = httpx.get(f"{url}/healthz", headers={"Connection": "close"})
            # before: 400 "Host '127.0.0.2' is not served here" from every worker
            assert answer.status_code == 200, answer.text
