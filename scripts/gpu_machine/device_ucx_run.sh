#!/usr/bin/env bash
# Issue 51 item 3 on the GPU machine: GPU memory through the UCX transport.
# The Debian UCX (1.13) has no CUDA support; the libucx-cu13 wheel's UCX does,
# and sluice's ucx transport (built against the ucp API of 1.13, which later
# UCX keeps) runs on it with the wheel's libraries first on the library path.
#
#   scripts/gpu_machine/device_ucx_run.sh --pack   (here)
#       packs sluice and sluice-node (built with CUDA in $BUILD, default build/) into
#       .carry/sluice_ucx, and the wheel's shared libraries, UCX modules and
#       ucx_info (pip download libucx-cu13, nothing installed) into
#       .carry/ucx_cu13/ucx.tar.xz.
#   scripts/gpu_machine/device_ucx_run.sh --pack-mpi   (here)
#       packs this machine's Open MPI runtime (openmpi-bin, libopenmpi3,
#       openmpi-common, libpmix2: programs, libraries, MCA components, help
#       texts; docs left out) at its absolute paths, with the libraries they
#       link that a bare machine may lack, into .carry/ompi/ompi.tar.xz: the
#       GPU machine has no MPI, and --backend cluster runs under mpirun.
#   scripts/gpu_machine/device_ucx_run.sh          (there: device tool, carry
#                                        [".carry/sluice_ucx", ".carry/ucx_cu13",
#                                         ".carry/ompi"])
#       prints what UCX finds there (ucx_info: version, transports, devices;
#       `sluice backends`: GPU memory reachable or why not), then runs study 1
#       (beegfs_gds_vs_bounce.lua, reduced) with --backend hw --transport ucx:
#       the storage server puts chunks straight into the clients' GPU buffers
#       where gds is on (the run verifies every byte in GPU memory), and says
#       which paths the chunks took and which protocol UCX took for a put into
#       GPU memory (UCX_PROTO_INFO); then, where .carry/ompi came, the same
#       study with --backend cluster --transport ucx under mpirun (one rank
#       per node of the study, all on this host, the client ranks' buffers
#       on its GPU). Logs and results go to $OUT (default ./out/device_ucx).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
UCX_WHEEL=libucx-cu13==1.22.0

# shellcheck source=scripts/gpu_machine/carry_lib.sh
source "$ROOT/scripts/gpu_machine/carry_lib.sh"
if [ "${1:-}" = "--pack" ]; then
  set -e
  carry_binary "${BUILD:-$ROOT/build}/sluice" "$ROOT/.carry/sluice_ucx" "${BUILD:-$ROOT/build}/sluice-node"
  work=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 -d "$work/whl" "$UCX_WHEEL"
  (cd "$work" && unzip -q whl/libucx_cu13-*.whl)
  mkdir -p "$work/ucx/lib/ucx" "$work/ucx/bin"
  cp -a "$work"/libucx/lib/*.so* "$work/ucx/lib/"
  cp -a "$work"/libucx/lib/ucx/*.so* "$work/ucx/lib/ucx/"
  cp -a "$work/libucx/bin/ucx_info" "$work/ucx/bin/"
  rm -rf "$ROOT/.carry/ucx_cu13" && mkdir -p "$ROOT/.carry/ucx_cu13"
  tar cJf "$ROOT/.carry/ucx_cu13/ucx.tar.xz" -C "$work" ucx
  rm -rf "$work"
  du -sh "$ROOT/.carry/ucx_cu13"
  exit 0
fi
if [ "${1:-}" = "--pack-mpi" ]; then
  set -e
  work=$(mktemp -d)
  dpkg -L openmpi-bin libopenmpi3 openmpi-common libpmix2 | grep -Ev '^/usr/share/(doc|man|lintian)/' |
    while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "$f"; done | sort -u > "$work/files"
  # /usr/bin/mpirun and friends are alternatives links into /etc/alternatives.
  for f in /usr/bin/mpirun /usr/bin/mpiexec /usr/bin/orted; do readlink -f "$f"; done >> "$work/files"
  mkdir -p "$work/root/usr/lib/sluice-ompi-deps"
  tar cf - -T "$work/files" 2>/dev/null | tar xf - -C "$work/root"
  for b in mpirun mpiexec; do ln -sf "$(basename "$(readlink -f /usr/bin/$b)")" "$work/root/usr/bin/$b"; done
  # What those link beyond glibc and the C++ runtime (hwloc, libevent...).
  grep -E '\.so|/bin/' "$work/files" | { xargs -r ldd 2>/dev/null || true; } | awk '/=> \//{print $3}' | sort -u |
    { grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|librt|libdl|ld-linux[^/]*)\.so' || true; } |
    xargs -r -I{} cp -L {} "$work/root/usr/lib/sluice-ompi-deps/"
  rm -rf "$ROOT/.carry/ompi" && mkdir -p "$ROOT/.carry/ompi"
  tar cJf "$ROOT/.carry/ompi/ompi.tar.xz" -C "$work/root" .
  rm -rf "$work"
  du -sh "$ROOT/.carry/ompi"
  exit 0
fi

OUT=${OUT:-$ROOT/out/device_ucx}
mkdir -p "$OUT"
use_carried "$ROOT" sluice_ucx/sluice || exit 2
[ -f "$ROOT/.carry/ucx_cu13/ucx.tar.xz" ] || { echo "carry .carry/ucx_cu13 (--pack here first)"; exit 2; }
tar xJf "$ROOT/.carry/ucx_cu13/ucx.tar.xz" -C "$CARRIED_TMP"
# The wheel's UCX before the carried Debian one; its modules (cuda, cma) beside libucs.
export LD_LIBRARY_PATH=$CARRIED_TMP/ucx/lib:$LD_LIBRARY_PATH PATH=$CARRIED_TMP/ucx/bin:$PATH
export UCX_MODULE_DIR=$CARRIED_TMP/ucx/lib/ucx
# The runs of a results.json: ok or why not, the transport, the paths the
# chunks took, the GPU counters and the registration log lines.
summarize() {
  python3 - "$1" <<'PY'
import json, sys
try:
    runs = json.load(open(sys.argv[1]))["runs"]
except Exception as e:  # noqa: BLE001 - report and go on
    print("no results:", e)
    sys.exit(0)
for r in runs:
    d = r.get("deployment", {})
    paths = r.get("paths_taken") or r.get("counters", {}).get("paths_taken")
    print(r.get("label") or r.get("point"), "ok" if r["ok"] else "FAILED: " + str(r.get("error"))[:300],
          "| transport", d.get("transport"), "| paths", json.dumps(paths)[:400] if paths else "-")
    print("  counters:", {k: v for k, v in r.get("counters", {}).items() if "gpu" in k or "fallback" in k})
    for line in [l for l in r.get("log_tail", []) if "GPU region" in l or "granted" in l][:4]:
        print("  log:", line[:400])
PY
}
sets=(--set gpus=1 --set sizes=1MiB --set files=16 --set file_size=4MiB)
{
  echo "== host: $(nproc) cores; $(nvidia-smi -L 2>&1 | head -2 | tr '\n' ' '); $(uname -sr); $(date -u +%FT%H:%MZ)"
  echo "== ucx_info -v"
  ucx_info -v 2>&1 | head -3
  echo "== ucx_info -d (transports and devices)"
  ucx_info -d 2>&1 | grep -E "Transport:|Device:|memory types" | paste - - | sort -u | head -30
  echo "== sluice backends"
  sluice backends 2>&1 | grep -E "^ *ucx|CUDA"
  for tls in "" "tcp,cuda_copy,self" ; do
    name=hw_ucx${tls:+_${tls//,/_}}
    echo "== study 1 (reduced), --backend hw --transport ucx${tls:+, UCX_TLS=$tls}"
    UCX_PROTO_INFO=y UCX_TLS=${tls:-all} timeout 240 sluice run lua_scripts/beegfs_gds_vs_bounce.lua --backend hw --transport ucx \
      --meta-store memory "${sets[@]}" --out "$OUT/$name" >"$OUT/$name.txt" 2>&1
    echo "exit $?"
    grep -m3 "ucx transport: .* up;" "$OUT/$name.txt"
    # How UCX puts host memory into GPU memory here (UCX_PROTO_INFO's table).
    grep -A4 "ucp_put\\* from host memory to cuda" "$OUT/$name.txt" | grep -m2 -E '\.\.inf +\|'
    grep -v "^\[[0-9.]*\] \[" "$OUT/$name.txt" | tail -12
    summarize "$OUT/$name/results.json"
  done
  # --backend cluster under mpirun: one rank per node of the study (2
  # clients with their buffers on this host's GPU, 2 servers), all here.
  if [ -f "$ROOT/.carry/ompi/ompi.tar.xz" ]; then
    echo "== Open MPI: $(command -v mpirun || echo "none here: the carried one")"
    command -v mpirun >/dev/null || tar xJf "$ROOT/.carry/ompi/ompi.tar.xz" -C / --skip-old-files
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/lib/sluice-ompi-deps
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_osc=^ucx  # MPI only bootstraps; UCX is sluice's
    mpirun --version 2>&1 | head -1
    storage=$(mktemp -d)
    for tls in "" "tcp,cuda_copy,self"; do
      name=cluster_ucx${tls:+_${tls//,/_}}
      echo "== study 1 (reduced), --backend cluster --transport ucx, mpirun -np 4${tls:+, UCX_TLS=$tls}"
      UCX_TLS=${tls:-all} timeout 300 mpirun -np 4 -x PATH -x LD_LIBRARY_PATH -x UCX_TLS -x UCX_MODULE_DIR \
        sluice run lua_scripts/beegfs_gds_vs_bounce.lua --backend cluster --transport ucx --meta-store memory \
        "${sets[@]}" --storage-root "$storage" --out "$OUT/$name" >"$OUT/$name.txt" 2>&1
      echo "exit $?"
      grep -m3 "ucx transport: .* up;" "$OUT/$name.txt"
      tail -12 "$OUT/$name.txt"
      summarize "$OUT/$name/results.json"
    done
    rm -rf "$storage"
  fi
} 2>&1 | tee "$OUT/device_ucx.txt"
rm -rf "$CARRIED_TMP"
