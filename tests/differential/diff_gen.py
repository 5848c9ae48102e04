"""Random command streams for the differential test against a real redis-server.

A stream works on a small fixed set of keys of every type, so commands keep meeting each
other's data. Two rules keep every command's answer defined by Redis:

* lex-family commands (ZRANGEBYLEX, ZLEXCOUNT, ZREMRANGEBYLEX, BYLEX) mostly target the
  ``zl*`` keys, and every write to a ``zl*`` key uses score 0 or -0, because Redis leaves lex
  ranges over mixed scores undefined. Such a command names its key in ``lex_key``; the
  harness skips it when that key holds mixed scores anyway (a store or a malformed call can
  put them there);
* ``nokey`` is rarely written, so it mostly exercises the missing-key path.

Each generated :class:`Command` says how its replies are compared (``check``): byte for byte,
or by contract where Redis itself is random or unordered.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

__all__ = ["Check", "Command", "StreamGenerator"]


class Check(Enum):
    EXACT = "exact"  # replies equal, types included
    UNORDERED = "unordered"  # an array compared as a sorted list (SMEMBERS, KEYS)
    HASH = "hash"  # a flat field/value array compared as a dict (HGETALL)
    TTL = "ttl"  # integers within a tolerance; negative codes exact
    RANDMEMBER = "randmember"  # validated against each side's own set
    SCAN = "scan"  # a full cursor loop compared as member -> score


@dataclass(frozen=True)
class Command:
    args: tuple[bytes, ...]
    keys: tuple[bytes, ...]
    check: Check = Check.EXACT
    whole_keyspace: bool = False  # reads every key (DBSIZE, KEYS)
    lex_key: bytes | None = None  # a lex-range command: defined only if this key has one score

    def __str__(self) -> str:
        return " ".join(_show(arg) for arg in self.args)


def _show(arg: bytes) -> str:
    """One argument as redis-cli would accept it: bare when plain, else a quoted literal."""
    if arg and all(33 <= byte < 127 and byte not in b"\"'\\" for byte in arg):
        return arg.decode()
    return '"' + "".join(_escape(byte) for byte in arg) + '"'


def _escape(byte: int) -> str:
    if byte in b'"\\':
        return "\\" + chr(byte)
    return chr(byte) if 32 <= byte < 127 else f"\\x{byte:02x}"


# -- keys ------------------------------------------------------------------------------
ZKEYS = (b"z1", b"z2", b"z3")
LEXKEYS = (b"zl1", b"zl2")
SETKEY, HASHKEY, STRKEY, COUNTERKEY, NOKEY, DSTKEY = (
    b"s1",
    b"h1",
    b"str1",
    b"cnt",
    b"nokey",
    b"dst",
)
OTHERKEYS = (SETKEY, HASHKEY, STRKEY, COUNTERKEY, NOKEY)
ALLKEYS = (*ZKEYS, *LEXKEYS, *OTHERKEYS, DSTKEY)

# -- values ----------------------------------------------------------------------------
MEMBERS = (
    *(bytes([c]) for c in b"abcdefgh"),
    b"",
    b"\x00",
    b"\xff",
    b"a\x00",
    b"a\x00b",
    "é".encode(),
    "日本語".encode(),
    b"[a",
    b"(b",
    b"-",
    b"+",
    b"10",
    b"-5",
    b"3.5",
    b"007",
    b"NX",
)
LONG_MEMBERS = (b"x" * 65, b"y" * 100, b"a" * 64)
GOOD_SCORES = (
    *(b"%d" % n for n in range(-3, 6)),
    b"3.5",
    b"-2.25",
    b"1e3",
    b"1.5E-3",
    b"-0",
    b"0x10",
    b"inf",
    b"+inf",
    b"-inf",
    b"1e308",
    b"-1e308",
    b"1e-310",
    b"5.",
    b"+5",
    b".5",
    b"00012",
    b"1.1",
    b"0.1",
    b"123456789012345678",
    b"-Infinity",
)
BAD_SCORES = (b"abc", b"", b" 1", b"1 ", b"nan", b"1e400", b"-1e400", b"1e-400", b"(1", b"1\x00")
SCORE_BOUNDS = (
    b"-inf",
    b"+inf",
    b"inf",
    b"(1",
    b"1",
    b"(",
    b"",
    b" 1",
    b"(-inf",
    b"(+inf",
    b"0x10",
    b"1e400",
    b"1e-400",
    b"(0",
    b"-0",
    b"1\x00zzz",
    b"(3.5",
)
BAD_SCORE_BOUNDS = (b"abc", b"[1", b"nan", b"(nan", b"1 ", b"((1")
LEX_BOUNDS = (
    b"-",
    b"+",
    b"[a",
    b"(a",
    b"[b",
    b"(c",
    b"[",
    b"(",
    b"[\xff",
    b"[a\x00",
    "(é".encode(),
    b"[d",
    b"(g",
)
BAD_LEX_BOUNDS = (b"a", b"", b"*", b"-a", b"+b", b"--")
BIG_INDEXES = (b"9223372036854775807", b"-9223372036854775808")
BAD_INTEGERS = (b"abc", b"1.5", b"9223372036854775808", b"", b" 1")
JUNK = (b"BOGUS", b"", b"x1", b"WITHSCORES", b"LIMIT", b"REV", b"NX", b"COUNT")
MATCH_PATTERNS = (b"*", b"a*", b"[ab]*", b"m1*", b"*\xff*", b"?")

Factory = Callable[[], Command]


class StreamGenerator:
    """Produces one random, reproducible command stream.

    ``big`` streams also bulk-load numbered members so keys cross Redis's 128-entry
    listpack limit; ``long_members`` adds members over 64 bytes (another encoding switch).
    """

    def __init__(self, seed: int, *, big: bool = False) -> None:
        self.rng = random.Random(seed)
        self.big = big
        table = self._factories()
        self.makers = [maker for maker, _ in table]
        self.weights = [weight for _, weight in table]

    def next(self) -> Command:
        factory = self.rng.choices(self.makers, self.weights)[0]
        command = factory()
        # Random or cursor-shaped replies are only compared exactly on their error paths;
        # a mutation could turn those into valid calls, so they are never mutated.
        unmutable = command.args[0] in (b"ZRANDMEMBER", b"ZSCAN")
        if command.check is Check.EXACT and not unmutable and self.rng.random() < 0.05:
            return self._mutate(command)
        return command

    # -- value pickers ----------------------------------------------------------------
    def choice(self, items: Sequence[bytes]) -> bytes:
        return self.rng.choice(items)

    def member(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.02:
            return self.choice(LONG_MEMBERS)
        if roll < 0.25 or (self.big and roll < 0.6):
            return b"m%d" % self.rng.randrange(300 if self.big else 30)
        return self.choice(MEMBERS)

    def score(self, key: bytes) -> bytes:
        if key in LEXKEYS:
            return self.choice((b"0", b"0", b"-0"))
        roll = self.rng.random()
        if roll < 0.03:
            return self.choice(BAD_SCORES)
        if roll < 0.45:
            return self.choice(GOOD_SCORES)
        if roll < 0.8:
            return b"%d" % self.rng.randint(-10, 10)
        return repr(round(self.rng.uniform(-100, 100), self.rng.randint(0, 4))).encode()

    def zkey(self) -> bytes:
        """A key for a sorted-set command: mostly sorted sets, sometimes anything."""
        roll = self.rng.random()
        if roll < 0.7:
            return self.choice(ZKEYS)
        if roll < 0.85:
            return self.choice(LEXKEYS)
        if roll < 0.9:
            return DSTKEY
        return self.choice(OTHERKEYS)

    def anykey(self) -> bytes:
        return self.choice(ALLKEYS)

    def lexkey(self) -> bytes:
        return self.choice(LEXKEYS) if self.rng.random() < 0.85 else self.choice(OTHERKEYS)

    def dstkey(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.6:
            return DSTKEY
        if roll < 0.9:
            return self.choice(ZKEYS)
        return self.choice((SETKEY, STRKEY))

    def index(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.03:
            return self.choice(BAD_INTEGERS)
        if roll < 0.06:
            return self.choice(BIG_INDEXES)
        return b"%d" % self.rng.randint(-12, 12)

    def score_bound(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.03:
            return self.choice(BAD_SCORE_BOUNDS)
        if roll < 0.35:
            return self.choice(SCORE_BOUNDS)
        bound = b"%d" % self.rng.randint(-10, 10)
        return b"(" + bound if self.rng.random() < 0.3 else bound

    def lex_bound(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.03:
            return self.choice(BAD_LEX_BOUNDS)
        if roll < 0.6:
            return self.choice(LEX_BOUNDS)
        return self.choice((b"[", b"(")) + self.member()

    def limit(self) -> list[bytes]:
        if self.rng.random() < 0.03:
            return [b"LIMIT", self.choice(BAD_INTEGERS), b"1"]
        offset = self.rng.choice((0, 0, 1, 2, 5, -1, -2))
        count = self.rng.choice((-1, 0, 1, 2, 3, 10, -5))
        return [b"LIMIT", b"%d" % offset, b"%d" % count]

    def count(self, low: int = -3, high: int = 12) -> bytes:
        if self.rng.random() < 0.04:
            return self.choice(BAD_INTEGERS)
        return b"%d" % self.rng.randint(low, high)

    def maybe(self, probability: float, *words: bytes) -> list[bytes]:
        return list(words) if self.rng.random() < probability else []

    def upper_or_lower(self, word: bytes) -> bytes:
        return word.lower() if self.rng.random() < 0.1 else word

    # -- malformed variants -----------------------------------------------------------
    def _mutate(self, command: Command) -> Command:
        args = list(command.args)
        roll = self.rng.random()
        if roll < 0.35 and len(args) > 1:
            del args[self.rng.randrange(1, len(args)) :]  # too few arguments
        elif roll < 0.7:
            args.insert(self.rng.randrange(1, len(args) + 1), self.choice(JUNK))
        elif len(args) > 2:
            args[self.rng.randrange(2, len(args))] = self.choice(JUNK)
        else:
            args.append(self.choice(JUNK))
        # A junk word may now sit where a key was: count every argument as a possible key.
        keys = (*command.keys, *args[1:])
        # The junk may have moved the key: keep the lex guard on every candidate.
        lex_key = command.lex_key if command.lex_key in args else None
        if command.lex_key is not None and lex_key is None:
            return command
        return Command(tuple(args), keys, command.check, command.whole_keyspace, lex_key)

    # -- command factories ------------------------------------------------------------
    def _factories(self) -> list[tuple[Factory, int]]:
        table: list[tuple[Factory, int]] = [
            (self.zadd, 14),
            (self.zincrby, 4),
            (self.zrem, 4),
            (self.zscore, 3),
            (self.zmscore, 2),
            (self.zcard, 2),
            (self.zcount, 2),
            (self.zlexcount, 2),
            (self.zrank, 3),
            (self.zrange, 8),
            (self.zrangestore, 2),
            (self.zrevrange, 2),
            (self.zrangebyscore, 3),
            (self.zrangebylex, 3),
            (self.zremrange, 3),
            (self.zpop, 3),
            (self.zmpop, 2),
            (self.zrandmember, 2),
            (self.zsetop, 4),
            (self.zsetop_store, 3),
            (self.zintercard, 2),
            (self.zscan, 2),
            (self.keyspace_op, 4),
            (self.expiry_op, 3),
            (self.set_op, 3),
            (self.hash_op, 3),
            (self.string_op, 3),
        ]
        if self.big:
            table.append((self.bulk_zadd, 3))
        return table

    def zadd(self) -> Command:
        key = self.zkey()
        flags: list[bytes] = []
        for group in ((b"NX", b"XX"), (b"GT", b"LT"), (b"CH",), (b"INCR",)):
            for flag in group:
                if self.rng.random() < 0.12:
                    flags.append(self.upper_or_lower(flag))
        self.rng.shuffle(flags)
        pairs = 1 if b"INCR" in flags and self.rng.random() < 0.9 else self.rng.randint(1, 4)
        args = [b"ZADD", key, *flags]
        for _ in range(pairs):
            args += [self.score(key), self.member()]
        return Command(tuple(args), (key,))

    def bulk_zadd(self) -> Command:
        key = self.choice((*ZKEYS, *LEXKEYS))
        args = [b"ZADD", key]
        start = self.rng.randrange(300)
        for offset in range(self.rng.randint(20, 140)):
            args += [self.score(key), b"m%d" % ((start + offset) % 300)]
        return Command(tuple(args), (key,))

    def zincrby(self) -> Command:
        key = self.zkey()
        return Command((b"ZINCRBY", key, self.score(key), self.member()), (key,))

    def zrem(self) -> Command:
        key = self.zkey()
        members = [self.member() for _ in range(self.rng.randint(1, 3))]
        return Command((b"ZREM", key, *members), (key,))

    def zscore(self) -> Command:
        key = self.zkey()
        return Command((b"ZSCORE", key, self.member()), (key,))

    def zmscore(self) -> Command:
        key = self.zkey()
        members = [self.member() for _ in range(self.rng.randint(1, 4))]
        return Command((b"ZMSCORE", key, *members), (key,))

    def zcard(self) -> Command:
        key = self.zkey()
        return Command((b"ZCARD", key), (key,))

    def zcount(self) -> Command:
        key = self.zkey()
        return Command((b"ZCOUNT", key, self.score_bound(), self.score_bound()), (key,))

    def zlexcount(self) -> Command:
        key = self.lexkey()
        args = (b"ZLEXCOUNT", key, self.lex_bound(), self.lex_bound())
        return Command(args, (key,), lex_key=key)

    def zrank(self) -> Command:
        key = self.zkey()
        name = self.choice((b"ZRANK", b"ZREVRANK"))
        return Command((name, key, self.member()), (key,))

    def _range_tail(self, by: bytes | None, *, store: bool) -> list[bytes]:
        tail: list[bytes] = []
        if by is not None:
            tail.append(self.upper_or_lower(by))
        tail += self.maybe(0.4, b"REV")
        if by is not None or self.rng.random() < 0.05:
            tail += self.maybe(0.4, *self.limit())
        if not store and (by != b"BYLEX" or self.rng.random() < 0.05):
            tail += self.maybe(0.5, b"WITHSCORES")
        if self.rng.random() < 0.05:
            self.rng.shuffle(tail)
        return tail

    def _range_bounds(self, by: bytes | None) -> tuple[bytes, bytes]:
        if by == b"BYSCORE":
            return self.score_bound(), self.score_bound()
        if by == b"BYLEX":
            return self.lex_bound(), self.lex_bound()
        return self.index(), self.index()

    def zrange(self) -> Command:
        by = self.rng.choice((None, None, b"BYSCORE", b"BYLEX"))
        key = self.lexkey() if by == b"BYLEX" else self.zkey()
        low, high = self._range_bounds(by)
        args = (b"ZRANGE", key, low, high, *self._range_tail(by, store=False))
        return Command(args, (key,), lex_key=key if by == b"BYLEX" else None)

    def zrangestore(self) -> Command:
        by = self.rng.choice((None, b"BYSCORE", b"BYLEX"))
        src = self.lexkey() if by == b"BYLEX" else self.zkey()
        dst = self.dstkey()
        low, high = self._range_bounds(by)
        tail = self._range_tail(by, store=True) + self.maybe(0.03, b"WITHSCORES")
        lex_key = src if by == b"BYLEX" else None
        return Command((b"ZRANGESTORE", dst, src, low, high, *tail), (dst, src), lex_key=lex_key)

    def zrevrange(self) -> Command:
        key = self.zkey()
        tail = self.maybe(0.5, b"WITHSCORES")
        return Command((b"ZREVRANGE", key, self.index(), self.index(), *tail), (key,))

    def zrangebyscore(self) -> Command:
        key = self.zkey()
        name = self.choice((b"ZRANGEBYSCORE", b"ZREVRANGEBYSCORE"))
        tail = self.maybe(0.5, b"WITHSCORES") + self.maybe(0.4, *self.limit())
        if self.rng.random() < 0.2:
            self.rng.shuffle(tail)
        if self.rng.random() < 0.03:
            tail.append(b"REV")
        bounds = (self.score_bound(), self.score_bound())
        return Command((name, key, *bounds, *tail), (key,))

    def zrangebylex(self) -> Command:
        key = self.lexkey()
        name = self.choice((b"ZRANGEBYLEX", b"ZREVRANGEBYLEX"))
        tail = self.maybe(0.4, *self.limit()) + self.maybe(0.03, b"WITHSCORES")
        args = (name, key, self.lex_bound(), self.lex_bound(), *tail)
        return Command(args, (key,), lex_key=key)

    def zremrange(self) -> Command:
        kind = self.rng.choice((b"RANK", b"SCORE", b"LEX"))
        if kind == b"LEX":
            key = self.lexkey()
            bounds = (self.lex_bound(), self.lex_bound())
        elif kind == b"SCORE":
            key = self.zkey()
            bounds = (self.score_bound(), self.score_bound())
        else:
            key = self.zkey()
            bounds = (self.index(), self.index())
        lex_key = key if kind == b"LEX" else None
        return Command((b"ZREMRANGEBY" + kind, key, *bounds), (key,), lex_key=lex_key)

    def zpop(self) -> Command:
        key = self.zkey()
        name = self.choice((b"ZPOPMIN", b"ZPOPMAX"))
        tail = [self.count(-2, 5)] if self.rng.random() < 0.6 else []
        return Command((name, key, *tail), (key,))

    def zmpop(self) -> Command:
        keys = [self.zkey() for _ in range(self.rng.randint(1, 3))]
        numkeys = len(keys)
        if self.rng.random() < 0.08:
            numkeys = self.rng.choice((0, -1, numkeys + 1, numkeys - 1))
        where = (
            self.choice((b"MIN", b"MAX", b"min", b"MIDDLE"))
            if self.rng.random() < 0.1
            else (self.choice((b"MIN", b"MAX")))
        )
        tail = [b"COUNT", self.count(-1, 5)] if self.rng.random() < 0.5 else []
        args = (b"ZMPOP", b"%d" % numkeys, *keys, where, *tail)
        return Command(args, tuple(keys))

    def zrandmember(self) -> Command:
        key = self.zkey()
        roll = self.rng.random()
        if roll < 0.3:
            return Command((b"ZRANDMEMBER", key), (key,), Check.RANDMEMBER)
        if roll < 0.35:  # error paths only: huge counts are rejected before any work
            tails = (
                [b"-9223372036854775808"],
                [b"9223372036854775807", b"WITHSCORES"],
                [b"-9223372036854775807", b"WITHSCORES"],
                [b"1", b"WITHSCOREZ"],
                [b"1", b"WITHSCORES", b"X"],
                [b"abc"],
            )
            return Command((b"ZRANDMEMBER", key, *self.rng.choice(tails)), (key,))
        count = b"%d" % self.rng.randint(-15, 15)
        tail = self.maybe(0.5, b"WITHSCORES")
        return Command((b"ZRANDMEMBER", key, count, *tail), (key,), Check.RANDMEMBER)

    def _setop_keys(self) -> list[bytes]:
        pool = (*ZKEYS, *LEXKEYS, DSTKEY, SETKEY, NOKEY, NOKEY)
        keys = [self.choice(pool) for _ in range(self.rng.randint(1, 3))]
        if self.rng.random() < 0.04:
            keys.append(self.choice((HASHKEY, STRKEY)))
        return keys

    def _setop_options(self, keys: Sequence[bytes], *, store: bool, diff: bool) -> list[bytes]:
        options: list[bytes] = []
        if not diff or self.rng.random() < 0.03:
            if self.rng.random() < 0.35:
                choices = (b"1", b"2", b"-1", b"0", b"0.5", b"inf", b"-inf", b"1e-310")
                weights = [self.choice(choices) for _ in keys]
                if self.rng.random() < 0.05:
                    weights = weights[:-1] or [b"nan"]
                if self.rng.random() < 0.03:
                    weights[0] = self.choice((b"nan", b"abc", b""))
                options += [b"WEIGHTS", *weights]
            if self.rng.random() < 0.35:
                aggregate = self.choice((b"SUM", b"MIN", b"MAX", b"sum", b"AVG"))
                options += [b"AGGREGATE", aggregate]
        if not store or self.rng.random() < 0.03:
            options += self.maybe(0.5, b"WITHSCORES")
        return options

    def _numkeys(self, keys: Sequence[bytes]) -> bytes:
        if self.rng.random() < 0.05:
            return self.choice((b"0", b"-1", b"%d" % (len(keys) + 1), b"abc"))
        return b"%d" % len(keys)

    def zsetop(self) -> Command:
        name = self.choice((b"ZUNION", b"ZINTER", b"ZDIFF"))
        keys = self._setop_keys()
        options = self._setop_options(keys, store=False, diff=name == b"ZDIFF")
        return Command((name, self._numkeys(keys), *keys, *options), tuple(keys))

    def zsetop_store(self) -> Command:
        name = self.choice((b"ZUNIONSTORE", b"ZINTERSTORE", b"ZDIFFSTORE"))
        dst = self.dstkey()
        keys = self._setop_keys()
        options = self._setop_options(keys, store=True, diff=name == b"ZDIFFSTORE")
        args = (name, dst, self._numkeys(keys), *keys, *options)
        return Command(args, (dst, *keys))

    def zintercard(self) -> Command:
        keys = self._setop_keys()
        tail = [b"LIMIT", self.choice((b"0", b"1", b"2", b"5", b"-1", b"abc"))]
        tail = tail if self.rng.random() < 0.5 else []
        tail += self.maybe(0.03, b"WITHSCORES")
        return Command((b"ZINTERCARD", self._numkeys(keys), *keys, *tail), tuple(keys))

    def zscan(self) -> Command:
        key = self.zkey()
        if self.rng.random() < 0.1:  # error paths and the missing-key shortcut: exact
            cursor = self.choice((b"abc", b"18446744073709551616", b"0", b"1.5"))
            tails = ([b"COUNT", b"0"], [b"COUNT", b"-1"], [b"BOGUS"], [b"MATCH"])
            return Command((b"ZSCAN", key, cursor, *self.rng.choice(tails)), (key,))
        tail = self.maybe(0.4, b"MATCH", self.choice(MATCH_PATTERNS))
        tail += self.maybe(0.4, b"COUNT", b"%d" % self.rng.randint(1, 50))
        return Command((b"ZSCAN", key, b"0", *tail), (key,), Check.SCAN)

    def keyspace_op(self) -> Command:
        roll = self.rng.random()
        key = self.choice(ALLKEYS)
        if roll < 0.15:
            keys = [self.choice(ALLKEYS) for _ in range(self.rng.randint(1, 3))]
            return Command((b"DEL", *keys), tuple(keys))
        if roll < 0.4:
            keys = [self.choice(ALLKEYS) for _ in range(self.rng.randint(1, 3))]
            return Command((b"EXISTS", *keys), tuple(keys))
        if roll < 0.7:
            return Command((b"TYPE", key), (key,))
        if roll < 0.85:
            return Command((b"DBSIZE",), (), whole_keyspace=True)
        return Command((b"KEYS", b"*"), (), Check.UNORDERED, whole_keyspace=True)

    def expiry_op(self) -> Command:
        key = self.choice(ALLKEYS)
        roll = self.rng.random()
        if roll < 0.3:
            seconds = b"%d" % self.rng.randint(1000, 100000)
            option = self.maybe(0.3, self.choice((b"NX", b"XX", b"GT", b"LT")))
            name = self.choice((b"EXPIRE", b"PEXPIRE"))
            if name == b"PEXPIRE":
                seconds += b"000"
            return Command((name, key, seconds, *option), (key,))
        if roll < 0.35:  # deletes now (a non-positive time) or fails to parse
            value = self.choice((b"0", b"-1", b"abc", b"1.5"))
            return Command((self.choice((b"EXPIRE", b"PEXPIRE")), key, value), (key,))
        if roll < 0.75:
            return Command((self.choice((b"TTL", b"PTTL")), key), (key,), Check.TTL)
        return Command((b"PERSIST", key), (key,))

    def set_op(self) -> Command:
        roll = self.rng.random()
        key = SETKEY if self.rng.random() < (0.97 if roll < 0.6 else 0.85) else self.anykey()
        members = [self.member() for _ in range(self.rng.randint(1, 3))]
        if roll < 0.4:
            return Command((b"SADD", key, *members), (key,))
        if roll < 0.6:
            return Command((b"SREM", key, *members), (key,))
        if roll < 0.8:
            return Command((b"SMEMBERS", key), (key,), Check.UNORDERED)
        return Command((b"SCARD", key), (key,))

    def hash_op(self) -> Command:
        roll = self.rng.random()
        key = HASHKEY if self.rng.random() < (0.97 if roll < 0.3 else 0.85) else self.anykey()
        field = self.choice((b"f1", b"f2", b"f3", b"", b"\xff"))
        if roll < 0.3:
            value = self.choice((b"1", b"v", b"-7", b"9223372036854775807", b""))
            extra = self.maybe(0.3, b"f4", b"x")
            return Command((b"HSET", key, field, value, *extra), (key,))
        if roll < 0.45:
            return Command((b"HGET", key, field), (key,))
        if roll < 0.6:
            return Command((b"HDEL", key, field, *self.maybe(0.3, b"f2")), (key,))
        if roll < 0.8:
            return Command((b"HGETALL", key), (key,), Check.HASH)
        amount = self.choice((b"1", b"-3", b"100", b"abc", b"9223372036854775807"))
        return Command((b"HINCRBY", key, field, amount), (key,))

    def string_op(self) -> Command:
        roll = self.rng.random()
        mine = self.rng.random() < (0.97 if roll < 0.25 else 0.85)
        key = self.choice((STRKEY, COUNTERKEY)) if mine else self.anykey()
        if roll < 0.25:
            value = self.choice((b"10", b"abc", b"-3", b"9223372036854775807", b"", b" 1"))
            return Command((b"SET", key, value), (key,))
        if roll < 0.45:
            return Command((b"GET", key), (key,))
        if roll < 0.65:
            return Command((b"INCR", key), (key,))
        if roll < 0.85:
            amount = self.choice((b"5", b"-2", b"0", b"abc", b"9223372036854775807", b"1.5"))
            return Command((b"INCRBY", key, amount), (key,))
        return Command((b"DECR", key), (key,))
