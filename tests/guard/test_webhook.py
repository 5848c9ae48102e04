"""The validator webhook against a real HTTP receiver: each held submission is POSTed as
JSON, signed with ``webhook_secret`` as notification webhooks are; the asyncio guard asks
again with backoff while the webhook fails in a way that may pass (no answer, 5xx, 429),
and not after another 4xx; the blocking guard asks once."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator

import pytest

from ranked.core.webhook_signature import HEADERS, verify
from ranked.errors import GuardConfigError
from ranked.guard import AsyncGuard, Guard, GuardConfig, _hooks
from ranked.leaderboard import AsyncLeaderboard, Leaderboard
from receiver import Receiver

SECRET = "webhook-secret-0123456789"


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_hooks, "WEBHOOK_BACKOFF_S", 0.05)
    yield


def _receiver(fail: list[int | str], answer: object) -> Receiver:
    return Receiver(fail=fail, body=json.dumps(answer).encode())


def _held(receiver: Receiver, secret: str | None = SECRET) -> tuple[AsyncLeaderboard, AsyncGuard]:
    config = GuardConfig(pending_rank=1, webhook=receiver.url, webhook_secret=secret)
    return AsyncLeaderboard("memory://", _fresh()), AsyncGuard(config)


def _fresh() -> str:
    """A board name no other test uses (memory:// is one store per process)."""
    return f"hook-{uuid.uuid4().hex[:12]}"


def test_a_signed_post_promotes() -> None:
    receiver = _receiver([], {"promote": True})

    async def scenario() -> None:
        board, guard = _held(receiver)
        held = await guard.submit(board, "ann", 10, replay={"moves": 3})
        assert held.pending
        await guard.drain()
        assert await board.score("ann") == 10
        assert await guard.pending(board) == []

    try:
        asyncio.run(scenario())
        (got,) = receiver.received
        body = json.loads(got.body)
        assert (body["member"], body["score"], body["replay"]) == ("ann", 10, {"moves": 3})
        assert got.headers[HEADERS["delivery"].lower()] == body["id"]
        assert got.headers[HEADERS["attempt"].lower()] == "1"
        stamp = got.headers[HEADERS["timestamp"].lower()]
        signature = got.headers[HEADERS["signature"].lower()]
        assert verify(SECRET, stamp, got.body, signature, now=time.time())
        assert not verify("another-secret-0123", stamp, got.body, signature, now=time.time())
    finally:
        receiver.close()


def test_failures_that_may_pass_are_asked_again() -> None:
    receiver = _receiver([503, "drop", 429], {"reject": "replay does not match"})

    async def scenario() -> None:
        board, guard = _held(receiver)
        held = await guard.submit(board, "ann", 10)
        await guard.drain()
        assert held.pending and await board.score("ann") is None
        assert await guard.pending(board) == []  # rejected on the fourth attempt

    try:
        asyncio.run(scenario())
        assert [r.headers[HEADERS["attempt"].lower()] for r in receiver.received] == [
            "1", "2", "3", "4",
        ]  # fmt: skip
        assert len({r.headers[HEADERS["delivery"].lower()] for r in receiver.received}) == 1
    finally:
        receiver.close()


def test_after_every_attempt_failed_the_entry_stays_pending() -> None:
    receiver = _receiver([500] * _hooks.WEBHOOK_ATTEMPTS, {"promote": True})

    async def scenario() -> None:
        board, guard = _held(receiver)
        await guard.submit(board, "ann", 10)
        await guard.drain()
        assert len(await guard.pending(board)) == 1

    try:
        asyncio.run(scenario())
        assert len(receiver.received) == _hooks.WEBHOOK_ATTEMPTS
    finally:
        receiver.close()


def test_a_refusing_answer_is_not_asked_again() -> None:
    receiver = _receiver([403], {"promote": True})

    async def scenario() -> None:
        board, guard = _held(receiver, secret=None)
        await guard.submit(board, "ann", 10)
        await guard.drain()
        assert len(await guard.pending(board)) == 1

    try:
        asyncio.run(scenario())
        (got,) = receiver.received
        assert HEADERS["signature"].lower() not in got.headers  # no secret: unsigned
    finally:
        receiver.close()


def test_the_blocking_guard_asks_once() -> None:
    receiver = _receiver([503], {"promote": True})
    try:
        board = Leaderboard("memory://", _fresh())
        guard = Guard(GuardConfig(pending_rank=1, webhook=receiver.url, webhook_secret=SECRET))
        assert guard.submit(board, "ann", 10).pending
        assert len(guard.pending(board)) == 1
        assert len(receiver.received) == 1
    finally:
        receiver.close()


@pytest.mark.parametrize(
    "settings",
    [
        {"webhook_secret": SECRET},  # no webhook to sign
        {"webhook": "http://127.0.0.1:9/x", "webhook_secret": "short"},
        {"webhook": "http://127.0.0.1:9/x", "webhook_secret": 12345},
    ],
)
def test_bad_webhook_settings_are_refused(settings: dict[str, object]) -> None:
    with pytest.raises(GuardConfigError):
        GuardConfig(**settings)  # type: ignore[arg-type]
