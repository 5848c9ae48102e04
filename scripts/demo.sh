#!/usr/bin/env bash
# Sets everything up, then runs the main job: `ranked demo`, the leaderboard service on the
# embedded default (boards in memory, journaled to ./ranked-data) with simulated players,
# at http://127.0.0.1:8080 until Ctrl-C. Extra arguments go to `ranked demo` (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
exec .venv/bin/ranked demo "$@"
