"""Profile one configuration of bench_streams.py with py-spy (pip install py-spy):

    nice .venv/bin/python bench/profile_streams.py "bloge memory  runs" 500 out.txt
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_streams as bench


def main() -> None:
    name, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    config = next(c for c in bench.CONFIGS if c.name == name)
    upstream_port = bench.free_port()
    model = subprocess.Popen([sys.executable, bench.__file__, "upstream", str(upstream_port)])
    bench.wait_for(upstream_port, model)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            server = bench.Server(config, upstream_port, Path(workdir))
            spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record",
                                    "-p", str(server.process.pid), "-r", "200", "-f", "raw",
                                    "-o", out, "--nonblocking"])
            try:
                print(asyncio.run(bench.load(server, config, count)))
            finally:
                spy.send_signal(2)
                spy.wait()
                server.stop()
    finally:
        model.terminate()
        model.wait()


if __name__ == "__main__":
    main()
