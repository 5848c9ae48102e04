"""A real webhook receiver for the tests: ``http.server`` in a thread on a free loopback
port, recording every POST (arrival time, headers, body) and failing the first ones as
told: ``fail`` is a list of what the first attempts get (a status, or ``"drop"``: the
connection is closed without an answer); later attempts get 200, with ``body`` (JSON)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    at: float
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self, fail: list[int | str] | None = None, body: bytes = b"") -> None:
        self.fail = list(fail or [])
        self.body = body
        self.received: list[Received] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.received.append(
                        Received(
                            time.monotonic(), {k.lower(): v for k, v in self.headers.items()}, body
                        )
                    )
                    answer = receiver.fail.pop(0) if receiver.fail else 200
                if answer == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                assert isinstance(answer, int)
                content = receiver.body if answer == 200 else b""
                self.send_response(answer)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/hook"

    def wait(self, count: int, timeout: float = 20.0) -> list[Received]:
        """The first ``count`` requests, once they have arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.01)
        raise AssertionError(f"{len(self.received)} requests arrived, not {count}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
