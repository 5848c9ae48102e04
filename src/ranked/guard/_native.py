"""The guard's own C code, when the C build is in use: the signature check
(``_signature.c``) and the in-process stage of a client's common submission
(``_front.c``). Each is None with the pure-Python engine (``RANKED_PUREPYTHON=1``) or
without a C build; the Python path then does the same work."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..engine.zset import IMPLEMENTATION

if TYPE_CHECKING:
    from ._front import Front as FrontType
    from ._signature import Verifier as VerifierType

__all__ = ["Front", "Verifier"]

Verifier: type[VerifierType] | None = None
Front: type[FrontType] | None = None
if IMPLEMENTATION == "c":
    with contextlib.suppress(ImportError):  # only a machine without a C build lacks them
        from ._front import Front
        from ._signature import Verifier
