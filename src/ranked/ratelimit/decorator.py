"""``@rate_limited``: a rate limit around a plain function, sync or async.

Also home of what the decorator and the ASGI middleware share: the shapes of a limiter
(:class:`SyncLimiter`, :class:`AsyncLimiter`), :class:`RateLimited`, and the rule for
checking several limiters on one call (:func:`check` / :func:`acheck`): in order, stopping
at the first denial, so a refused call is not charged to the limiters after the one that
refused it.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, ParamSpec, Protocol, TypeVar, cast

from ..core.limits import check_duration
from ..errors import RankedError
from .headers import check_policy_names, most_restrictive, rate_limit_headers
from .policy import Policy, RateLimitConfigError
from .result import Decision

__all__ = [
    "AsyncLimiter",
    "Limiter",
    "RateLimited",
    "SyncLimiter",
    "acheck",
    "as_async_hit",
    "check",
    "is_async",
    "rate_limited",
]

P = ParamSpec("P")
R = TypeVar("R")


class SyncLimiter(Protocol):
    """What a blocking limiter offers (``RateLimiter``)."""

    @property
    def policy(self) -> Policy: ...

    def hit(self, identity: str, cost: int = 1, /) -> Decision: ...


class AsyncLimiter(Protocol):
    """What an asyncio limiter offers (``AsyncRateLimiter``)."""

    @property
    def policy(self) -> Policy: ...

    def hit(self, identity: str, cost: int = 1, /) -> Awaitable[Decision]: ...


Limiter = SyncLimiter | AsyncLimiter


class RateLimited(RankedError):
    """A call was refused by a rate limit.

    - ``decision``: the binding decision (the denied one with the longest wait).
    - ``decisions``: every decision taken for the call, in limiter order.
    - ``retry_after``: seconds until the call would pass (``decision.retry_after``).
    - ``headers``: the 429 response headers (IETF, legacy and ``Retry-After``), for a web
      framework's error handler to send as they are.
    """

    def __init__(self, decisions: Sequence[Decision], policies: Sequence[Policy]) -> None:
        self.decisions = tuple(decisions)
        self.decision = most_restrictive(self.decisions)
        self.retry_after: float = self.decision.retry_after or 0.0
        self.headers = rate_limit_headers(self.decisions, policies=policies)
        super().__init__(
            f"rate limit {self.decision.policy.name!r} exceeded; retry in {self.retry_after:.3f} s"
        )


def is_async(limiter: Limiter) -> bool:
    """True when ``limiter.hit`` must be awaited."""
    return inspect.iscoroutinefunction(limiter.hit)


def _check_cost(limiters: Sequence[Limiter], cost: int) -> None:
    # A cost no policy could ever admit is a bug, not a denial: refuse it before any
    # limiter is charged (the limiters check too, but only their own policy; they also
    # reject a cost of the wrong type, with their own typed error).
    for limiter in limiters:
        if cost.__class__ is int and cost > limiter.policy.capacity:
            raise RateLimitConfigError(
                f"cost {cost} exceeds the capacity {limiter.policy.capacity} "
                f"of policy {limiter.policy.name!r}: it could never pass"
            )


def check(limiters: Sequence[SyncLimiter], key: str, cost: int = 1) -> list[Decision]:
    """Hit each limiter in order until one denies; the decisions taken. One round trip
    per limiter reached."""
    _check_cost(limiters, cost)
    decisions: list[Decision] = []
    for limiter in limiters:
        decisions.append(limiter.hit(key, cost))
        if not decisions[-1].allowed:
            break
    return decisions


HitCall = Callable[[str, int], Awaitable[Decision]]


def as_async_hit(limiter: Limiter, *, offload: bool = False) -> HitCall:
    """``limiter.hit`` as a coroutine function: an async limiter's own, or a blocking
    limiter's run inline (``offload=False``: right for memory, microseconds) or in a worker
    thread (``offload=True``: a blocking Redis client then does not stall the loop)."""
    if is_async(limiter):
        return cast(AsyncLimiter, limiter).hit
    sync_hit = cast(SyncLimiter, limiter).hit

    async def hit(key: str, cost: int) -> Decision:
        if offload:
            return await asyncio.to_thread(sync_hit, key, cost)
        return sync_hit(key, cost)

    return hit


async def acheck(
    limiters: Sequence[Limiter], hits: Sequence[HitCall], key: str, cost: int = 1
) -> list[Decision]:
    """:func:`check` for the asyncio world; ``hits[i]`` is ``as_async_hit(limiters[i])``."""
    _check_cost(limiters, cost)
    decisions: list[Decision] = []
    for hit in hits:
        decisions.append(await hit(key, cost))
        if not decisions[-1].allowed:
            break
    return decisions


class _Retry:
    """What a denied call does next (shared by the sync and async wrappers): the pause
    before trying again, or :class:`RateLimited` when not waiting or out of patience."""

    __slots__ = ("max_wait", "policies", "wait")

    def __init__(self, wait: bool, max_wait: float, policies: list[Policy]) -> None:
        self.wait, self.max_wait, self.policies = wait, max_wait, policies

    def pause(self, decisions: Sequence[Decision], waited: float) -> float:
        delay = most_restrictive(decisions).retry_after or 0.0
        if not self.wait or waited + delay > self.max_wait:
            raise RateLimited(decisions, self.policies)
        return delay


def rate_limited(
    limiters: Limiter | Sequence[Limiter],
    *,
    key: Callable[..., str] | None = None,
    cost: int | Callable[..., int] = 1,
    wait: bool = False,
    max_wait: float = 30.0,
    sleep: Callable[[float], object] | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function so each call first passes ``limiters`` (one or several).

    - ``key``: called with the function's arguments, returns the identity to limit
      (default: one shared quota for all calls, keyed by the function's qualified name).
    - ``cost``: units per call, or a function of the call's arguments.
    - ``wait=False``: a denied call raises :class:`RateLimited` at once.
      ``wait=True``: sleep ``retry_after`` and try again, for at most ``max_wait`` seconds
      in total (a duration of :mod:`ranked.core.limits`: ``OutOfRangeError`` past 100
      years); a wait that would exceed it raises :class:`RateLimited` without sleeping.
    - ``sleep``: the pause function (default ``time.sleep``, or ``asyncio.sleep`` for a
      coroutine function; if it returns an awaitable it is awaited).

    Sync functions need blocking limiters (TypeError otherwise); coroutine functions take
    either kind (a blocking one runs inline). Costs one ``hit`` per limiter reached per try.
    """
    chain: tuple[Limiter, ...] = tuple(limiters) if isinstance(limiters, Sequence) else (limiters,)
    if not chain:
        raise RateLimitConfigError("rate_limited needs at least one limiter")
    policies = [limiter.policy for limiter in chain]
    check_policy_names(policies)
    if isinstance(max_wait, int | float) and max_wait < 0:
        raise RateLimitConfigError(f"max_wait must not be negative, not {max_wait!r}")
    max_wait = check_duration(max_wait, "max_wait")
    retry = _Retry(wait, max_wait, policies)

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        fixed_key = f"{func.__module__}.{func.__qualname__}"

        def identity(*args: Any, **kwargs: Any) -> tuple[str, int]:
            units = cost(*args, **kwargs) if callable(cost) else cost
            return (fixed_key if key is None else key(*args, **kwargs)), units

        if inspect.iscoroutinefunction(func):
            pause = asyncio.sleep if sleep is None else sleep
            return cast(Callable[P, R], _wrap_async(func, chain, identity, retry, pause))
        if any(is_async(limiter) for limiter in chain):
            raise TypeError(f"{func.__qualname__} is not async: give it blocking limiters")
        sync_chain = cast(tuple[SyncLimiter, ...], chain)
        sync_pause = time.sleep if sleep is None else sleep

        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            name, units = identity(*args, **kwargs)
            waited = 0.0
            while not (decisions := check(sync_chain, name, units))[-1].allowed:
                delay = retry.pause(decisions, waited)
                sync_pause(delay)
                waited += delay
            return func(*args, **kwargs)

        return wrapper

    return decorate


def _wrap_async(
    func: Callable[..., Coroutine[Any, Any, Any]],
    chain: tuple[Limiter, ...],
    identity: Callable[..., tuple[str, int]],
    retry: _Retry,
    pause: Callable[[float], object],
) -> Callable[..., Coroutine[Any, Any, Any]]:
    hits = [as_async_hit(limiter) for limiter in chain]

    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        name, units = identity(*args, **kwargs)
        waited = 0.0
        while not (decisions := await acheck(chain, hits, name, units))[-1].allowed:
            delay = retry.pause(decisions, waited)
            slept = pause(delay)
            if inspect.isawaitable(slept):
                await slept
            waited += delay
        return await func(*args, **kwargs)

    return wrapper
