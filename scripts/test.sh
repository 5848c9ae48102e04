#!/usr/bin/env bash
# Sets everything up, then runs every check: lint, types, the whole test suite (both engines,
# real redis-server), the C core under valgrind, and the engine tests under AddressSanitizer.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
source .venv/bin/activate

echo "== ruff"
ruff check .
ruff format --check .
echo "== mypy --strict"
mypy
echo "== pytest"
python3 -m pytest -q -p no:cacheprovider "$@"
echo "== keyspace and differential tests again on the pure-Python engine"
RANKED_PUREPYTHON=1 RANKED_DIFF_SEEDS=10 python3 -m pytest -q -p no:cacheprovider \
  tests/differential tests/engine/test_keyspace_*.py tests/test_readme.py
echo "== C core self-test, plain and under valgrind memcheck"
make check-c valgrind
echo "== C engine under AddressSanitizer"
make asan
