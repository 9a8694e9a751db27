#!/usr/bin/env bash
# The GPU half of issue #6 on the GPU machine, in one script.
#
#   scripts/gpu_machine/gpu_device_run.sh --pack   (here, on a CPU machine with nvcc)
#       builds test_hw_cuda, test_hw_gds and bench_gpu for sm_90 in
#       build-gpu (cuFile headers/library from the nvidia-cufile wheel when
#       the toolkit lacks them) and copies them, stripped, with the shared
#       libraries the GPU machine lacks (libisal, liburing...; libcufile as a
#       fallback) into .carry/gpu (ignored by git: /.carry/).
#       bench_gpu gets KvikIO as its peer (P6) from the libkvikio-cu13 wheel
#       (pip download here; its library goes into .carry/gpu/lib).
#   scripts/gpu_machine/gpu_device_run.sh --pack-sluice   (here)
#       also packs the sluice CLI (stripped, built with CUDA in $BUILD, default
#       build) and its shared libraries (xz) into .carry/sluice_hw, so the
#       device run also runs a study with --backend hw and GPU buffers.
#   scripts/gpu_machine/gpu_device_run.sh          (there: device tool, carry [".carry/gpu"]
#                                       and optionally ".carry/sluice_hw";
#                                       GPU_BENCH=0 skips bench_gpu, GPU_TESTS=0
#                                       everything before it; GPU_BENCH_BIN
#                                       names another carried bench binary,
#                                       e.g. a baseline build run beside it)
#       uses .carry/gpu (the GPU machine has no Debian libraries, no boost,
#       isal, gtest, benchmark: it cannot configure the whole project), writes
#       the udev entry cuFile needs, runs the GPU-labelled tests, then
#       bench_gpu (P6), and leaves logs in $OUT (default ./out/gpu). GPU
#       memory through UCX is scripts/gpu_machine/device_ucx_run.sh.
#
# Device run, bounded: run(command="bash scripts/gpu_machine/gpu_device_run.sh",
#                          carry=[".carry/gpu"], timeout_s=600)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
CARRY=$ROOT/.carry/gpu

if [ "${1:-}" = "--pack-sluice" ]; then
  set -e
  # shellcheck source=scripts/gpu_machine/carry_lib.sh
  source "$ROOT/scripts/gpu_machine/carry_lib.sh"
  carry_binary "${BUILD:-$ROOT/build}/sluice" "$ROOT/.carry/sluice_hw"
  exit 0
fi

if [ "${1:-}" = "--pack" ]; then
  set -e
  BUILD=${BUILD:-$ROOT/build-gpu}
  WHEEL_DIR=$ROOT/.carry/cufile
  extra=()
  if [ ! -f /usr/local/cuda/include/cufile.h ]; then
    if [ ! -f "$WHEEL_DIR/nvidia/cu13/include/cufile.h" ]; then
      mkdir -p "$ROOT/.carry/whl" "$WHEEL_DIR"
      python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$ROOT/.carry/whl" nvidia-cufile==1.15.1.6
      (cd "$WHEEL_DIR" && unzip -q -o "$ROOT"/.carry/whl/nvidia_cufile-*.whl)
      ln -sf libcufile.so.0 "$WHEEL_DIR/nvidia/cu13/lib/libcufile.so"
    fi
    extra+=(-DSLUICE_CUFILE_INCLUDE="$WHEEL_DIR/nvidia/cu13/include"
            -DSLUICE_CUFILE_LIB="$WHEEL_DIR/nvidia/cu13/lib/libcufile.so")
  fi
  # KvikIO, bench_gpu's peer (issue 20, P6), from its wheel; KVIKIO=0 leaves the peer out.
  if [ "${KVIKIO:-1}" != 0 ]; then
    extra+=(-DSLUICE_KVIKIO_ROOT="$(bash "$ROOT/scripts/gpu_machine/kvikio_wheel.sh" "$ROOT/.carry")")
  fi
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DSLUICE_WERROR=ON -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
        -DSLUICE_CUDA_ARCHS=90 "${extra[@]}" >/dev/null
  bins=(test_hw_cuda test_hw_gds bench_gpu)
  cmake --build "$BUILD" --target "${bins[@]}" -j "${JOBS:-2}"
  rm -rf "$CARRY" && mkdir -p "$CARRY/bin" "$CARRY/lib"
  for t in "${bins[@]}"; do strip -o "$CARRY/bin/$t" "$BUILD/tests/$t"; done
  # Every shared library the binaries use beyond glibc and the compiler's
  # runtime (libisal, liburing...), which the GPU machine does not have.
  for f in "${bins[@]/#/$BUILD/tests/}"; do
    ldd "$f" | awk '/=> \//{print $3}' |
      grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|librt|libdl|ld-linux[^/]*)\.so' |
      grep -v "$WHEEL_DIR" | xargs -r -I{} cp -L {} "$CARRY/lib/"
  done
  if [ -d "$WHEEL_DIR/nvidia/cu13/lib" ]; then cp -L "$WHEEL_DIR"/nvidia/cu13/lib/libcufile*.so.* "$CARRY/lib/"; fi
  du -sh "$CARRY"
  exit 0
fi

OUT=${OUT:-$ROOT/out/gpu}
mkdir -p "$OUT"
LOG=$OUT/device_run.log
exec > >(tee -a "$LOG") 2>&1
# The device tool brings back at most 8 files from $OUT: on exit, every log
# but the summary, bench_gpu's output and its CSVs goes into logs.tgz.
bundle_logs() {
  (cd "$OUT" && find . -maxdepth 1 -type f \( -name '*.log' -o -name '*.err' -o -name '*.xml' \) \
     ! -name device_run.log ! -name bench_gpu.log -printf '%f\n' > .bundle &&
     [ -s .bundle ] && tar czf logs.tgz -T .bundle && xargs rm -f < .bundle; rm -f .bundle) || true
}
trap bundle_logs EXIT
echo "== gpu_device_run $(date -u +%FT%TZ) on $(hostname)"
[ -x "$CARRY/bin/test_hw_cuda" ] || { echo "no carried build in .carry/gpu: run 'scripts/gpu_machine/gpu_device_run.sh --pack' first and carry .carry/gpu"; exit 2; }
nvidia-smi -L || true
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total --format=csv,noheader || true
# The machine's own libcufile first (matching its driver), the carried one as fallback.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ls /usr/local/cuda/lib64 2>/dev/null | grep -i cufile || echo "no libcufile in /usr/local/cuda/lib64: using the carried one"

# A work directory on a block device (cuFile registers files on block devices only).
WORK=${SLUICE_GPU_WORK:-}
for d in "$ROOT/gpu_work" /root/gpu_work /tmp/gpu_work; do
  [ -n "$WORK" ] && break
  mkdir -p "$d" 2>/dev/null || continue
  majmin=$(findmnt -n -o MAJ:MIN -T "$d" | head -1 | tr -d ' ')
  [ -e "/sys/dev/block/$majmin" ] && WORK=$d
done
WORK=${WORK:-$ROOT/gpu_work}
mkdir -p "$WORK"
echo "work dir: $WORK on $(findmnt -n -o SOURCE,FSTYPE,MAJ:MIN -T "$WORK" | head -1)"

# cuFile without nvidia-fs reads the udev database for the file's block
# device: "file descriptor is not registered" (cufile.log: "udev property not
# found: ID_FS_TYPE") unless it holds ID_FS_USAGE=filesystem and ID_FS_TYPE.
mkdir -p /run/udev/data
fstype=$(findmnt -n -o FSTYPE -T "$WORK" | head -1)
devs=$(findmnt -n -o MAJ:MIN -T "$WORK" | head -1 | tr -d ' ')
for f in /sys/block/*/dev; do devs="$devs $(cat "$f")"; done
for mm in $devs; do
  entry=/run/udev/data/b$mm
  grep -qs '^E:ID_FS_USAGE=' "$entry" || echo "E:ID_FS_USAGE=filesystem" >> "$entry"
  grep -qs '^E:ID_FS_TYPE=' "$entry" || echo "E:ID_FS_TYPE=${fstype:-ext4}" >> "$entry"
  echo "udev entry $entry: $(tr '\n' ' ' < "$entry")"
done

cd "$WORK"
export CUFILE_LOGFILE_PATH=$OUT/cufile.log
rc=0
# GPU_TESTS=0: only bench_gpu (no tests, no hw study).
if [ "${GPU_TESTS:-1}" = 1 ]; then
for t in test_hw_cuda test_hw_gds; do
  echo "== $t"
  timeout 180 "$CARRY/bin/$t" --gtest_output=xml:"$OUT/$t.xml" > "$OUT/$t.log" 2>&1
  r=$?
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|Skipped|^device 0|^mode " "$OUT/$t.log" |
    grep -v "^\[       OK \]" | head -60
  echo "skip reasons:"; grep -A1 ": Skipped" "$OUT/$t.log" | grep -Ev ': Skipped|^--' | sort | uniq -c | head -8
  echo "$t exit $r"
  [ $r -eq 0 ] || rc=1
done
fi

echo "== host: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
grep -E 'MemTotal' /proc/meminfo
nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current --format=csv,noheader || true
if [ "${GPU_TESTS:-1}" = 1 ] && [ -x "$ROOT/.carry/sluice_hw/sluice" ]; then
  echo "== sluice run --backend hw: study 1 at a small size, client buffers in GPU memory"
  libs=$(mktemp -d) && tar xJf "$ROOT/.carry/sluice_hw/libs.tar.xz" -C "$libs"
  (cd "$ROOT" && LD_LIBRARY_PATH=$libs/lib:$LD_LIBRARY_PATH timeout 240 stdbuf -oL -eL "$ROOT/.carry/sluice_hw/sluice" \
     run lua_scripts/beegfs_gds_vs_bounce.lua --backend hw --set gpus=1 --set sizes=1MiB --set files=4 \
     --set file_size=16MiB --point-timeout 100 --out "$OUT/hw_study" > "$OUT/hw_study.log" 2>&1)
  r=$?
  tail -n 25 "$OUT/hw_study.log"
  echo "sluice hw study exit $r"
  [ $r -eq 0 ] || rc=1
  rm -rf "$libs"
fi
[ "${GPU_BENCH:-1}" = 1 ] || { rm -rf "$WORK"; exit $rc; }
echo "== bench_gpu (P6; with GPU_SWEEP=1 first the chunk-size sweep of issue 8's GPU calibration)"
sweep_env=()
if [ "${GPU_SWEEP:-1}" = 1 ]; then sweep_env=(SLUICE_BENCH_SWEEP_CSV="$OUT/gpu_sweep.csv" SLUICE_BENCH_SWEEP_ONLY="${GPU_SWEEP_ONLY:-0}"); fi
env "${sweep_env[@]}" SLUICE_BENCH_DIR=$WORK SLUICE_BENCH_CSV=$OUT/p6.csv timeout "${SLUICE_BENCH_TIMEOUT_S:-330}" \
  "$CARRY/bin/${GPU_BENCH_BIN:-bench_gpu}" > "$OUT/bench_gpu.log" 2> "$OUT/bench_gpu.err"
r=$?
tail -n 40 "$OUT/bench_gpu.err" | tail -n 8
cat "$OUT/bench_gpu.log"
echo "bench_gpu exit $r"
[ $r -eq 0 ] || rc=1
rm -rf "$WORK"
exit $rc
