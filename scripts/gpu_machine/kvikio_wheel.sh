#!/usr/bin/env bash
# KvikIO for bench_gpu's peer (issue 20, P6): downloads the libkvikio-cu13
# wheel and the rapids-logger wheel its library needs (pip download, no
# install) into DIR/whl, unpacks them into DIR/kvikio, puts librapids_logger.so
# beside libkvikio.so (its $ORIGIN finds it there) and prints the libkvikio
# directory to configure with (-DSLUICE_KVIKIO_ROOT=...).
# Usage: scripts/gpu_machine/kvikio_wheel.sh DIR
set -euo pipefail
dir=$1
root=$dir/kvikio/libkvikio
if [ ! -f "$root/lib64/librapids_logger.so" ]; then
  mkdir -p "$dir/whl" "$dir/kvikio"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 -d "$dir/whl" libkvikio-cu13==26.10.0 rapids-logger==0.3.0 >&2
  for w in "$dir"/whl/libkvikio_cu13-*.whl "$dir"/whl/rapids_logger-*.whl; do
    (cd "$dir/kvikio" && unzip -q -o "$w")
  done
  cp -L "$dir/kvikio/rapids_logger/lib64/librapids_logger.so" "$root/lib64/"
fi
echo "$root"
