#!/usr/bin/env bash
# How long a new user waits for the first page: `bin/run` in a fresh clone of this repository, from an empty .venv
# and then a second time, each timed to the first HTTP 200 of the login page.
#   perf/first_page.sh [CLONE_DIR]     (default /tmp/hb-first-page; replaced, its data in CLONE_DIR.data)
#   perf/first_page.sh --reuse-venv VENV [CLONE_DIR]
# --reuse-venv: a quick check that the path still works, nothing timed from empty: the clone's .venv is a link to
# VENV, which must already hold the platform as bin/setup installs it for this requirements.txt (its stamp file),
# so that nothing is installed into it; one run only.
# For each run it prints the seconds to the first page, the CPU seconds bin/run had used by then (its setup's pip
# included) and the machine's load, which on a shared machine says more than the seconds. pip's download cache is
# used as it is. Each run is stopped with SIGTERM once the page has answered.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
reuse=
if [ "${1:-}" = --reuse-venv ]; then
  reuse=$(cd "$2" && pwd)
  shift 2
fi
clone=${1:-/tmp/hb-first-page}
rm -rf "$clone" "$clone.data"
git clone --quiet "$repo" "$clone"
if [ -n "$reuse" ]; then
  stamp=.installed-platform-$(cat "$clone/requirements.txt" "$clone/bin/setup" | sha256sum | cut -c1-16)
  [ -f "$reuse/$stamp" ] || { echo "$reuse has no $stamp: bin/setup would install into it"; exit 2; }
  ln -s "$reuse" "$clone/.venv"
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

first_page() {
  local label=$1 log="$clone.$2.log" start load pid seconds cpu
  start=$(date +%s.%N)
  load=$(cut -d' ' -f1 /proc/loadavg)
  # setsid: the run gets a process group of its own, stopped as a whole below. bin/run ends in `exec python
  # manage.py serve`, so this pid is the server's, and its children's CPU time holds the setup it waited for.
  (cd "$clone" && exec setsid env -u VIRTUAL_ENV -u DATABASE_URL -u CELERY_BROKER_URL -u DJANGO_SETTINGS_MODULE \
    HB_ADDRPORT="127.0.0.1:$port" HB_DATA_DIR="$clone.data" bin/run) > "$log" 2>&1 &
  pid=$!
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/accounts/login/")" = 200 ]; do
    kill -0 "$pid" 2>/dev/null || { echo "bin/run ended before answering:"; tail -20 "$log"; exit 1; }
    sleep 0.2
  done
  seconds=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
  cpu=$(awk -v tick="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15 + $16 + $17) / tick}' "/proc/$pid/stat")
  echo "$label: first page after $seconds s, $cpu CPU s; load $load at the start, $(cut -d' ' -f1 /proc/loadavg) at the first page ($(nproc) cores; log $log)"
  kill -TERM -- "-$pid"
  wait "$pid" || true
}

if [ -n "$reuse" ]; then
  first_page "bin/run, .venv reused" reused
  exit 0
fi
first_page "bin/run, empty .venv" first
first_page "bin/run, second run " second
