#!/usr/bin/env bash
# Issue 53: the tools people use on a file system they live in, on the mount:
# git (clone of a local repository, status clean, a commit, fsck), tar (a
# tree with symbolic and hard links, extracted on the mount and on a local
# directory, archived again: the two archives are byte for byte the same),
# make (a small C project: built, then up to date, then only what changed
# rebuilt), python3 -m venv with pip install --no-index of a local wheel,
# and rsync -aHX both ways (bytes, modes, times, links, hard links, xattrs).
# Every command is bounded (120 s). Usage: mount_tools_test.sh SLUICE.
set -u
sluice=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mount_lib.sh"
begin_mount_test tools git tar rsync make cc python3 cmp timeout
if ! python3 -c "import venv, ensurepip" 2>/dev/null; then echo "SKIP: no python3 venv (python3-venv)"; exit 77; fi

ok() { echo "ok: $1"; }
bad() {
  echo "FAIL: $1"
  fail=1
}
# step NAME COMMAND...: runs COMMAND (at most 120 s); its output is shown when it fails.
step() {
  local name=$1 code
  shift
  timeout 120 "$@" >"$tmp/step.out" 2>&1
  code=$?
  if [ "$code" = 0 ]; then ok "$name"; else
    bad "$name (exit $code)"
    tail -20 "$tmp/step.out"
  fi
  return $code
}
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp/home" GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t \
  GIT_COMMITTER_EMAIL=t@x PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
mkdir -p "$HOME"

start_mount "$tmp/mnt" || exit 1

# --- git ---
src=$tmp/repo
mkdir -p "$src/lib/sub"
printf 'hello\n' >"$src/README"
seq 1 20000 >"$src/lib/numbers"
printf '#!/bin/sh\necho run\n' >"$src/lib/run.sh"
chmod 755 "$src/lib/run.sh"
ln -s ../README "$src/lib/sub/readme-link"
git init -q "$src" && git -C "$src" add -A && git -C "$src" commit -qm first
if step "git clone of a local repository onto the mount" git clone -q "$src" "$mnt/repo"; then
  status=$(cd "$mnt/repo" && timeout 60 git status --porcelain 2>&1)
  if [ -z "$status" ]; then ok "git status on the clone is clean"; else bad "git status: $status"; fi
  printf 'more\n' >>"$mnt/repo/README"
  step "git commit on the mount" git -C "$mnt/repo" commit -qam second
  status=$(cd "$mnt/repo" && timeout 60 git status --porcelain 2>&1)
  if [ -z "$status" ]; then ok "git status after a commit is clean"; else bad "git status after commit: $status"; fi
  step "git fsck --strict of the clone" git -C "$mnt/repo" fsck --strict --no-progress
  [ "$(readlink "$mnt/repo/lib/sub/readme-link")" = ../README ] && ok "git checks a symbolic link out" ||
    bad "the symbolic link in the clone"
fi

# --- tar: a tree with symbolic and hard links, round trip ---
tree=$tmp/tree/t
mkdir -p "$tree/a/b" "$tree/empty" "$tree/mode"
head -c 3000000 /dev/urandom >"$tree/a/big"
printf 'x\n' >"$tree/a/b/small"
ln "$tree/a/big" "$tree/a/big-hard"
ln "$tree/a/b/small" "$tree/small-hard"
ln -s b/small "$tree/a/rel-link"
ln -s /etc/hostname "$tree/abs-link"
ln -s missing "$tree/dangling"
printf 'm\n' >"$tree/mode/f"
chmod 750 "$tree/mode/f"
chmod 700 "$tree/mode"
touch -d '2001-02-03 04:05:06' "$tree/a/b/small" "$tree/a"
tar --format=gnu -cf "$tmp/tree.tar" -C "$tmp/tree" t
mkdir -p "$tmp/local" "$mnt/tarx"
step "tar x on a local directory" tar -xpf "$tmp/tree.tar" -C "$tmp/local"
step "tar x on the mount" tar -xpf "$tmp/tree.tar" -C "$mnt/tarx"
archive=(tar --sort=name --format=gnu --numeric-owner)
step "tar c of the local tree" "${archive[@]}" -cf "$tmp/local.tar" -C "$tmp/local" t
step "tar c of the mount's tree" "${archive[@]}" -cf "$tmp/mount.tar" -C "$mnt/tarx" t
if cmp -s "$tmp/local.tar" "$tmp/mount.tar"; then
  ok "the two archives are byte for byte the same ($(stat -c %s "$tmp/local.tar") bytes)"
else
  bad "the archives differ"
  diff <(tar -tvf "$tmp/local.tar") <(tar -tvf "$tmp/mount.tar") | head -20
fi

# --- make: a small C project ---
proj=$mnt/proj
mkdir -p "$proj"
printf 'int twice(int x) { return 2 * x; }\n' >"$proj/twice.c"
printf 'int twice(int x);\nint main(void) { return twice(0); }\n' >"$proj/main.c"
printf 'app: main.o twice.o\n\tcc -o app main.o twice.o\n%%.o: %%.c\n\tcc -c -o $@ $<\n' >"$proj/Makefile"
if step "make of a small C project" make -C "$proj"; then
  step "the program built on the mount runs" "$proj/app"
  step "make -q: up to date once built" make -q -C "$proj"
  sleep 1.1 # a newer mtime than the objects at the resolution make compares
  touch "$proj/twice.c"
  make -C "$proj" >"$tmp/make.out" 2>&1
  if grep -q "twice.c" "$tmp/make.out" && ! grep -q "main.c" "$tmp/make.out"; then
    ok "a touched source is rebuilt, and only it"
  else
    bad "after touching twice.c make ran:"
    cat "$tmp/make.out"
  fi
fi

# --- python3 -m venv and pip install --no-index of a local wheel ---
python3 - "$tmp/wheels" <<'PY'
import base64, hashlib, os, sys, zipfile
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
files = {"sluicetool/__init__.py": b"def answer():\n    return 42\n",
         "sluicetool-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sluicetool\nVersion: 1.0\n",
         "sluicetool-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = []
for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{name},sha256={digest},{len(data)}")
record.append("sluicetool-1.0.dist-info/RECORD,,")
with zipfile.ZipFile(os.path.join(out, "sluicetool-1.0-py3-none-any.whl"), "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
    z.writestr("sluicetool-1.0.dist-info/RECORD", "\n".join(record) + "\n")
PY
if step "python3 -m venv on the mount" python3 -m venv "$mnt/venv"; then
  step "pip install --no-index of a local wheel into it" "$mnt/venv/bin/python" -m pip install -q --no-index \
    "$tmp/wheels/sluicetool-1.0-py3-none-any.whl"
  answer=$(timeout 60 "$mnt/venv/bin/python" -c "import sluicetool; print(sluicetool.answer())" 2>&1)
  [ "$answer" = 42 ] && ok "the installed package imports from the venv" || bad "import from the venv: $answer"
fi

# --- rsync -aHX both ways, with xattrs ---
python3 - "$tmp/tree/t" <<'PY'
import os, sys
root = sys.argv[1]
os.setxattr(os.path.join(root, "a", "big"), "user.origin", b"generated\x00bytes")
os.setxattr(os.path.join(root, "mode"), "user.dir", b"d")
PY
step "rsync -aHX to the mount" rsync -aHX "$tmp/tree/t/" "$mnt/rsync/"
step "rsync -aHX back from the mount" rsync -aHX "$mnt/rsync/" "$tmp/back/"
python3 - "$tmp/tree/t" "$mnt/rsync" "$tmp/back" <<'PY' || fail=1
import os, stat, sys
def walk(root):
    out, inodes = {}, {}
    for d, dirs, files in os.walk(root):
        for n in sorted(dirs + files):
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            kind = stat.S_IFMT(st.st_mode)
            item = [kind, stat.S_IMODE(st.st_mode)]
            if stat.S_ISLNK(st.st_mode):
                item.append(os.readlink(p))
            else:
                item.append(st.st_mtime_ns)
                item.append(sorted((k, os.getxattr(p, k)) for k in os.listxattr(p)))
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f: item.append(f.read())
                inodes.setdefault(st.st_ino, []).append(rel)
            out[rel] = item
    links = sorted(sorted(v) for v in inodes.values() if len(v) > 1)
    return out, links
src, there, back = (walk(r) for r in sys.argv[1:4])
bad = False
for name, tree in (("on the mount", there), ("back from the mount", back)):
    if tree == src:
        print(f"ok: rsync -aHX {name}: every name, type, mode, mtime, symbolic link, hard link, xattr and byte as the source")
    else:
        bad = True
        print(f"FAIL: rsync -aHX {name} differs from the source")
        for rel in sorted(set(src[0]) | set(tree[0])):
            a, b = src[0].get(rel), tree[0].get(rel)
            if a != b: print(f"  {rel}: {str(a)[:120]} != {str(b)[:120]}")
        if src[1] != tree[1]: print(f"  hard links {src[1]} != {tree[1]}")
sys.exit(1 if bad else 0)
PY

stop_mount
exit $fail
