# Shared by Benchmarks/idle-heap.sh and Benchmarks/closed-heap.sh (sourced, with `bin` set to a
# build of lightstreamer-loadtest): a `--serve` process under heaptrack, and what two runs of it
# left allocated, per session and by allocation site.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
port=0
trap 'pkill -9 -f "$bin --serve --port $port" 2>/dev/null || true; rm -rf "$work"' EXIT

# serve_under_heaptrack NAME [OPTION...]: `$bin --serve` on a new port (`$port`), under
# heaptrack, its profile named NAME; returns once it has had time to start. On glibc's malloc
# (LIGHTSTREAMER_MALLOC=system): otherwise the server executes itself again with mimalloc
# preloaded, whose allocations heaptrack does not see (it then counted 0 bytes per session).
serve_under_heaptrack() {
  local name=$1; shift
  port=$((21000 + RANDOM % 10000))
  ( LIGHTSTREAMER_MALLOC=system heaptrack -o "$work/h$name" "$bin" --serve --port "$port" "$@" > "$work/server.log" 2>&1 & )
  sleep 4
}

# stop_server: SIGKILL, so that what is allocated stays allocated in heaptrack's view.
stop_server() {
  pkill -9 -f "$bin --serve --port $port"
  sleep 1
}

# leaked_stacks NAME: what the run NAME still had allocated, as $work/NAME.stacks.
leaked_stacks() {
  heaptrack_print --flamegraph-cost-type leaked -F "$work/$1.stacks" "$work"/h"$1".*zst > /dev/null 2>&1
}

# finish_run NAME CLIENT_PID: stops the server (SIGKILL) and the client process, and keeps what
# the run NAME left allocated (`leaked_stacks`).
finish_run() {
  stop_server
  kill "$2" 2>/dev/null || true
  wait || true
  leaked_stacks "$1"
}

# per_session_by_site SMALL LARGE: the difference of the two runs over LARGE - SMALL sessions,
# by site (Benchmarks/heap-by-site.py; FRAMES=n: sites n frames deep).
per_session_by_site() {
  python3 "$here/heap-by-site.py" "$work/$1.stacks" "$work/$2.stacks" "$(($2 - $1))" "${FRAMES:-1}"
}
