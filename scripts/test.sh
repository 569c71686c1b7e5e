#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine, then runs the whole test suite.
# Usage: scripts/test.sh [extra `swift test` arguments]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

log() { printf '==> %s\n' "$*" >&2; }

# Debian packages: Python's venv for the interop tests (the official Python client), Chromium for
# the browser test, nginx for the cluster test (ClusterNginxTests starts its own nginx on loopback; the package's service is
# not used), tmux for the CLI's terminal test.
need_apt=()
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
# Headless Chromium for the browser test of the server's own pages (BrowserTests, driven through
# the DevTools protocol with aiohttp from the interop venv).
command -v chromium >/dev/null || need_apt+=(chromium)
# tmux: the CLI's live-table test runs `lightstreamer subscribe` on its pseudo-terminal.
command -v tmux >/dev/null || need_apt+=(tmux)
# mimalloc: the server runs on it when installed (docs/CONFIG.md, "Memory allocator"), and
# ProcessAllocatorProcessTests check that it does; every spawned server then runs on it.
[ -n "$(ls /usr/lib/*/libmimalloc.so.2 /usr/lib64/libmimalloc.so.2 /usr/lib/libmimalloc.so.2 2>/dev/null)" ] || need_apt+=(libmimalloc2.0)
if ((${#need_apt[@]})) && command -v apt-get >/dev/null; then
  log "apt-get install ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# PyPI: the official Lightstreamer Python client, pinned, in a venv the interop tests use.
venv="$root/.venv-interop"
if [ -f Tests/Interop/requirements.txt ]; then
  if [ ! -x "$venv/bin/python" ] || ! cmp -s Tests/Interop/requirements.txt "$venv/.requirements"; then
    log "creating $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/Interop/requirements.txt
    cp Tests/Interop/requirements.txt "$venv/.requirements"
  fi
  export LS_INTEROP_PYTHON="$venv/bin/python"
fi

# PostgreSQL for the MPN store tests: a throw-away cluster on loopback (unless a URL is given).
if [ -z "${LS_TEST_POSTGRES_URL:-}" ]; then
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v apt-get >/dev/null; then
    log "apt-get install postgresql"
    if [ "$(id -u)" = 0 ]; then PG_SUDO=""; else PG_SUDO="sudo"; fi
    $PG_SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $PG_SUDO apt-get install -y -qq postgresql >/dev/null
  fi
  pgdir=$(mktemp -d /tmp/ls-mpn-pg.XXXXXX)
  if pgurl=$(scripts/postgres-test-cluster.sh start "$pgdir"); then
    export LS_TEST_POSTGRES_URL="$pgurl"
    trap 'scripts/postgres-test-cluster.sh stop "$pgdir"' EXIT
    log "PostgreSQL test cluster at $pgurl"
  else
    rm -rf "$pgdir"
    # In CI a skipped store would hide a missing step: fail instead.
    if [ -n "${CI:-}" ]; then log "PostgreSQL test cluster did not start"; exit 1; fi
    log "PostgreSQL test cluster did not start: the PostgreSQL MPN store tests will be skipped"
  fi
fi

# Formatting first: it fails in seconds, before a build of several minutes.
log "scripts/format.sh --check"
scripts/format.sh --check

# Two test runs. Swift Testing runs every test body on the process's cooperative thread
# pool (one thread per core here), which the in-process servers under test also use for their
# tasks (session creation, subscriptions): with everything at once, CPU-bound unit tests kept
# those tasks waiting for tens of seconds and timing-bound socket tests (slowloris, slow
# readers) missed their windows. The second run holds the suites that start other processes
# (server nodes, nginx, the official Python client and Remote Adapter SDK). Three suites then
# run alone, one after the other: the slowloris test (500 connections held open) and the
# slow-reader memory test (12 clients that never read a 1,000-updates/s item; the time for their
# socket buffers and backlogs to fill scales with the CPU the server gets: 18 s alone, more than
# 3 minutes once beside the whole suite on a loaded machine). The flood of 60,000 refused MONITOR
# logins runs alone as well (~40 s of both cores, which would starve the timing-bound tests).
heavy='Cluster|InteropTests|RemoteAdaptersInteropTests|MPNClusterSync|ControlLinkEndToEnd'
alone=(FrontSlowlorisTests AdversarialMemoryTests MonitorLoginFloodTests)
# Each run has a time limit, far above what it takes (the build about 9 minutes from clean on 2
# cores, then at most about a minute for each run): a test that hangs then fails its run with
# the output so far, instead of holding CI until its own limit cuts everything off. SIGQUIT
# first, so that a hung process can still be told apart from a slow one; SIGKILL 30 s later.
limited() {
  local minutes=$1
  shift
  timeout --signal=QUIT --kill-after=30 "${minutes}m" "$@"
}
if (($#)); then
  log "swift test $*"
  swift test "$@"
else
  skip="$heavy|$(IFS='|'; echo "${alone[*]}")"
  # The in-process run at most $width tests at a time (LS_TEST_WIDTH, default 8): with all ~880
  # started at once, the process's start stalled its tests' tasks for 15-19 s in a CI run, and
  # beside six CPU hogs some waits went past 30 s; at 8 the same run passes beside the hogs and
  # takes no longer on an idle machine (59 s against 66 s on 2 cores). `swift test` has no way
  # to pass Swift Testing's width option, so this run calls the test binary itself where SwiftPM
  # builds one (Linux); elsewhere it falls back to `swift test` with the default width. (Checked
  # to take effect: FrontTimeoutTests' 13 tests take 26 s at width 1, 4 s at 64. A toolchain
  # without the option ignores it, as the binary ignores any argument it does not know.)
  width=${LS_TEST_WIDTH:-8}
  # Checked here: the binary ignores a width that is not a number (it would run with the default)
  # and stops on 0.
  if ! [[ $width =~ ^[1-9][0-9]{0,3}$ ]]; then
    log "LS_TEST_WIDTH must be a whole number from 1 to 9999, not '$width'"
    exit 2
  fi
  log "swift build --build-tests"
  limited 30 swift build --build-tests
  bin="$(swift build --show-bin-path)/lightstreamer-swiftPackageTests.xctest"
  if [ -f "$bin" ] && [ -x "$bin" ]; then
    log "in-process suites (all but the multi-process ones), at most $width tests at a time"
    NO_COLOR=1 limited 15 "$bin" --testing-library swift-testing --skip "$skip" \
      --experimental-maximum-parallelization-width "$width"
  else
    log "swift test (all but the multi-process suites)"
    limited 15 swift test --skip-build --skip "$skip"
  fi
  log "swift test (multi-process suites)"
  limited 20 swift test --skip-build --filter "$heavy"
  for suite in "${alone[@]}"; do
    log "swift test ($suite)"
    limited 10 swift test --skip-build --filter "$suite"
  done
fi

# API documentation (DocC, swift-docc-plugin): both catalogs must build without a warning (a
# broken symbol link, an undocumented parameter, an unknown page): docc's --warnings-as-errors
# turns each into an error that fails the build. Skipped when arguments select tests.
# Output: .build/plugins/Swift-DocC/outputs/{LightstreamerClient,LightstreamerServer}.doccarchive.
if ! (($#)); then
  log "swift package generate-documentation (LightstreamerClient, LightstreamerServer; warnings are errors)"
  swift package generate-documentation --target LightstreamerClient --target LightstreamerServer --warnings-as-errors
fi
