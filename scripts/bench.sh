#!/usr/bin/env bash
# Sets everything up, then runs the engine benchmark: ranked against its peers, side by side.
# Extra arguments go to benchmarks/engine.py (for example --quick, --sizes 10000, --huge).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
source .venv/bin/activate
make -s build/c/bench_skiplist  # the plain-C baseline printed beside the Python figures
python3 benchmarks/engine.py "$@"
