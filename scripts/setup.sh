#!/usr/bin/env bash
# Installs everything ranked needs on a fresh Debian machine: redis-server/redis-cli (for the
# tests and the Redis peers), PostgreSQL's server (the postgresql:// journal's tests start one), build tools, valgrind (the C self-test runs under memcheck),
# Python's headers, and the package itself (editable, with the C engine).
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
# Debian keeps initdb off PATH, in /usr/lib/postgresql/<version>/bin.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  missing+=(postgresql)
fi
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)  # benchmarks/service_stack.py
# The C engine builds against Python's headers (Debian ships them in python3-dev).
headers=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
[ -f "$headers/Python.h" ] || missing+=(python3-dev)
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test,bench]"
python3 -c "import ranked; print('setup: ranked', ranked.__version__, 'engine:', ranked.IMPLEMENTATION)"
