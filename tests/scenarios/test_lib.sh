# Shell helpers the CLI tests share (sourced; set $tmp and fail=0 first).

# expect CODE DESCRIPTION -- command...: runs it (stdout to $tmp/out, stderr
# to $tmp/err) and says ok or FAIL with its output, setting fail=1.
expect() {
  local want=$1 what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, wanted $want"; cat "$tmp/out" "$tmp/err" | head -20; fail=1
  else
    echo "ok: $what"
  fi
}

# The pids whose parent is $1 (from /proc: no procps needed).
children_of() {
  local parent=$1 stat fields state ppid
  for stat in /proc/[0-9]*/stat; do
    fields=$(sed -E 's/^[0-9]+ \(.*\) //' "$stat" 2>/dev/null) || continue
    read -r state ppid _ <<<"$fields"
    if [ "$ppid" = "$parent" ]; then basename "$(dirname "$stat")"; fi
  done
}

# skip_unless_netns SLUICE: exits 77 (skipped, saying why) unless this is
# root, `ip netns add` works here and sluice-node is next to SLUICE.
skip_unless_netns() {
  [ "$(id -u)" = 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
  local probe="sluice-emu-probe-$$"
  ip netns add "$probe" 2>/dev/null || { echo "SKIP: ip netns add is not permitted here"; exit 77; }
  ip netns delete "$probe"
  [ -x "$(dirname "$1")/sluice-node" ] || { echo "SKIP: no sluice-node next to $1"; exit 77; }
}
