#!/usr/bin/env bash
# Soak test of the server and the client library (docs/RELIABILITY.md, "Soak"). Not run by CI.
#
# Usage: scripts/soak.sh [SECONDS] [SESSIONS]        (defaults: 1800 and 2000)
#
# Builds the release products, starts `lightstreamer-server` as its own process on a free
# loopback port (configuration written to the run directory: per-address limits lifted, a SOAK
# adapter set whose `counter` item ticks SOAK_RATE times a second, MPN on with a SQLite store and
# the `test` service level, so notifications are JSON lines on the server's standard error),
# then runs `lightstreamer-soak`: SESSIONS clients spread over the four transports, all through a
# proxy that resets SOAK_CUT_FRACTION of the connections every SOAK_CUT_EVERY seconds, the first
# SOAK_MPN_CLIENTS of them with an MPN device. Every 10 s the server's VmRSS and open file
# descriptors go to samples.csv. At the end it checks the MPN store with sqlite3 and prints a
# summary.
#
# Environment: SOAK_RATE (20), SOAK_CUT_EVERY (20), SOAK_CUT_FRACTION (0.1),
# SOAK_MPN_CLIENTS (40), SOAK_TRIGGER_EVERY (60), SOAK_DIR (a new temporary directory),
# SOAK_SKIP_BUILD=1 (use the binaries already in .build/release).
#
# Exit status 0 only if all of these hold (the "pass rule"):
#   - no update lost or duplicated, no client stale at the end, the driver exited 0;
#   - the server process is alive at the end (and then exits 0 on SIGTERM);
#   - fds at the end of the steady state <= 1.1 x fds at its start (its first sample 2 minutes
#     in, when the run is that long) + 50, and after every client
#     disconnected, fds <= the idle fds before the run + 20 (no descriptor leak);
#   - VmRSS at the end of the steady state <= 1.5 x VmRSS at its start (same sample);
#   - every MPN device and subscription the server acknowledged is in the SQLite store, and the
#     server wrote at least one notification.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

seconds=${1:-1800}
sessions=${2:-2000}
rate=${SOAK_RATE:-20}
cut_every=${SOAK_CUT_EVERY:-20}
cut_fraction=${SOAK_CUT_FRACTION:-0.1}
mpn_clients=${SOAK_MPN_CLIENTS:-40}
trigger_every=${SOAK_TRIGGER_EVERY:-60}
dir=${SOAK_DIR:-$(mktemp -d /tmp/ls-soak.XXXXXX)}
mkdir -p "$dir"

log() { printf '[%s] ==> %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "$*"; exit 2; }

# 2,000 sessions through the proxy need about 3 descriptors each in the driver.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
log "run directory $dir; open-files limit $(ulimit -n)"

if [ "${SOAK_SKIP_BUILD:-0}" != 1 ]; then
  log "swift build -c release (lightstreamer-server, lightstreamer-soak)"
  swift build -c release --product lightstreamer-server >"$dir/build.log" 2>&1 || die "build failed: $dir/build.log"
  swift build -c release --product lightstreamer-soak >>"$dir/build.log" 2>&1 || die "build failed: $dir/build.log"
fi
bin=$(swift build -c release --show-bin-path)
[ -x "$bin/lightstreamer-server" ] && [ -x "$bin/lightstreamer-soak" ] || die "binaries missing in $bin"

command -v sqlite3 >/dev/null || log "sqlite3 not found (apt-get install sqlite3): the MPN store check will be skipped"

cat >"$dir/config.json" <<EOF
{
  "servername": "Lightstreamer Swift Server (soak)",
  "host": "127.0.0.1",
  "limits": { "maxSessionsPerAddress": 0 },
  "front": { "maxConnectionsPerAddress": 60000, "maxConnections": 60000 },
  "adapterSets": [
    {
      "name": "SOAK",
      "dataAdapters": [
        {
          "name": "DEFAULT",
          "items": [
            { "name": "counter", "behavior": "counter", "updatesPerSecond": $rate, "counterFields": ["count"] },
            { "name": "quote", "count": 20, "behavior": "randomWalk", "updatesPerSecond": 2,
              "walkFields": { "last": { "start": 100, "step": 0.25, "min": 50, "max": 150, "decimals": 2 },
                              "volume": { "start": 1000, "step": 50, "min": 0, "max": 100000, "decimals": 0 } } },
            { "name": "mpntick", "behavior": "counter", "updatesPerSecond": 0.2, "counterFields": ["tick"] }
          ]
        }
      ],
      "mpn": { "enabled": true }
    }
  ],
  "mpn": {
    "enabled": true,
    "store": { "sqlitePath": "$dir/mpn.sqlite" },
    "apple": [ { "id": "*", "serviceLevel": "test" } ],
    "google": [ { "id": "*", "serviceLevel": "test" } ]
  }
}
EOF

# The server, in its own process; its standard error carries the log and the MPN notifications.
"$bin/lightstreamer-server" --config "$dir/config.json" --port 0 --log-level notice \
  >"$dir/server.out" 2>"$dir/server.err" &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's#.*ready on http://127.0.0.1:\([0-9]*\).*#\1#p' "$dir/server.out")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.2
done
[ -n "$port" ] || { cat "$dir/server.err" >&2; die "the server did not start"; }
log "server pid $server_pid on 127.0.0.1:$port"

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# Sampler: every 10 s, the phase (idle, rampup, steady, after), the server's VmRSS and fds, and
# the driver's VmRSS.
csv="$dir/samples.csv"
echo "utc,elapsed_s,phase,server_rss_kb,server_fds,server_threads,driver_rss_kb" >"$csv"
t0=$(date +%s)
sample() {
  local phase=idle
  [ -e "$dir/driver.started" ] && phase=rampup
  [ -e "$dir/ready" ] && phase=steady
  [ -e "$dir/driver.done" ] && phase=after
  local threads dpid drss=0
  threads=$(awk '/^Threads:/ { print $2 }' "/proc/$server_pid/status" 2>/dev/null || echo 0)
  dpid=$(cat "$dir/driver.pid" 2>/dev/null || true)
  [ -n "$dpid" ] && [ ! -e "$dir/driver.done" ] && drss=$(rss_kb "$dpid")
  echo "$(date -u +%FT%TZ),$(( $(date +%s) - t0 )),$phase,$(rss_kb "$server_pid"),$(fds "$server_pid"),$threads,$drss" >>"$csv"
}
( while kill -0 "$server_pid" 2>/dev/null; do sample; sleep 10; done ) &
sampler_pid=$!
sleep 2

cleanup() {
  kill "$sampler_pid" 2>/dev/null
  [ -n "${driver_pid:-}" ] && kill "$driver_pid" 2>/dev/null
  kill -0 "$server_pid" 2>/dev/null && kill "$server_pid" 2>/dev/null
}
trap cleanup EXIT

log "driver: $sessions sessions for $seconds s (counter $rate/s, cuts of $cut_fraction every $cut_every s, $mpn_clients MPN devices)"
touch "$dir/driver.started"
"$bin/lightstreamer-soak" --server-port "$port" --sessions "$sessions" --seconds "$seconds" \
  --counter-rate "$rate" --cut-every "$cut_every" --cut-fraction "$cut_fraction" \
  --mpn-clients "$mpn_clients" --trigger-every "$trigger_every" \
  --ready-file "$dir/ready" --ids-file "$dir/mpn-ids.txt" \
  >"$dir/driver.out" 2>"$dir/driver.log" &
driver_pid=$!
echo "$driver_pid" >"$dir/driver.pid"
wait "$driver_pid"
driver_status=$?
driver_pid=""
touch "$dir/driver.done"
log "driver exited with status $driver_status; waiting 30 s for the server to close the sessions"
sleep 30
sample

server_alive=yes
kill -0 "$server_pid" 2>/dev/null || server_alive=no

# The MPN store, checked after the server stopped (SIGTERM: graceful shutdown).
server_exit=dead
kill "$sampler_pid" 2>/dev/null
if [ "$server_alive" = yes ]; then
  kill -TERM "$server_pid"
  wait "$server_pid"
  server_exit=$?
fi

get() { sed -n "s/^soak\.$1=//p" "$dir/driver.out" | tail -1; }
devices_acked=$(grep -c '^device ' "$dir/mpn-ids.txt" 2>/dev/null || echo 0)
subs_acked=$(grep -c '^subscription ' "$dir/mpn-ids.txt" 2>/dev/null || echo 0)
devices_stored=skipped
subs_stored=skipped
if command -v sqlite3 >/dev/null && [ -f "$dir/mpn.sqlite" ] && [ -s "$dir/mpn-ids.txt" ]; then
  list() { grep "^$1 " "$dir/mpn-ids.txt" | awk '{ printf "%s'\''%s'\''", (NR > 1 ? "," : ""), $2 }'; }
  devices_stored=$(sqlite3 "$dir/mpn.sqlite" "SELECT count(*) FROM mpn_devices WHERE device_id IN ($(list device));")
  subs_stored=$(sqlite3 "$dir/mpn.sqlite" "SELECT count(*) FROM mpn_subscriptions WHERE subscription_id IN ($(list subscription));")
  sqlite3 "$dir/mpn.sqlite" "SELECT status, count(*) FROM mpn_subscriptions GROUP BY status;" >"$dir/mpn-statuses.txt"
fi
notifications=$(grep -c '"deviceToken"' "$dir/server.err" || true)
triggered_notifications=$(grep '"deviceToken"' "$dir/server.err" | grep -cE '"triggered": ?true' || true)

# Figures from the samples.
col() { awk -F, -v p="$1" -v c="$2" -v w="$3" 'NR > 1 && $3 == p { v[++n] = $c }
  END { if (n == 0) { print 0; exit } if (w == "first") print v[1]; else if (w == "last") print v[n];
        else { m = v[1]; for (i = 2; i <= n; i++) if (v[i] + 0 > m + 0) m = v[i]; print m } }' "$csv"; }
idle_fds=$(col idle 5 last); idle_rss=$(col idle 4 last)
# The steady state's "start" for the growth checks is its first sample 2 minutes in (sessions
# and buffers settled), or its first sample in a shorter run.
steady_t0=$(awk -F, 'NR > 1 && $3 == "steady" { print $2; exit }' "$csv")
settled=$(awk -F, -v t="$(( ${steady_t0:-0} + 120 ))" 'NR > 1 && $3 == "steady" && $2 >= t { print; exit }' "$csv")
[ -n "$settled" ] || settled=$(awk -F, 'NR > 1 && $3 == "steady" { print; exit }' "$csv")
rss_start=$(echo "${settled:-,,,0,0}" | cut -d, -f4); fds_start=$(echo "${settled:-,,,0,0}" | cut -d, -f5)
rss_first=$(col steady 4 first); fds_first=$(col steady 5 first)
rss_end=$(col steady 4 last); rss_peak=$(col steady 4 max)
fds_end=$(col steady 5 last); fds_peak=$(col steady 5 max)
after_fds=$(col after 5 last); after_rss=$(col after 4 last)
drv_rss_start=$(col steady 7 first); drv_rss_end=$(col steady 7 last)

fail=()
[ "$driver_status" = 0 ] || fail+=("driver exit status $driver_status")
[ "$(get lost)" = 0 ] || fail+=("lost=$(get lost)")
[ "$(get duplicated)" = 0 ] || fail+=("duplicated=$(get duplicated)")
[ "$(get stale_clients)" = 0 ] || fail+=("stale clients=$(get stale_clients)")
[ "$server_alive" = yes ] || fail+=("server died")
[ "$server_exit" = 0 ] || fail+=("server exit status $server_exit after SIGTERM")
[ "$fds_end" -le $(( fds_start * 11 / 10 + 50 )) ] || fail+=("fds grew: $fds_start -> $fds_end")
[ "$after_fds" -le $(( idle_fds + 20 )) ] || fail+=("fds after disconnection $after_fds > idle $idle_fds + 20")
[ "$rss_end" -le $(( rss_start * 3 / 2 )) ] || fail+=("RSS grew: $rss_start -> $rss_end kB")
if [ "$mpn_clients" -gt 0 ]; then
  [ "$devices_acked" = "$mpn_clients" ] || fail+=("MPN devices registered $devices_acked/$mpn_clients")
  [ "$devices_stored" = skipped ] || [ "$devices_stored" = "$devices_acked" ] || fail+=("MPN devices in store $devices_stored/$devices_acked")
  [ "$subs_stored" = skipped ] || [ "$subs_stored" = "$subs_acked" ] || fail+=("MPN subscriptions in store $subs_stored/$subs_acked")
  [ "$notifications" -gt 0 ] || fail+=("no MPN notification written")
fi

summary="$dir/summary.txt"
{
  echo "soak: $sessions sessions, $seconds s steady state, counter $rate updates/s, cuts of $cut_fraction every $cut_every s"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(uname -sr), load at end $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "server RSS (kB): idle $idle_rss, first steady sample $rss_first, steady start (2 min in) $rss_start, peak $rss_peak, end $rss_end, after disconnection $after_rss"
  echo "server fds: idle $idle_fds, first steady sample $fds_first, steady start (2 min in) $fds_start, peak $fds_peak, end $fds_end, after disconnection $after_fds"
  echo "driver RSS (kB): steady start $drv_rss_start, end $drv_rss_end"
  echo "sessions up after ramp-up: $(get sessions_up_after_rampup)/$sessions in $(get rampup_seconds) s"
  echo "counter updates received: $(get counter_updates) (stock updates $(get stock_updates))"
  echo "lost: $(get lost), duplicated: $(get duplicated), lost reported by the server (OV): $(get lost_reported_by_server)"
  echo "socket cuts: $(get socket_cuts) in $(get cut_rounds) rounds; recovery attempts $(get recovery_attempts), recovered $(get recoveries)"
  echo "new sessions (beyond one per client): $(get new_sessions); will-retry $(get will_retry); stale clients at end $(get stale_clients); counter spread at end $(get counter_spread_at_end)"
  echo "server errors: $(get server_errors); subscription errors: $(get subscription_errors)"
  echo "proxy: $(get proxy_connections_accepted) connections accepted, $(get proxy_upstream_connect_failures) upstream connect failures"
  echo "MPN: devices registered $devices_acked/$mpn_clients (in store: $devices_stored), subscriptions activated $subs_acked of $(get mpn_subscriptions_requested) requested (in store: $subs_stored), triggered $(get mpn_subscriptions_triggered), failures $(get mpn_failures)"
  echo "MPN notifications on the server's stderr: $notifications ($triggered_notifications triggered)"
  echo "server alive at end: $server_alive (exit status after SIGTERM: $server_exit)"
  if ((${#fail[@]})); then echo "RESULT: FAIL: ${fail[*]}"; else echo "RESULT: PASS"; fi
  echo "files: $dir (samples.csv, driver.log, driver.out, server.err, summary.txt)"
} | tee "$summary"
((${#fail[@]} == 0))
