#!/usr/bin/env bash
# Starts or stops a throw-away PostgreSQL cluster on loopback for the MPN store tests.
#   scripts/postgres-test-cluster.sh start DIR   → prints the URL (postgres://mpn@127.0.0.1:PORT/mpn_test)
#   scripts/postgres-test-cluster.sh stop DIR    → stops the server and removes DIR
# initdb and postgres refuse to run as root, so as root they run as the `postgres` user.
set -euo pipefail

cmd=${1:?usage: $0 start|stop DIR}
dir=${2:?usage: $0 start|stop DIR}

bindir=""
for c in /usr/lib/postgresql/*/bin; do [ -x "$c/initdb" ] && bindir=$c; done
if [ -z "$bindir" ] && command -v initdb >/dev/null; then bindir=$(dirname "$(command -v initdb)"); fi

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
  [ -n "$bindir" ] || { echo "PostgreSQL server binaries not found" >&2; exit 1; }
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  # A random port may be taken: up to three tries, each on a fresh cluster, with the server's
  # log on stderr when one fails (the directory is gone once the caller gives up).
  for attempt in 1 2 3; do
    port=${PGPORT_TEST:-$(( 20000 + RANDOM % 20000 ))}
    rm -rf "$dir/data"
    if as_owner "$bindir/initdb" -D "$dir/data" -U mpn --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 \
      && as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=on -c synchronous_commit=on" start >/dev/null \
      && as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U mpn mpn_test; then
      echo "postgres://mpn@127.0.0.1:$port/mpn_test"
      exit 0
    fi
    echo "PostgreSQL test cluster, try $attempt on port $port failed:" >&2
    tail -n 5 "$dir/initdb.log" "$dir/server.log" >&2 2>/dev/null || true
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  done
  exit 1
  ;;
stop)
  if [ -d "$dir/data" ] && [ -n "$bindir" ]; then
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
