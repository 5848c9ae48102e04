"""Build script for the C engine; all metadata lives in pyproject.toml."""

import os

from setuptools import Extension, setup

extra_compile_args = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]
extra_link_args: list[str] = []
if os.environ.get("RANKED_SANITIZE"):
    # make asan: build the engine with AddressSanitizer and UBSan, no optimisation tricks.
    flags = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-O1", "-g"]
    extra_compile_args = [*extra_compile_args[1:], *flags]
    extra_link_args = ["-fsanitize=address,undefined"]

ENGINE = "src/ranked/engine"
NATIVE = "src/ranked/backends/native"
JOURNAL = "src/ranked/journal"

setup(
    ext_modules=[
        # The engine: the sorted set and nothing feature-specific.
        Extension(
            "ranked.engine._zset",
            sources=[
                f"{ENGINE}/{name}" for name in ("_zset.c", "zsl_list.c", "zsl_dict.c", "zsl_rand.c")
            ],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        ),
        # The memory backend's native procedures, on the engine's C API (zset_capi.h).
        Extension(
            "ranked.backends.native._native",
            sources=[
                f"{NATIVE}/{name}"
                for name in (
                    "_native.c",
                    "rl_fast.c",
                    "rl_cores.c",
                    "zsl_board.c",
                    "board_fast.c",
                    "board_read.c",
                    "board_method.c",
                    "queue_lane.c",
                    "ready.c",
                    "locked.c",
                    "guard_check.c",
                    "guard_tables.c",
                )
            ],
            include_dirs=[ENGINE],
            define_macros=[("RANKED_ZSET_CAPI", "1")],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        ),
        # The write guard's signature check (HMAC-SHA256, no library beyond Python's) and
        # its in-process stage for a client's common submission.
        *(
            Extension(
                f"ranked.guard.{name}",
                sources=[f"src/ranked/guard/{name}.c"],
                extra_compile_args=extra_compile_args,
                extra_link_args=extra_link_args,
            )
            for name in ("_signature", "_front")
        ),
        # The SQLite journal's native lane, on the system's SQLite (the library Python's
        # sqlite3 uses). Optional: without SQLite's headers the journal runs without it.
        Extension(
            "ranked.journal._lane",
            sources=[f"{JOURNAL}/_lane.c", f"{JOURNAL}/write_gate.c"],
            libraries=["sqlite3"],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
            optional=True,
        ),
    ]
)
