#!/usr/bin/env bash
# Issue 23: the mount on the multi-process path under mpirun, as on real
# hosts: `mpirun -np 3 sluice node --mpi --config C` with the workload kind
# "mount" (loopback addresses here); the client rank mounts, a file written
# through the mount reads back, `sluice umount` ends the run and every rank
# exits 0. Usage: mount_mpi_test.sh SLUICE (77: no mpirun, or cannot mount).
set -u
sluice=$1
. "$(dirname "$0")/mount_lib.sh"
begin_mount_test mpi mpirun
mnt=$tmp/mnt
mkdir -p "$mnt"
cat >"$tmp/cluster.json" <<JSON
{"run_id": "mountmpi$$", "insecure": true, "storage_root": "$tmp/storage", "max_wait_s": 60,
 "nodes": [{"id": 0, "roles": ["mgmt", "meta", "client"]},
           {"id": 1, "roles": ["storage"], "targets": [1]},
           {"id": 2, "roles": ["storage"], "targets": [2]}],
 "workload": {"kind": "mount", "mount_point": "$mnt"}}
JSON
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  timeout 300 mpirun -np 3 "$sluice" node --mpi --config "$tmp/cluster.json" >"$tmp/mpi.out" 2>&1 &
mount_pid=$!
for _ in $(seq 1 240); do
  grep -q " $mnt fuse.sluice" /proc/self/mounts && break
  kill -0 "$mount_pid" 2>/dev/null || break
  sleep 0.5
done
if ! grep -q " $mnt fuse.sluice" /proc/self/mounts; then
  echo "FAIL: the client rank did not mount"; tail -20 "$tmp/mpi.out"; exit 1
fi
head -c 3000000 /dev/urandom >"$tmp/data"
if cp "$tmp/data" "$mnt/data" && cmp -s "$tmp/data" "$mnt/data"; then
  echo "ok: 3 MB written through the mount of the mpirun deployment read back the same"
else
  echo "FAIL: the bytes read back differ"; fail=1
fi
stop_mount
grep -q "mount at $mnt ended: ok" "$tmp/mpi.out" || { echo "FAIL: the client rank's mount did not end cleanly"; fail=1; }
exit $fail
