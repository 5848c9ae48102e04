#!/usr/bin/env bash
# Sets everything up, then runs every check: lint, types, the whole test suite (both engines,
# real redis-server), and the C engine's tests under AddressSanitizer. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== ruff"
ruff check .
ruff format --check .
echo "== mypy --strict"
mypy
echo "== pytest"
python3 -m pytest -q -p no:cacheprovider "$@"
echo "== C engine under AddressSanitizer"
make asan
