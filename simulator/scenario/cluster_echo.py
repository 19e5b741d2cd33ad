"""``python -m simulator.scenario.cluster_echo --name 10.2.0.1 --port 8080``: one echo server in a Pod.

The ``cluster`` backend runs it (in the controller image, which carries the simulator) for each
endpoint address of a scenario's EndpointSlices; it answers with that address as its name, so that
``traffic.backend`` expectations read the same on every backend.
"""

from __future__ import annotations

import argparse
import asyncio

from simulator.local.echo import EchoServer


async def serve(name: str, host: str, port: int) -> None:
    echo = await EchoServer(name, host, port).start()
    print(f"echo {name} serving on {echo.address}", flush=True)
    await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--name", required=True)
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    asyncio.run(serve(args.name, args.host, args.port))


if __name__ == "__main__":
    main()
