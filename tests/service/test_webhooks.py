"""Webhook deliveries against a real local HTTP receiver: retried after failures (error
statuses and dropped connections) with the backoff's bounds, the same id and body on
every attempt, a signature that verifies with the board's secret and not with another,
the bounded outbox, and a sender that never waits."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ranked.notify import verify
from ranked.service.webhooks import WebhookLimits, WebhookSender, backoff_bound
from receiver import Receiver

SECRET = "a-board-secret-of-32-characters!"
PAYLOAD = {"type": "notification", "id": "0123456789abcdef0123456789abcdef", "member": "ann"}


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[Receiver]:
    found = Receiver(getattr(request, "param", None))
    try:
        yield found
    finally:
        found.close()


def _deliver(
    limits: WebhookLimits, url: str, payloads: list[dict[str, str]], wait: bool = True
) -> list[tuple[str, str]]:
    outcomes: list[tuple[str, str]] = []

    async def main() -> None:
        sender = WebhookSender(limits, on_outcome=lambda b, o: outcomes.append((b, o)))
        for payload in payloads:
            sender.send("arena", url, SECRET, payload)
        while wait and sender.pending:
            await asyncio.sleep(0.01)
        await sender.close()

    asyncio.run(main())
    return outcomes


@pytest.mark.parametrize("receiver", [[500, "drop", 503]], indirect=True)
def test_retried_with_backoff_until_accepted(receiver: Receiver) -> None:
    limits = WebhookLimits(attempts=6, backoff=0.1, backoff_max=0.25)
    outcomes = _deliver(limits, receiver.url, [PAYLOAD])
    assert outcomes == [("arena", "retried")] * 3 + [("arena", "ok")]
    got = receiver.wait(4)
    assert len(got) == 4
    assert [r.headers["x-ranked-attempt"] for r in got] == ["1", "2", "3", "4"]
    assert {r.headers["x-ranked-delivery"] for r in got} == {PAYLOAD["id"]}  # one id
    assert {r.body for r in got} == {got[0].body}  # the same body every time
    assert json.loads(got[0].body) == PAYLOAD
    for retry, (before, after) in enumerate(itertools.pairwise(got), start=1):
        bound = backoff_bound(limits, retry)
        assert bound == min(0.25, 0.1 * 2 ** (retry - 1))
        assert bound / 2 - 0.01 <= after.at - before.at <= bound + 0.5
    for r in got:
        timestamp, signature = r.headers["x-ranked-timestamp"], r.headers["x-ranked-signature"]
        assert r.headers["content-type"] == "application/json"
        assert verify(SECRET, timestamp, r.body, signature, now=time.time())
        assert not verify(
            "another-secret-of-32-characters!", timestamp, r.body, signature, now=time.time()
        )
        assert not verify(SECRET, timestamp, r.body + b" ", signature, now=time.time())


@pytest.mark.parametrize("receiver", [[500] * 10], indirect=True)
def test_given_up_after_the_last_attempt(receiver: Receiver) -> None:
    outcomes = _deliver(WebhookLimits(attempts=3, backoff=0.02), receiver.url, [PAYLOAD])
    assert outcomes == [("arena", "retried"), ("arena", "retried"), ("arena", "failed")]
    time.sleep(0.2)
    assert len(receiver.received) == 3


def test_an_unreachable_webhook_is_retried_then_given_up() -> None:
    outcomes = _deliver(
        WebhookLimits(attempts=2, backoff=0.02), "http://127.0.0.1:9/closed", [PAYLOAD]
    )
    assert outcomes == [("arena", "retried"), ("arena", "failed")]


@pytest.mark.parametrize("receiver", [[500] * 10], indirect=True)
def test_a_full_outbox_drops_and_counts(receiver: Receiver) -> None:
    limits = WebhookLimits(attempts=5, backoff=30, pending=2)
    payloads = [{**PAYLOAD, "id": f"n{i}"} for i in range(5)]
    outcomes: list[tuple[str, str]] = []

    async def main() -> None:
        sender = WebhookSender(limits, on_outcome=lambda b, o: outcomes.append((b, o)))
        started = time.perf_counter()
        sent = [sender.send("arena", receiver.url, SECRET, p) for p in payloads]
        assert time.perf_counter() - started < 0.5  # send never waits for the receiver
        assert sent == [True, True, False, False, False]
        assert sender.pending == 2
        for _ in range(1000):  # both fail once, then wait 15 s or more to retry
            if outcomes.count(("arena", "retried")) == 2:
                break
            await asyncio.sleep(0.01)
        await sender.close()
        assert sender.pending == 0

    asyncio.run(main())
    assert outcomes.count(("arena", "dropped")) == 3
    assert outcomes.count(("arena", "retried")) == 2
    assert {r.headers["x-ranked-delivery"] for r in receiver.received} == {"n0", "n1"}


def test_limits_from_the_environment() -> None:
    limits = WebhookLimits.from_environ(
        {"RANKED_WEBHOOK_ATTEMPTS": "3", "RANKED_WEBHOOK_BACKOFF": "2"}
    )
    assert limits.attempts == 3 and limits.backoff == 2.0 and limits.backoff_max == 60.0
    assert [backoff_bound(WebhookLimits(), n) for n in range(1, 10)] == [
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        16.0,
        32.0,
        60.0,
        60.0,
    ]


@pytest.mark.parametrize("receiver", [[]], indirect=True)
def test_the_receiver_recipe_in_the_docs_verifies_a_delivery(receiver: Receiver) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "live.md").read_text(encoding="utf-8")
    recipe = next(
        block for block in re.findall(r"```python\n(.*?)```", doc, re.S) if "def verified" in block
    )
    scope: dict[str, Any] = {}
    exec(compile(recipe, "docs/live.md", "exec"), scope)
    _deliver(WebhookLimits(), receiver.url, [PAYLOAD])
    (got,) = receiver.wait(1)
    headers = {
        name: got.headers[name.lower()]
        for name in ("X-Ranked-Timestamp", "X-Ranked-Signature", "X-Ranked-Delivery")
    }
    assert scope["verified"](SECRET, headers, got.body)
    assert not scope["verified"]("not-the-board-secret-0123456789", headers, got.body)
    assert not scope["verified"](SECRET, headers, got.body.replace(b"ann", b"bob"))
    stale = {**headers, "X-Ranked-Timestamp": str(int(headers["X-Ranked-Timestamp"]) - 3600)}
    assert not scope["verified"](SECRET, stale, got.body)
