# Sourced by the device scripts (scripts/gpu_machine/gpu_device_run.sh, scripts/gpu_machine/device_storage_run.sh,
# scripts/gpu_machine/device_meta_run.sh).
#
# carry_binary BINARY DIR [MORE...]: BINARY, stripped, as DIR/<its name>
# (and each of MORE beside it), and the shared libraries they link, except
# the C and C++ runtimes the GPU machine has, as DIR/libs.tar.xz (unpack
# there and put its lib/ on LD_LIBRARY_PATH). CARRY_SYMBOLS=1 keeps the
# binaries' symbol tables (for perf there).
carry_binary() {
  local dir=$2 binary
  local binaries=("$1" "${@:3}")
  rm -rf "$dir" && mkdir -p "$dir/lib"
  for binary in "${binaries[@]}"; do
    if [ "${CARRY_SYMBOLS:-0}" = 1 ]; then
      strip --strip-debug -o "$dir/$(basename "$binary")" "$binary"
    else
      strip -o "$dir/$(basename "$binary")" "$binary"
    fi
    ldd "$binary" | awk '/=> \//{print $3}' |
      { grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|librt|libdl|ld-linux[^/]*)\.so' || true; } |
      xargs -r -I{} cp -L {} "$dir/lib/"
  done
  (cd "$dir" && tar cJf libs.tar.xz lib && rm -rf lib)
  du -sh "$dir"
}

# use_carried ROOT ENTRY...: there, each ENTRY ("DIR/BINARY", or "NAME" for
# NAME/NAME) carried under ROOT/.carry: the binary on PATH and the libraries
# packed beside it (DIR/libs.tar.xz) on LD_LIBRARY_PATH, unpacked into a
# temporary directory, CARRIED_TMP, which the caller may remove. Fails,
# naming what is missing, when an ENTRY was not carried (--pack first).
use_carried() {
  local root=$1 entry dir binary
  shift
  for entry in "$@"; do
    [[ $entry == */* ]] || entry=$entry/$entry
    [ -x "$root/.carry/$entry" ] || { echo "carry .carry/${entry%%/*} (--pack here first)" >&2; return 2; }
  done
  CARRIED_TMP=$(mktemp -d)
  mkdir -p "$CARRIED_TMP/bin"
  for entry in "$@"; do
    [[ $entry == */* ]] || entry=$entry/$entry
    dir=${entry%%/*} binary=${entry#*/}
    tar xJf "$root/.carry/$dir/libs.tar.xz" -C "$CARRIED_TMP" || return 1
    ln -s "$root/.carry/$entry" "$CARRIED_TMP/bin/$binary"
  done
  export PATH=$CARRIED_TMP/bin:$PATH LD_LIBRARY_PATH=$CARRIED_TMP/lib:${LD_LIBRARY_PATH:-}
}

# carried_sluice_sim ROOT [--pack]: the device scripts' sluice. With --pack
# (here): build/sluice and its libraries into ROOT/.carry/sluice_sim, then the
# script exits. Else (there): the carried sluice on PATH (use_carried), its
# temporary directory removed when the script exits.
carried_sluice_sim() {
  local root=$1
  if [ "${2:-}" = "--pack" ]; then
    carry_binary "${BUILD:-$root/build}/sluice" "$root/.carry/sluice_sim"
    exit $?
  fi
  use_carried "$root" sluice_sim/sluice || exit 2
  trap 'rm -rf "$CARRIED_TMP"' EXIT
}

# archive_out OUT NAME: OUT/NAME packed as OUT/NAME.tar.xz and removed (the
# device tool brings back a bounded number of files: one archive of them).
archive_out() {
  tar cJf "$1/$2.tar.xz" -C "$1" "$2" && rm -rf "${1:?}/$2"
}
