#!/usr/bin/env bash
# Issue 23: what the mount promises, call by call: truncate semantics (a
# shrunk then extended file reads zeros), chmod/utimens kept, rename,
# unlink of an open file, statfs, hard and symbolic links (link counts, one
# inode number, O_TRUNC through one name, readlink, O_NOFOLLOW, ELOOP), and
# xattrs, times (atime, ctime, a directory's with its entries), fallocate
# (posix_fallocate grows, a punched hole and a zeroed range read as zeros, a
# KEEP_SIZE reservation keeps the size), and the errno of every unsupported
# call (COLLAPSE_RANGE, directory rename across shards is EXDEV so mv copies),
# rename of directories, and that FUSE workers are kept between requests. Also
# the CLI's refusals. Usage: mount_posix_test.sh SLUICE.
set -u
sluice=$1
. "$(dirname "$0")/mount_lib.sh"
. "$(dirname "$0")/../scenarios/test_lib.sh"
begin_mount_test posix python3

expect 2 "mount needs a mount point" -- "$sluice" mount
expect 2 "umount of something that is not a sluice mount" -- "$sluice" umount /tmp
grep -q "not a sluice mount" "$tmp/err" || { echo "FAIL: umount /tmp says why"; fail=1; }
expect 2 "mount on a missing directory fails clearly" -- "$sluice" mount "$tmp/missing" --nodes 3 --insecure
grep -q "is not a directory" "$tmp/err" "$tmp/out" || { echo "FAIL: says the mount point is missing"; cat "$tmp/err"; fail=1; }

start_mount "$tmp/mnt" || exit 1
if python3 - "$mnt" <<'PY'; then echo "ok: POSIX calls through the mount"; else echo "FAIL: POSIX calls"; fail=1; fi
import errno, os, stat, sys, time
m = sys.argv[1]
bad = []
def check(what, cond):
    print(("ok" if cond else "FAIL") + ": " + what)
    if not cond: bad.append(what)
def errno_of(fn):
    try:
        fn()
    except OSError as e:
        return e.errno
    return 0
f = os.path.join(m, "f")
with open(f, "wb") as out: out.write(b"x" * 300000)
check("size after close", os.stat(f).st_size == 300000)
os.truncate(f, 1000)
check("truncate shrinks", os.stat(f).st_size == 1000)
os.truncate(f, 200000)
with open(f, "rb") as i: data = i.read()
check("a shrunk then extended file reads zeros past the cut", data[:1000] == b"x" * 1000 and data[1000:] == bytes(199000))
with open(f, "r+b") as io:
    io.seek(500000); io.write(b"end")
with open(f, "rb") as i: data = i.read()
check("a write past the end leaves a hole of zeros", len(data) == 500003 and data[200000:500000] == bytes(300000))
with open(f, "wb") as out: out.write(b"ab")  # open with O_TRUNC (libfuse passes it to open)
with open(f, "rb") as i: data = i.read()
check("O_TRUNC on open empties the file", data == b"ab")
with open(f, "r+b") as io:
    io.seek(500000); io.write(b"end")
fd = os.open(f, os.O_WRONLY | os.O_TRUNC); os.close(fd)
check("O_TRUNC with nothing written leaves 0 bytes", os.stat(f).st_size == 0)
with open(f, "r+b") as io:
    io.seek(500000); io.write(b"end")
with open(f, "rb") as i: data = i.read()
check("the bytes before a write past the end of a truncated file are zeros", data == bytes(500000) + b"end")
os.chmod(f, 0o600)
check("chmod kept", stat.S_IMODE(os.stat(f).st_mode) == 0o600)
os.utime(f, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
check("mtime kept", os.stat(f).st_mtime_ns == 1_700_000_000_000_000_000)
check("a new file's mode", stat.S_IMODE(os.stat(f).st_mode) == 0o600 and stat.S_ISREG(os.stat(f).st_mode))
os.rename(f, os.path.join(m, "g"))
check("rename moves the file", not os.path.exists(f) and os.path.getsize(os.path.join(m, "g")) == 500003)
fd = os.open(os.path.join(m, "g"), os.O_RDONLY)
os.unlink(os.path.join(m, "g"))
check("fstat of an unlinked open file", os.fstat(fd).st_nlink == 0)
check("an unlinked open file's data stays until its last close", len(os.pread(fd, 600000, 0)) == 500003)
fw = os.open(os.path.join(m, "w"), os.O_CREAT | os.O_RDWR, 0o644)
os.unlink(os.path.join(m, "w"))
os.pwrite(fw, b"written after the unlink", 0)
check("an unlinked open file takes writes and reads them back", os.pread(fw, 100, 0) == b"written after the unlink")
os.close(fw)
os.close(fd)
check("unlinked", not os.path.exists(os.path.join(m, "g")))
os.mkdir(os.path.join(m, "d"))
with open(os.path.join(m, "d", "a"), "wb") as out: out.write(b"a")
check("readdir", sorted(os.listdir(os.path.join(m, "d"))) == ["a"])
check("rmdir of a non-empty directory", errno_of(lambda: os.rmdir(os.path.join(m, "d"))) == errno.ENOTEMPTY)
a, h = os.path.join(m, "x"), os.path.join(m, "h")
with open(a, "wb") as out: out.write(b"a")
os.link(a, h)
check("hard link: 2 links and one inode number for both names",
      os.stat(a).st_nlink == 2 and os.stat(h).st_nlink == 2 and os.stat(a).st_ino == os.stat(h).st_ino)
with open(h, "ab") as out: out.write(b"b")
with open(a, "rb") as i: check("a write through one name is read through the other", i.read() == b"ab")
with open(h, "wb") as out: out.write(b"c")  # O_TRUNC keeps the inode of a file with two names
with open(a, "rb") as i: check("O_TRUNC through one name empties the file for both", i.read() == b"c")
os.unlink(h)
with open(a, "rb") as i: check("unlink of one name leaves the other, with 1 link", i.read() == b"c" and os.stat(a).st_nlink == 1)
check("hard link of a directory: EPERM", errno_of(lambda: os.link(os.path.join(m, "d"), os.path.join(m, "dl"))) == errno.EPERM)
s = os.path.join(m, "s")
os.symlink("d/../x", s)
check("symlink: lstat says link, size the target's length", stat.S_ISLNK(os.lstat(s).st_mode) and os.lstat(s).st_size == 6)
check("readlink", os.readlink(s) == "d/../x")
with open(s, "rb") as i: check("open follows a symbolic link", i.read() == b"c")
check("O_NOFOLLOW on a symbolic link: ELOOP", errno_of(lambda: os.open(s, os.O_RDONLY | os.O_NOFOLLOW)) == errno.ELOOP)
os.symlink("loop2", os.path.join(m, "loop1"))
os.symlink("loop1", os.path.join(m, "loop2"))
check("a loop of symbolic links: ELOOP", errno_of(lambda: os.stat(os.path.join(m, "loop1"))) == errno.ELOOP)
check("a symbolic link's target over PATH_MAX: ENAMETOOLONG", errno_of(lambda: os.symlink("t" * 4096, os.path.join(m, "long"))) == errno.ENAMETOOLONG)
os.unlink(s)
check("unlink of a symbolic link removes the link only", not os.path.lexists(s) and os.path.exists(a))
p = os.path.join(m, "p")
os.mkfifo(p, 0o640)
check("mkfifo: a FIFO with its mode", stat.S_ISFIFO(os.stat(p).st_mode) and stat.S_IMODE(os.stat(p).st_mode) == 0o640)
pid = os.fork()
if pid == 0:  # the writer: the kernel's pipe, opened through the mount
    with open(p, "wb") as w: w.write(b"through the fifo")
    os._exit(0)
with open(p, "rb") as r: check("a FIFO on the mount passes data between processes", r.read() == b"through the fifo")
os.waitpid(pid, 0)
os.mknod(os.path.join(m, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
st_null = os.stat(os.path.join(m, "null"))
check("mknod of a character device: its type and number",
      stat.S_ISCHR(st_null.st_mode) and os.major(st_null.st_rdev) == 1 and os.minor(st_null.st_rdev) == 3)
os.mknod(os.path.join(m, "sock"), 0o600 | stat.S_IFSOCK)
check("mknod of a socket", stat.S_ISSOCK(os.stat(os.path.join(m, "sock")).st_mode))
os.unlink(p)
check("unlink of a FIFO", not os.path.lexists(p))
fa = os.path.join(m, "d", "a")
os.setxattr(fa, "user.k", b"v\x00w")
check("setxattr and getxattr: the value's bytes", os.getxattr(fa, "user.k") == b"v\x00w")
check("listxattr", os.listxattr(fa) == ["user.k"])
check("setxattr XATTR_CREATE of a set name: EEXIST",
      errno_of(lambda: os.setxattr(fa, "user.k", b"x", os.XATTR_CREATE)) == errno.EEXIST)
check("setxattr XATTR_REPLACE of a missing name: ENODATA",
      errno_of(lambda: os.setxattr(fa, "user.none", b"x", os.XATTR_REPLACE)) == errno.ENODATA)
check("getxattr of a missing name: ENODATA", errno_of(lambda: os.getxattr(fa, "user.none")) == errno.ENODATA)
check("a system.* attribute (not kept): EOPNOTSUPP",
      errno_of(lambda: os.setxattr(fa, "system.sluice_test", b"x")) == errno.EOPNOTSUPP)
# fallocate(2): Python has posix_fallocate (mode 0); the other modes through libc.
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
def fallocate(fd, mode, off, n):
    if libc.fallocate(fd, mode, off, n) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
KEEP_SIZE, PUNCH_HOLE, COLLAPSE_RANGE, ZERO_RANGE = 0x01, 0x02, 0x08, 0x10
fl = os.path.join(m, "fal")
with open(fl, "wb") as out: out.write(b"y" * 3_000_000)
fd = os.open(fl, os.O_RDWR)
os.posix_fallocate(fd, 0, 5_000_000)
check("posix_fallocate grows the file to the range's end", os.fstat(fd).st_size == 5_000_000)
fallocate(fd, PUNCH_HOLE | KEEP_SIZE, 1_000_001, 1_500_000)
fallocate(fd, ZERO_RANGE, 2_900_000, 50_000)
fallocate(fd, KEEP_SIZE, 6_000_000, 1_000_000)
check("a KEEP_SIZE reservation past the end keeps the size", os.fstat(fd).st_size == 5_000_000)
check("COLLAPSE_RANGE (moves every later byte between targets): EOPNOTSUPP",
      errno_of(lambda: fallocate(fd, COLLAPSE_RANGE, 0, 65536)) == errno.EOPNOTSUPP)
os.close(fd)
with open(fl, "rb") as r: data = r.read()
want = bytearray(b"y" * 3_000_000 + bytes(2_000_000))
want[1_000_001:2_500_001] = bytes(1_500_000)
want[2_900_000:2_950_000] = bytes(50_000)
check("a punched hole and a zeroed range read as zeros, every other byte as written (after close: size %d)" % len(data),
      data == bytes(want))
os.removexattr(fa, "user.k")
check("removexattr", os.listxattr(fa) == [] and errno_of(lambda: os.removexattr(fa, "user.k")) == errno.ENODATA)
before = os.stat(fa)
time.sleep(0.01)
os.utime(fa, ns=(1_000_000_000, 2_000_000_000))
after = os.stat(fa)
check("utimens keeps atime and mtime, and moves ctime",
      after.st_atime_ns == 1_000_000_000 and after.st_mtime_ns == 2_000_000_000 and after.st_ctime_ns > before.st_ctime_ns)
with open(fa, "rb") as r: r.read()
# The kernel sends the release after close() returns, and may answer stat from
# its attribute cache for attr_timeout: wait for the access time, at most 5 s.
deadline = time.time() + 5
while os.stat(fa).st_atime_ns < after.st_ctime_ns and time.time() < deadline: time.sleep(0.05)
check("a read after a utimens to the past moves atime (relatime)", os.stat(fa).st_atime_ns >= after.st_ctime_ns)
dstat = os.stat(os.path.join(m, "d"))
time.sleep(0.01)
open(os.path.join(m, "d", "new"), "wb").close()
check("a new entry moves its directory's mtime and ctime",
      os.stat(os.path.join(m, "d")).st_mtime_ns > dstat.st_mtime_ns and os.stat(os.path.join(m, "d")).st_ctime_ns > dstat.st_ctime_ns)
check("a new file's times are wall-clock times", abs(os.stat(os.path.join(m, "d", "new")).st_mtime - time.time()) < 60)
# Listing a directory changed since its last access moves its atime
# (relatime, against its entries' changes); releasedir sends the note.
dd = os.path.join(m, "d")
listed = os.stat(dd)
check("a directory whose entries changed was not accessed since", listed.st_atime_ns <= listed.st_mtime_ns)
os.listdir(dd)
deadline = time.time() + 5
while os.stat(dd).st_atime_ns <= listed.st_mtime_ns and time.time() < deadline: time.sleep(0.05)
check("listing a directory moves its atime (relatime)", os.stat(dd).st_atime_ns > listed.st_mtime_ns)
os.makedirs(os.path.join(m, "t1", "sub"))
with open(os.path.join(m, "t1", "sub", "f"), "wb") as w: w.write(b"moved with it")
os.mkdir(os.path.join(m, "t2"))
os.rename(os.path.join(m, "t1"), os.path.join(m, "t2"))
with open(os.path.join(m, "t2", "sub", "f"), "rb") as r:
    check("rename of a directory over an empty one moves its subtree", r.read() == b"moved with it" and not os.path.exists(os.path.join(m, "t1")))
check("rename of a directory into its own subtree: EINVAL",
      errno_of(lambda: os.rename(os.path.join(m, "t2"), os.path.join(m, "t2", "sub", "in"))) == errno.EINVAL)
check("rename of a directory over a non-empty one: ENOTEMPTY",
      errno_of(lambda: os.rename(os.path.join(m, "d"), os.path.join(m, "t2"))) in (errno.ENOTEMPTY, errno.EEXIST))
check("a directory's link count: 2 + its subdirectories", os.stat(os.path.join(m, "t2")).st_nlink == 3)
os.chown(os.path.join(m, "d", "a"), 1234, 5678)
st_a = os.stat(os.path.join(m, "d", "a"))
check("chown kept", st_a.st_uid == 1234 and st_a.st_gid == 5678)
check("a new file belongs to its creator", os.stat(os.path.join(m, "d")).st_uid == os.getuid())
check("a name over 255 bytes: ENAMETOOLONG", errno_of(lambda: open(os.path.join(m, "n" * 300), "wb")) == errno.ENAMETOOLONG)
check("a missing file: ENOENT", errno_of(lambda: os.stat(os.path.join(m, "nope"))) == errno.ENOENT)
check("exclusive create of an existing file: EEXIST",
      errno_of(lambda: os.open(os.path.join(m, "d", "a"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)) == errno.EEXIST)
deep = m
for i in range(8):
    deep = os.path.join(deep, "d" * 230)
    os.mkdir(deep)
check("a missing name 1,900 bytes deep: ENOENT (the reply's error text is clipped, not lost)",
      errno_of(lambda: os.stat(os.path.join(deep, "missing"))) == errno.ENOENT)
# readdirplus: a listing gives each entry's attributes; after the kernel
# dropped its cached names, a listing and an lstat of each name show what was
# set (the stat answered from the listing's attributes), and the unmount's
# count of entries listed with attributes (checked below) shows they came so.
plus = os.path.join(m, "plus")
os.mkdir(plus)
want = {}
for i in range(40):
    f = os.path.join(plus, "f%02d" % i)
    with open(f, "wb") as fh:
        fh.write(b"p" * (i * 1000 + 1))
    os.chmod(f, 0o600 + (i % 8))
    os.utime(f, ns=(1_600_000_000_000_000_000 + i, 1_650_000_000_000_000_000 + i))
    want["f%02d" % i] = (stat.S_IFREG | 0o600 + (i % 8), i * 1000 + 1, 1_650_000_000_000_000_000 + i, 1)
os.link(os.path.join(plus, "f00"), os.path.join(plus, "hard"))
want["f00"] = want["hard"] = (want["f00"][0], want["f00"][1], want["f00"][2], 2)
os.symlink("f01", os.path.join(plus, "sym"))
want["sym"] = (stat.S_IFLNK | 0o777, 3, None, 1)
before = {n: os.lstat(os.path.join(plus, n)) for n in want}
os.sync()
with open("/proc/sys/vm/drop_caches", "w") as dc:
    dc.write("2")  # the kernel's dentries and inodes: the next listing is a readdirplus
names = sorted(e.name for e in os.scandir(plus))
check("readdirplus: the listing", names == sorted(want))
seen = {n: os.lstat(os.path.join(plus, n)) for n in names}
wrong = [n for n, (mode, size, mtime, nlink) in want.items()
         if (seen[n].st_mode, seen[n].st_size, seen[n].st_nlink) != (mode, size, nlink)
         or (mtime is not None and seen[n].st_mtime_ns != mtime)
         or seen[n].st_ino != before[n].st_ino or seen[n].st_ctime_ns != before[n].st_ctime_ns
         or seen[n].st_blksize != before[n].st_blksize or seen[n].st_uid != before[n].st_uid]
check("readdirplus: each entry's attributes are what a stat showed before (%s)" % ",".join(wrong[:5]), not wrong)
st = os.statvfs(m)
check("statfs gives the targets' capacity", st.f_blocks > 0 and st.f_namemax == 255)
sys.exit(1 if bad else 0)
PY
if mv "$mnt/d" "$mnt/moved" && [ "$(cat "$mnt/moved/a")" = a ]; then
  echo "ok: mv of a directory"
else
  echo "FAIL: mv of a directory"; fail=1
fi
# The FUSE workers stay: small reads one after another start no thread (a
# libfuse loop handed a config of the wrong API version made one per request
# and ended it after: max_idle_threads read as 0).
fuse_pid=
for child in $(pgrep -P "$mount_pid"); do
  if ls -l "/proc/$child/fd" 2>/dev/null | grep -q " /dev/fuse$"; then fuse_pid=$child; fi
done
if [ -z "$fuse_pid" ]; then
  echo "FAIL: no process under the mount ($mount_pid) holds /dev/fuse"; fail=1
elif python3 - "$mnt" "$fuse_pid" <<'PY'; then echo "ok: FUSE workers are kept between requests"; else fail=1; fi
import mmap, os, sys, threading, time
m, pid = sys.argv[1], sys.argv[2]
path = os.path.join(m, "threads")
with open(path, "wb") as out: out.write(os.urandom(1 << 20))
buf = mmap.mmap(-1, 4096)  # page-aligned, for O_DIRECT
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
def tasks():
    return set(os.listdir(f"/proc/{pid}/task"))
for i in range(50): os.preadv(fd, [buf], (i % 256) * 4096)  # the workers a read needs, started
before, seen, done = tasks(), set(), False
def sample():
    while not done:
        seen.update(tasks()); time.sleep(0.0005)
t = threading.Thread(target=sample); t.start()
reads = 300
for i in range(reads): os.preadv(fd, [buf], (i * 7 % 256) * 4096)
done = True; t.join(); os.close(fd)
started = seen - before
print(("ok" if len(started) <= 4 else "FAIL") +
      f": {len(started)} threads started in the FUSE process during {reads} 4 KiB reads (at most 4)")
sys.exit(0 if len(started) <= 4 else 1)
PY
stop_mount
# The mount says at its end how many entries the kernel got from listings with
# their attributes (readdirplus) instead of a lookup each: at least the 42 above.
listed=$(grep -ho "[0-9]* entries with their attributes from listings" "$tmp/mount.out" "$tmp/mount.err" | head -1 |
         cut -d' ' -f1)
if [ "${listed:-0}" -ge 42 ]; then
  echo "ok: readdirplus: $listed entries listed with their attributes"
else
  echo "FAIL: readdirplus: '${listed:-none}' entries listed with their attributes (want >= 42)"
  grep -h "lookups" "$tmp/mount.out" "$tmp/mount.err"
  fail=1
fi
exit $fail
