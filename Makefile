# Developer targets for the C engine (src/ranked/engine/_zset.c + zsl_*.c) and the memory
# backend's native procedures (src/ranked/backends/native/*.c).
#   make build      editable install, compiles the extension in place
#   make test       the engine suite (C and pure-Python twins)
#   make check-c    randomized self-tests of the C core (and of the board's
#                   fused write, zsl_board.c) against naive models
#   make asan       engine and fast-path suites against an AddressSanitizer + UBSan build,
#                   fails on any report, then rebuilds normally
#   make valgrind   memcheck over the C self-test (and the C-engine tests with
#                   VALGRIND_PYTEST=1), fails on any error or leak
#   make bench-c    plain-C benchmark of the engine core (every op the Python
#                   benchmark times has a plain-C twin here)
#   make bench-py   the same ops through Python, beside sortedcontainers
#   make bench-bound each Python call against the plain-C loop of the same op,
#                   rounds alternating in one run (the single-op bound)

PYTHON ?= python3
CC ?= gcc
ENGINE := src/ranked/engine
CORE := $(ENGINE)/zsl_list.c $(ENGINE)/zsl_dict.c $(ENGINE)/zsl_rand.c
CORE_DEPS := $(CORE) $(ENGINE)/zsl.h
NATIVE := src/ranked/backends/native
BOARD := $(NATIVE)/zsl_board.c
BOARD_DEPS := $(BOARD) $(NATIVE)/zsl_board.h
OUT := build/c
CFLAGS_C := -std=c11 -Wall -Wextra -Werror

.PHONY: build test check-c asan valgrind bench-c bench-py bench-bound clean-c

build:
	$(PYTHON) -m pip install -e . --no-build-isolation -q

test: build
	$(PYTHON) -m pytest tests/engine -q

$(OUT):
	mkdir -p $(OUT)

$(OUT)/check_skiplist: benchmarks/c/check_skiplist.c $(CORE_DEPS) | $(OUT)
	$(CC) $(CFLAGS_C) -O1 -g -o $@ benchmarks/c/check_skiplist.c $(CORE)

$(OUT)/check_board: benchmarks/c/check_board.c $(CORE_DEPS) $(BOARD_DEPS) | $(OUT)
	$(CC) $(CFLAGS_C) -I$(ENGINE) -O1 -g -o $@ benchmarks/c/check_board.c $(CORE) $(BOARD) -lm

$(OUT)/bench_skiplist: benchmarks/c/bench_skiplist.c $(CORE_DEPS) | $(OUT)
	$(CC) $(CFLAGS_C) -O3 -o $@ benchmarks/c/bench_skiplist.c $(CORE)

check-c: $(OUT)/check_skiplist $(OUT)/check_board
	$(OUT)/check_skiplist 300000
	$(OUT)/check_board 200000

# The sanitized extension needs libasan loaded before Python; Python's own
# exit-time allocations are not freed, so leak detection stays off. Python's
# allocator is switched to malloc so ASan also sees the binding's objects.
# Reports go to their own files (asan-report.PID): pytest captures a test's stderr, so a
# report printed there would not reach the log when the process stops.
ASAN_LOG := $(OUT)/asan.log
ASAN_REPORTS := $(OUT)/asan-report
# The engine suite plus the tests that drive the native procedures (backends/native/*.c),
# the journal's native lane (journal/_lane.c) and the guard's own C (guard/_signature.c,
# guard/_front.c).
C_SUITES := tests/engine tests/backends/test_native_hostile.py tests/backends/test_native_sequenced_writer.py tests/backends/test_native_ready.py tests/backends/test_native_locked.py \
  tests/ratelimit/test_native_twin.py tests/leaderboard/test_fast_submit.py tests/queues/test_c_lane.py \
  tests/guard/test_native_check.py tests/guard/test_native_tables.py tests/guard/test_signature.py \
  tests/guard/test_front.py \
  tests/journal/test_lane.py \
  tests/backends/test_native_reader.py
asan: | $(OUT)
	RANKED_SANITIZE=1 $(PYTHON) setup.py -q build_ext --inplace --force
	rm -f $(ASAN_REPORTS).*; status=0; \
	LD_PRELOAD="$$($(CC) -print-file-name=libasan.so)" \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:halt_on_error=1:log_path=$(abspath $(ASAN_REPORTS)) \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(abspath $(ASAN_REPORTS)) \
	PYTHONMALLOC=malloc \
	$(PYTHON) -m pytest $(C_SUITES) -q -p no:cacheprovider > $(ASAN_LOG) 2>&1 || status=$$?; \
	tail -n 5 $(ASAN_LOG); \
	if grep -E "ERROR: AddressSanitizer|runtime error:" $(ASAN_LOG) $(ASAN_REPORTS).* 2>/dev/null; \
	then status=1; cat $(ASAN_REPORTS).* 2>/dev/null | head -n 60; fi; \
	$(PYTHON) setup.py -q build_ext --inplace --force; \
	exit $$status

VALGRIND := valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --quiet
valgrind: $(OUT)/check_skiplist $(OUT)/check_board
	$(VALGRIND) $(OUT)/check_skiplist 60000
	$(VALGRIND) $(OUT)/check_board 20000
	@if [ -n "$(VALGRIND_PYTEST)" ]; then \
	  PYTHONMALLOC=malloc $(VALGRIND) --leak-check=no $(PYTHON) -m pytest \
	    tests/engine/test_c_engine.py -q -p no:cacheprovider; \
	fi

bench-c: $(OUT)/bench_skiplist
	$(OUT)/bench_skiplist

bench-py:
	$(PYTHON) benchmarks/c/bench_vs_python.py 10000,100000,1000000

bench-bound: $(OUT)/bench_skiplist
	$(PYTHON) benchmarks/c/bound.py 10000,100000,1000000 --markdown

clean-c:
	rm -rf $(OUT)
