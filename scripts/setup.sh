#!/usr/bin/env bash
# Installs everything ranked needs on a fresh Debian machine: redis-server/redis-cli (for the
# tests and the Redis peers), PostgreSQL's server (the postgresql:// journal's tests start
# one), build tools, valgrind (the C self-test runs under memcheck), wrk (the service
# benchmark's load generator), chromium and chromium-driver (the page's test), Python's
# headers and venv module, SQLite's headers (the journal's native lane), then the package
# itself (editable, with the C engine, the service and every test tool) into the project's
# virtual environment .venv (never the system Python). Safe to run again: it installs only what is missing. Then
# `source .venv/bin/activate` (the other scripts do it themselves).
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
command -v wrk >/dev/null 2>&1 || missing+=(wrk)  # the service benchmarks' load generator
# The page's test drives Debian's headless Chromium through its driver (Selenium).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
# Debian's python3 creates virtual environments only with its venv package installed.
python3 -c "import ensurepip, venv" >/dev/null 2>&1 || missing+=(python3-venv)
# The C engine builds against Python's headers (Debian ships them in python3-dev).
headers=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
[ -f "$headers/Python.h" ] || missing+=(python3-dev)
# The journal's native lane builds against SQLite's headers (the library Python's sqlite3 uses).
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,bench,service]"
.venv/bin/python -c "import ranked; print('setup: ranked', ranked.__version__, 'engine:', ranked.IMPLEMENTATION)"
