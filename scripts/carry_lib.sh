# Sourced by the device scripts (scripts/gpu_device_run.sh, scripts/device_storage_run.sh).
#
# carry_binary BINARY DIR: BINARY, stripped, as DIR/<its name>, and the shared
# libraries it links, except the C and C++ runtimes the GPU machine has, as
# DIR/libs.tar.xz (unpack there and put its lib/ on LD_LIBRARY_PATH).
carry_binary() {
  local binary=$1 dir=$2
  rm -rf "$dir" && mkdir -p "$dir/lib"
  strip -o "$dir/$(basename "$binary")" "$binary"
  ldd "$binary" | awk '/=> \//{print $3}' |
    { grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|librt|libdl|ld-linux[^/]*)\.so' || true; } |
    xargs -r -I{} cp -L {} "$dir/lib/"
  (cd "$dir" && tar cJf libs.tar.xz lib && rm -rf lib)
  du -sh "$dir"
}
