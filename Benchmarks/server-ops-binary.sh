# Sourced by the callgrind scripts: builds server-ops (unless SERVER_OPS names a build) and sets
# `server_ops_bin` to a copy without its DWARF, which valgrind gives up on for this toolchain's
# binaries (the symbols stay). The copy goes when the caller's shell exits (it sets `trap`).
[ -n "${SERVER_OPS:-}" ] || swift build -c release --product server-ops >&2
server_ops_built=${SERVER_OPS:-$(swift build -c release --show-bin-path)/server-ops}
server_ops_bin=$(mktemp)
trap 'rm -f "$server_ops_bin"' EXIT
objcopy --strip-debug "$server_ops_built" "$server_ops_bin"
