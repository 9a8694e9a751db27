#!/usr/bin/env bash
# scripts/fio_replay.sh (issue 22, F4): it answers a fio job with the output an
# earlier run stored for that very job, refuses a job that differs, and says
# what it needs when FIO_REPLAY_DIR or its arguments are missing. Its user
# scripts/f4_stripes.sh refuses a run without fio/ and a stripe that is not a
# size in bytes, before it fits anything.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPLAY="$ROOT/scripts/fio_replay.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/stored/fit_point3_2" "$tmp/now/fit_point3_2"
printf '[global]\nbs=4096\n' > "$tmp/stored/fit_point3_2/job.fio"
echo '{"fio version": "fio-3.33", "jobs": []}' > "$tmp/stored/fit_point3_2/fio.json"
cp "$tmp/stored/fit_point3_2/job.fio" "$tmp/now/fit_point3_2/job.fio"

# The same job: the stored output, where calibrate asked for it.
FIO_REPLAY_DIR="$tmp/stored" "$REPLAY" --output-format=json --output="$tmp/now/fit_point3_2/fio.json" \
  "$tmp/now/fit_point3_2/job.fio" || fail "a stored job was not replayed"
cmp -s "$tmp/stored/fit_point3_2/fio.json" "$tmp/now/fit_point3_2/fio.json" || fail "the replayed output differs"

# Another job under the same name: refused, naming both files.
printf '[global]\nbs=8192\n' > "$tmp/now/fit_point3_2/job.fio"
err=$(FIO_REPLAY_DIR="$tmp/stored" "$REPLAY" --output="$tmp/out.json" "$tmp/now/fit_point3_2/job.fio" 2>&1)
[ $? -eq 1 ] || fail "a changed job was replayed"
[[ $err == *"is not the job stored in $tmp/stored/fit_point3_2/job.fio"* ]] || fail "unclear refusal: $err"
[ ! -e "$tmp/out.json" ] || fail "a refused job wrote an output"

# No stored run, no output path: say what is missing.
err=$("$REPLAY" --output="$tmp/out.json" "$tmp/now/fit_point3_2/job.fio" 2>&1)
[ $? -ne 0 ] && [[ $err == *"set FIO_REPLAY_DIR"* ]] || fail "no FIO_REPLAY_DIR: $err"
err=$(FIO_REPLAY_DIR="$tmp/stored" "$REPLAY" "$tmp/now/fit_point3_2/job.fio" 2>&1)
[ $? -eq 2 ] && [[ $err == *"expected --output=FILE and a job file"* ]] || fail "no --output: $err"

STRIPES="$ROOT/scripts/f4_stripes.sh"
err=$("$STRIPES" "$tmp/now" 2>&1)
[ $? -eq 2 ] && [[ $err == *"$tmp/now/fio is not a directory"* ]] || fail "f4_stripes without fio/: $err"
mkdir -p "$tmp/run/fio"
err=$(WORK="$tmp/work" "$STRIPES" "$tmp/run" 16384 16KiB 2>&1)
[ $? -eq 2 ] && [[ $err == *'stripe "16KiB" is not a positive integer (bytes)'* ]] || fail "f4_stripes 16KiB: $err"
[ ! -e "$tmp/work" ] || fail "f4_stripes fitted before it checked its arguments"
echo "fio_replay: ok"
