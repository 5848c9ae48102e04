"""``ranked serve`` and ``ranked demo``: the service under granian's server, embedded."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import click

from ._options import data_dir_option

__all__ = ["demo", "http_server", "serve"]


def _service_options(function: Any) -> Any:
    for option in reversed(
        [
            click.option("--host", default=None, help="Address to listen on [default: 127.0.0.1]."),
            click.option("--port", type=int, default=None, help="TCP port [default: 8080]."),
            click.option(
                "--live-port",
                type=int,
                default=None,
                help="A second port for the live channels only, cheaper per message"
                " [default: 0: none].",
            ),
            click.option(
                "--backend",
                default=None,
                help="memory:// (default), redis://... or redis+cluster://...",
            ),
            click.option(
                "--journal",
                default=None,
                help="sqlite:///path or postgresql://... [default: <data dir>/journal.db].",
            ),
            click.option(
                "--durability",
                type=click.Choice(["always", "batch", "none"]),
                default=None,
                help="When a write is answered [default: always: once fsynced].",
            ),
            click.option(
                "--max-delay-ms",
                type=int,
                default=None,
                help="batch: the longest a write waits to be committed [default: 10].",
            ),
            click.option(
                "--snapshot-every",
                type=int,
                default=None,
                help="Snapshot a memory:// board every this many events [default: 100000].",
            ),
            click.option(
                "--log-level",
                type=click.Choice(["debug", "info", "warning", "error"]),
                default=None,
                help="[default: info].",
            ),
            click.option(
                "--config",
                "config_file",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                help="A TOML file of settings [default: <data dir>/ranked.toml if it exists].",
            ),
        ]
    ):
        function = option(function)
    return function


def _run(flags: dict[str, Any], data_dir: Path, demo_mode: bool) -> None:
    import logging

    import uvloop

    from ..service.app import Service
    from ..service.config import ConfigError, load

    flags = {**flags, "config": flags.pop("config_file"), "data_dir": data_dir}
    try:
        config = load(flags)
    except ConfigError as error:
        raise click.UsageError(str(error)) from None
    logging.basicConfig(
        level=config.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    service = Service(config)
    service.on_started.append(_settle_collector)
    if demo_mode:
        from ..service.demo import Demo

        Demo(service).install()
    uvloop.run(_serve(service))


_COLLECTOR_THRESHOLDS: Final = (10_000, 10, 100)
"""The cyclic collector's thresholds while serving (CPython's defaults: 700, 10, 10).

A request allocates a few dozen containers, so the defaults ran a young collection every
few dozen requests and a full one, which walks every live object (the boards' limiter
and guard state included), every few thousand (benchmarks/RESULTS-service.md). Memory
is freed by reference counting either way; only cyclic garbage waits longer."""


async def _settle_collector() -> None:
    """Once the boards are restored: what startup built lives as long as the process,
    so it leaves the collector's generations (``gc.freeze``), and later collections run
    less often (:data:`_COLLECTOR_THRESHOLDS`)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(*_COLLECTOR_THRESHOLDS)


_CHANNELS_GRACE: Final = 2.0
"""How long a stop waits for the live channels' close frames before stopping the server."""


def http_server(app: Any, host: str, port: int, log_level: str = "warning") -> Any:
    """granian's server, embedded in this process and its event loop, serving the ASGI
    application ``app`` as ``ranked serve`` serves it (HTTP/1.1, WebSockets, no access
    log). ``benchmarks/service.py`` serves its bare endpoints with it too, so that they
    share the service's server stack."""
    import logging

    from granian.constants import HTTPModes, Interfaces
    from granian.log import LogLevels
    from granian.server.embed import Server

    server = Server(
        app,
        address=host,
        port=port,
        interface=Interfaces.ASGI,
        http=HTTPModes.http1,
        websockets=True,
        log_access=False,
        log_level=LogLevels(log_level),
        backlog=1024,
    )
    logging.getLogger("_granian").setLevel(logging.ERROR)  # "embedded is experimental"
    return server


async def _serve(service: Any) -> None:
    """Serve ``service`` with granian's server embedded in this process and its event
    loop (by measurement: benchmarks/RESULTS-service-stack.md), until SIGTERM or SIGINT:
    then it stops accepting, finishes what is in flight, and the application's lifespan
    shutdown snapshots and closes the boards."""
    import asyncio
    import logging
    import signal

    config = service.config
    server = http_server(service, config.host, config.port, config.log_level)
    loop = asyncio.get_running_loop()

    fast = None
    if config.live_port:  # the live channels' own listener, once the boards are open
        from ..service.fastlive import FastLive

        fast = FastLive(service.live)
        try:
            fast.bind(config.host, config.live_port)
        except OSError as error:
            message = f"cannot listen on live_port {config.live_port}: {error}"
            raise click.UsageError(message) from None
        service.on_started.append(fast.start)

    async def stop_after_channels() -> None:
        # the live channels close first (1001) and their close frames go out before the
        # server stops: the server's drain does not wait on them, and would cut them
        service.stopping()
        await service.hub.drained(_CHANNELS_GRACE)
        if fast is not None:
            await fast.stop(_CHANNELS_GRACE)
        server.stop()

    def stop() -> None:
        stopping.append(loop.create_task(stop_after_channels()))

    stopping: list[asyncio.Task[None]] = []

    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop)
    await server.serve()
    logging.getLogger("ranked.service").info("ranked serve stopped")


@click.command()
@data_dir_option
@_service_options
def serve(data_dir: Path, **flags: Any) -> None:
    """Run the leaderboard service (HTTP API, /docs, /metrics) until stopped.

    With no settings: boards in memory, journaled to <data dir>/journal.db (every answered
    write survives a crash), restored at start. Ctrl-C or SIGTERM stops it gracefully:
    in-flight requests finish, boards are snapshotted."""
    _run(flags, data_dir, demo_mode=False)


@click.command()
@data_dir_option
@_service_options
def demo(data_dir: Path, **flags: Any) -> None:
    """Run the service with simulated players submitting to a few boards, and print where
    to look and a curl to try. Stays up until Ctrl-C."""
    _run(flags, data_dir, demo_mode=True)
