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
