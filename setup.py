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

setup(
    ext_modules=[
        Extension(
            "ranked.engine._zset",
            sources=[
                "src/ranked/engine/_zset.c",
                "src/ranked/engine/zsl_list.c",
                "src/ranked/engine/zsl_dict.c",
                "src/ranked/engine/zsl_rand.c",
                "src/ranked/engine/rl_fast.c",
                "src/ranked/engine/rl_cores.c",
                "src/ranked/engine/zsl_board.c",
                "src/ranked/engine/board_fast.c",
                "src/ranked/engine/board_method.c",
                "src/ranked/engine/queue_lane.c",
            ],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        )
    ]
)
