#!/usr/bin/env bash
# scripts/dlio_install.sh (issue 52 item 4): the DLIO benchmark (PyPI dlio-benchmark, the program
# MLPerf Storage runs) in a virtual environment outside the repository, for `make bench-mlperf`
# (P15), which runs it against `sluice mount` beside sluice's own train_epoch. Optional: nothing
# else needs it, and neither `make deps` nor CI runs this (it downloads from PyPI). Run it once,
# as the user who runs the benchmark:
#   bash scripts/dlio_install.sh                  # into /var/cache/sluice/dlio-venv
#   DLIO_VENV=~/dlio bash scripts/dlio_install.sh # elsewhere; give make bench-mlperf the same DLIO_VENV
# DLIO_PYTHON picks the interpreter (default /usr/bin/python3, Debian 12's 3.11; python3-venv,
# which make deps installs). Running it again over an existing environment installs what is missing.
#
# What is installed, and why no more (dlio-benchmark 2.0.0's wheel asks for tensorflow, torch,
# torchaudio, torchvision, nvidia-dali, h5py, Pillow, pydftracer and more; a run with framework
# pytorch, data_loader pytorch and format npz, the unet3d config's, imports only these):
#   dlio-benchmark  without its declared dependencies (--no-deps), then what a run imports:
#   torch           data_loader/torch_data_loader.py, framework/torch_framework.py. PyPI serves no
#                   CPU-only build, so pip also brings the CUDA libraries torch loads at import
#                   (about 3 GB); DLIO_TORCH_INDEX=<a PyTorch wheel index> takes torch from there
#                   instead (the CPU-only index, where it can be reached).
#   tensorflow-cpu  main.py imports profiler/profiler_factory.py, which imports tf_profiler.py, which
#                   imports tensorflow at module level, whatever the framework.
#   mpi4py          utils/utility.py and utils/statscounter.py (a run without mpirun is a singleton
#                   MPI process of the system's Open MPI, libopenmpi-dev).
#   hydra-core, omegaconf, PyYAML  the configuration (main.py, utils/config.py).
#   numpy, pandas, psutil          utils/statscounter.py, the readers and generators.
#   pydftracer      utils/utility.py imports it in a try and defines a stand-in Profile without it,
#                   but that stand-in takes no name and utils/config.py passes one (Profile(MODULE_
#                   CONFIG): TypeError at import), so 2.0.0 does not start without it. Its tracing
#                   stays off (DFTRACER_ENABLE unset).
# Left out: nvidia-dali (the DALI loaders only), h5py (format hdf5; tensorflow-cpu brings it
# anyway), Pillow (the image formats), torchvision and torchaudio (imported nowhere).
set -euo pipefail
VENV=${DLIO_VENV:-/var/cache/sluice/dlio-venv}
PYTHON=${DLIO_PYTHON:-/usr/bin/python3}
# The versions this was written against (2026-12, Python 3.11); a newer DLIO may import more.
DLIO_VERSION=2.0.0
TORCH_VERSION=2.15.0
TF_VERSION=2.21.0
PINNED=(hydra-core==1.3.8 omegaconf==2.3.1 PyYAML==6.0.4 pandas==3.1.1 psutil==7.2.2 mpi4py==4.1.2 pydftracer==1.0.2)
# pip's network waits (seconds) and retries: a registry that does not answer fails the install.
PIP_NET=(--timeout 120 --retries 3)

command -v "$PYTHON" >/dev/null || { echo "dlio_install.sh: no $PYTHON (set DLIO_PYTHON)" >&2; exit 2; }
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
  { echo "dlio_install.sh: $PYTHON has no venv/ensurepip (apt-get install python3-venv)" >&2; exit 2; }
case $VENV in
  "$(cd "$(dirname "$0")/.." && pwd)"/*)
    echo "dlio_install.sh: DLIO_VENV=$VENV is inside the repository; put it outside" \
      "(default /var/cache/sluice/dlio-venv)" >&2
    exit 2
    ;;
esac
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip --disable-pip-version-check "${PIP_NET[@]}")
echo "dlio_install.sh: installing dlio-benchmark $DLIO_VERSION into $VENV"
"${pip[@]}" install --quiet --upgrade pip
# pip then warns that dlio-benchmark's declared dependencies are missing: expected (see above).
"${pip[@]}" install --quiet --no-deps "dlio-benchmark==$DLIO_VERSION"
if [ -n "${DLIO_TORCH_INDEX:-}" ]; then
  "${pip[@]}" install --quiet --index-url "$DLIO_TORCH_INDEX" "torch==$TORCH_VERSION"
else
  "${pip[@]}" install --quiet "torch==$TORCH_VERSION"
fi
"${pip[@]}" install --quiet "tensorflow-cpu==$TF_VERSION" "${PINNED[@]}"

# Everything a pytorch/npz run imports, imported once: a missing piece fails here, not mid-benchmark.
TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" - <<'PY'
import importlib
for m in ("dlio_benchmark.main", "dlio_benchmark.framework.torch_framework",
          "dlio_benchmark.data_loader.torch_data_loader", "dlio_benchmark.reader.npz_reader",
          "dlio_benchmark.data_generator.npz_generator", "dlio_benchmark.checkpointing.pytorch_checkpointing"):
    importlib.import_module(m)
PY
[ -x "$VENV/bin/dlio_benchmark" ] || { echo "dlio_install.sh: $VENV/bin/dlio_benchmark is missing" >&2; exit 1; }
echo "dlio_install.sh: ready: $VENV/bin/dlio_benchmark (make bench-mlperf DLIO_VENV=$VENV)"
