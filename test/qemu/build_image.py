#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Builds (once) the Linux guest image of the QEMU integration tests:
Debian's kernel and an initramfs of our own, cached between runs.

  kernel   the package that linux-image-amd64 depends on (today
           linux-image-6.1.0-N-amd64), fetched with `apt-get download` and
           unpacked with `dpkg-deb -x`: never installed on the host. Its
           bzImage is decompressed here to the ELF vmlinux, which QEMU
           boots through the PVH entry point (CONFIG_PVH): that saves the
           ~9 s the xz decompressor takes under TCG
  initrd   busybox-static + the virtio-net modules and their dependencies
           (from a modules.dep made by busybox's depmod, as the package
           ships none) + test/qemu/init.sh as /init, a gzip'd newc cpio
           written here (no cpio or kmod needed on the host); and
           ethtool (`ethtool -L` changes the guest's queue pairs): Debian's
           package fetched and unpacked the same way (the host's
           /usr/sbin/ethtool when apt cannot fetch it), with the shared
           libraries and loader ldd names for it, from the host, at their
           paths; and udpseq (test/qemu/udpseq.c, a sequence-numbered
           UDP stream: qemu_migrate.py's stale-data check), built static
           with the host's cc
  extra    uio + uio_pci_generic of the same kernel, NOT in the initrd:
           copied to extra-modules/ for build_dpdk_image.py (the DPDK
           variant of this image appends them with dpdk-testpmd)

Cache: $VSW_QEMU_CACHE, else $XDG_CACHE_HOME/vsw/qemu-guest (default
~/.cache/vsw/qemu-guest), one directory per kernel package version and
hash of this builder and init.sh, holding vmlinux (or vmlinuz),
initrd.img and manifest.json. Using an image touches its manifest; building
a new one prunes only the entries unused for $VSW_QEMU_CACHE_KEEP_DAYS days
(default 7), so trees whose image keys differ (another branch's builder or
init.sh) share the cache without deleting each other's images. When apt
cannot name a kernel (no package lists, no registry) the most recently used
cached image is used.

usage: build_image.py [--cache DIR] [--force]   (prints the manifest)
"""
import argparse
import gzip
import hashlib
import json
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INIT = os.path.join(HERE, "init.sh")
UDPSEQ = os.path.join(HERE, "udpseq.c")
META = "linux-image-amd64"
# the modules /init loads (their dependencies come from modules.dep)
MODULES = ("virtio_pci", "virtio_net")
# not in the initrd: kept next to it for build_dpdk_image.py (a DPDK guest
# binds its NIC to uio_pci_generic; the modules must be the same kernel's)
EXTRA_MODULES = ("uio_pci_generic",)
BUSYBOX = "/bin/busybox"
# a cached image unused this many days goes when another one is built
KEEP_DAYS = 7.0


def cache_root(cache=None):
    if cache:
        return cache
    if os.environ.get("VSW_QEMU_CACHE"):
        return os.environ["VSW_QEMU_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vsw", "qemu-guest")


def run(argv, cwd=None):
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(argv), r.returncode,
                                                r.stdout[-2000:]))
    return r.stdout


def kernel_package():
    """(package, version) of the kernel linux-image-amd64 depends on, or
    None when apt cannot tell. Refreshes the package lists once when run
    as root and they know no such package."""
    for attempt in (0, 1):
        try:
            out = run(["apt-cache", "depends", META])
            m = re.search(r"Depends:\s*(linux-image-\d\S*-amd64)\b", out)
            if m:
                pkg = m.group(1)
                show = run(["apt-cache", "show", "--no-all-versions", pkg])
                ver = re.search(r"^Version:\s*(\S+)", show, re.M).group(1)
                return pkg, ver
        except (RuntimeError, OSError, AttributeError):
            pass
        if attempt == 0 and os.geteuid() == 0:
            subprocess.run(["apt-get", "update", "-q"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        else:
            break
    return None


def builder_hash():
    h = hashlib.sha256()
    for p in (INIT, UDPSEQ, os.path.abspath(__file__)):
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:10]


def is_static_elf(path):
    """True for an ELF file without a PT_INTERP program header."""
    with open(path, "rb") as f:
        ehdr = f.read(64)
        if ehdr[:4] != b"\x7fELF" or ehdr[4] != 2:
            return False
        phoff, = struct.unpack_from("<Q", ehdr, 32)
        phentsize, phnum = struct.unpack_from("<HH", ehdr, 54)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    return all(struct.unpack_from("<I", ph, i * phentsize)[0] != 3
               for i in range(phnum))


def module_order(moddir, names=MODULES):
    """Module paths (relative to moddir) to insmod, dependencies first."""
    deps, by_name = {}, {}
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            if ":" not in line:
                continue
            path, rest = line.split(":", 1)
            deps[path] = rest.split()
            name = os.path.basename(path).split(".ko")[0].replace("-", "_")
            by_name[name] = path
    order = []

    def visit(path, depth=0):
        if path in order:
            return
        if depth > 32 or path not in deps:
            raise RuntimeError("modules.dep: cannot resolve %s" % path)
        for d in deps[path]:
            visit(d, depth + 1)
        order.append(path)

    for name in names:
        if name not in by_name:
            raise RuntimeError("kernel has no module %s" % name)
        visit(by_name[name])
    return order


class Cpio:
    """A newc cpio archive built in memory."""

    def __init__(self):
        self.buf = bytearray()
        self.ino = 1

    def _entry(self, name, mode, data=b"", rdev=(0, 0)):
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join("%08x" % v for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1],
            len(name_b), 0))
        self.ino += 1
        self.buf += hdr.encode() + name_b
        self.buf += b"\0" * (-len(self.buf) % 4)
        self.buf += data
        self.buf += b"\0" * (-len(self.buf) % 4)

    def dir(self, name):
        self._entry(name, 0o040755)

    def file(self, name, data, mode=0o644):
        self._entry(name, 0o100000 | mode, data)

    def symlink(self, name, target):
        self._entry(name, 0o120777, target.encode())

    def chardev(self, name, major, minor):
        self._entry(name, 0o020600, rdev=(major, minor))

    def close(self):
        self._entry("TRAILER!!!", 0)
        return bytes(self.buf)


def fetch_ethtool(tmp, log=print):
    """Path of an ethtool binary: Debian's package unpacked in tmp, else
    the host's; None when neither is there (the guest goes without)."""
    d = os.path.join(tmp, "ethtool")
    os.mkdir(d)
    try:
        run(["apt-get", "download", "-q", "ethtool"], cwd=d)
        deb = [f for f in os.listdir(d) if f.endswith(".deb")][0]
        run(["dpkg-deb", "-x", os.path.join(d, deb), os.path.join(d, "x")])
        path = os.path.join(d, "x", "usr", "sbin", "ethtool")
        if os.path.exists(path):
            return path
    except (RuntimeError, OSError, IndexError) as e:
        log("qemu-guest: ethtool package not fetched (%s)" % str(e)[:200])
    host = shutil.which("ethtool") or "/usr/sbin/ethtool"
    return host if os.path.exists(host) else None


def shared_libs(binary):
    """Absolute paths of the libraries (and loader) ldd names for binary."""
    out = run(["ldd", binary])
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m and os.path.exists(m.group(1)):
            libs.append(m.group(1))
    return libs


def add_binary(c, binary, dest):
    """binary at dest in the cpio, its libraries at their own paths (the
    directories bin, lib, tmp exist already)."""
    have = {"bin", "lib", "tmp"}
    for lib in shared_libs(binary):
        parts = lib.strip("/").split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in have:
                c.dir(d)
                have.add(d)
        with open(os.path.realpath(lib), "rb") as f:
            c.file(lib.strip("/"), f.read(), 0o755)
    with open(binary, "rb") as f:
        c.file(dest, f.read(), 0o755)


def build_udpseq(tmp):
    """test/qemu/udpseq.c built static (glibc's libc.a: libc6-dev)."""
    out = os.path.join(tmp, "udpseq")
    cc = os.environ.get("CC", "cc")
    run([cc, "-static", "-O2", "-Wall", "-Werror", "-o", out, UDPSEQ])
    return out


def build_initrd(root, kver, out, ethtool=None, udpseq=None):
    moddir = os.path.join(root, "lib", "modules", kver)
    # the package ships no modules.dep: depmod writes one into the tree
    run([BUSYBOX, "depmod", "-b", root, kver])
    order = module_order(moddir)
    c = Cpio()
    for d in ("bin", "dev", "proc", "sys", "tmp", "lib", "lib/modules"):
        c.dir(d)
    c.chardev("dev/console", 5, 1)  # init's stdio before devtmpfs
    with open(BUSYBOX, "rb") as f:
        c.file("bin/busybox", f.read(), 0o755)
    c.symlink("bin/sh", "busybox")
    with open(INIT, "rb") as f:
        c.file("init", f.read(), 0o755)
    names = []
    for path in order:
        name = os.path.basename(path)
        with open(os.path.join(moddir, path), "rb") as f:
            c.file("lib/modules/" + name, f.read())
        names.append(name)
    c.file("lib/modules/load.order", ("\n".join(names) + "\n").encode())
    if ethtool is not None:
        add_binary(c, ethtool, "bin/ethtool")
    if udpseq is not None:
        with open(udpseq, "rb") as f:
            c.file("bin/udpseq", f.read(), 0o755)
    with gzip.open(out, "wb", compresslevel=6) as f:
        f.write(c.close())
    return names


def save_extra_modules(root, kver, out):
    """EXTRA_MODULES and their dependencies copied to out/extra-modules:
    their names in insmod order (build_initrd ran depmod already)."""
    moddir = os.path.join(root, "lib", "modules", kver)
    os.mkdir(os.path.join(out, "extra-modules"))
    names = []
    for path in module_order(moddir, EXTRA_MODULES):
        name = os.path.basename(path)
        shutil.copyfile(os.path.join(moddir, path),
                        os.path.join(out, "extra-modules", name))
        names.append(name)
    return names


def extract_vmlinux(bzimage, config, out):
    """bzImage -> ELF vmlinux when the kernel has a PVH entry point (else
    False: boot the bzImage). Debian compresses the kernel with xz."""
    with open(config) as f:
        if "\nCONFIG_PVH=y\n" not in f.read():
            return False
    with open(bzimage, "rb") as f:
        data = f.read()
    at = data.find(b"\xfd7zXZ\x00")
    if at < 0:
        return False
    elf = lzma.LZMADecompressor().decompress(data[at:])
    if elf[:4] != b"\x7fELF":
        return False
    with open(out, "wb") as f:
        f.write(elf)
    return True


def newest_cached(root):
    best = None
    for d in os.listdir(root) if os.path.isdir(root) else ():
        m = os.path.join(root, d, "manifest.json")
        if d.startswith("linux-image-") and os.path.exists(m):
            t = os.path.getmtime(m)
            if best is None or t > best[0]:
                best = (t, os.path.join(root, d))
    return best[1] if best else None


def load(d):
    """The manifest of the image in d, marked used (prune() keeps it)."""
    path = os.path.join(d, "manifest.json")
    with open(path) as f:
        man = json.load(f)
    try:
        os.utime(path)
    except OSError:  # a read-only cache: nothing to mark
        pass
    man["kernel"] = os.path.join(d, man["kernel_file"])
    man["initrd"] = os.path.join(d, "initrd.img")
    return man


def install(out, dest, manifest, force=False):
    """Writes manifest.json into the built directory out and moves it to
    dest (replacing dest with force); one another run built meanwhile is
    kept instead."""
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    if force:
        shutil.rmtree(dest, ignore_errors=True)
    try:
        os.rename(out, dest)
    except OSError:  # built meanwhile by another run: keep theirs
        if not os.path.exists(os.path.join(dest, "manifest.json")):
            raise


def keep_days():
    try:
        return float(os.environ.get("VSW_QEMU_CACHE_KEEP_DAYS", KEEP_DAYS))
    except ValueError:
        return KEEP_DAYS


def prune(root, prefix, keep, log=print, now=None):
    """Removes the entries root/prefix* but keep whose manifest was not
    used (load()) for keep_days(); one without a manifest is a broken
    build (builds happen in tmp-*) and goes too."""
    limit = (time.time() if now is None else now) - keep_days() * 86400
    for d in os.listdir(root):
        if not d.startswith(prefix) or d == keep:
            continue
        try:
            used = os.path.getmtime(os.path.join(root, d, "manifest.json"))
        except OSError:
            used = None
        if used is None or used < limit:
            log("qemu-guest: pruning %s (%s)" % (d, "no manifest" if used is
                None else "unused for %g days" % keep_days()))
            shutil.rmtree(os.path.join(root, d), ignore_errors=True)


def ensure(cache=None, force=False, log=print):
    """The guest image (building it if missing): its manifest with the
    paths of kernel and initrd."""
    root = cache_root(cache)
    os.makedirs(root, exist_ok=True)
    if not os.path.exists(BUSYBOX) or not is_static_elf(BUSYBOX):
        raise RuntimeError("%s is missing or not static: install "
                           "busybox-static" % BUSYBOX)
    pkg = kernel_package()
    if pkg is None:
        d = newest_cached(root)
        if d is None:
            raise RuntimeError("apt names no kernel for %s and nothing is "
                               "cached in %s" % (META, root))
        log("qemu-guest: apt names no kernel; using cached %s" % d)
        return load(d)
    key = "%s_%s_%s" % (pkg[0], pkg[1], builder_hash())
    dest = os.path.join(root, key)
    if os.path.exists(os.path.join(dest, "manifest.json")) and not force:
        return load(dest)
    log("qemu-guest: building %s in %s" % (key, root))
    tmp = tempfile.mkdtemp(prefix="tmp-", dir=root)
    try:
        run(["apt-get", "download", "-q", "%s=%s" % pkg], cwd=tmp)
        deb = [f for f in os.listdir(tmp) if f.endswith(".deb")][0]
        unpacked = os.path.join(tmp, "root")
        run(["dpkg-deb", "-x", os.path.join(tmp, deb), unpacked])
        kvers = os.listdir(os.path.join(unpacked, "lib", "modules"))
        if len(kvers) != 1:
            raise RuntimeError("%s: modules for %s" % (deb, kvers))
        kver = kvers[0]
        out = os.path.join(tmp, "image")
        os.mkdir(out)
        boot = os.path.join(unpacked, "boot")
        kfile = "vmlinux"
        if not extract_vmlinux(os.path.join(boot, "vmlinuz-" + kver),
                               os.path.join(boot, "config-" + kver),
                               os.path.join(out, kfile)):
            kfile = "vmlinuz"
            shutil.copyfile(os.path.join(boot, "vmlinuz-" + kver),
                            os.path.join(out, kfile))
        ethtool = fetch_ethtool(tmp, log)
        udpseq = build_udpseq(tmp)
        mods = build_initrd(unpacked, kver, os.path.join(out, "initrd.img"),
                            ethtool, udpseq)
        extra = save_extra_modules(unpacked, kver, out)
        install(out, dest, {
            "package": pkg[0], "version": pkg[1], "kver": kver,
            "modules": mods, "key": key, "extra_modules": extra,
            "ethtool": ethtool is not None, "udpseq": True,
            "kernel_file": kfile}, force)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    prune(root, "linux-image-", key, log)  # other kernels, old builders
    return load(dest)


def cli(doc, name, ensure_fn):
    """The command line of an image builder: --cache, --force; prints the
    manifest ensure_fn(cache, force, log=...) returns (build_dpdk_image.py
    shares it)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--cache")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    try:
        man = ensure_fn(args.cache, args.force,
                        log=lambda s: print(s, file=sys.stderr))
    except RuntimeError as e:
        print("%s: %s" % (name, e), file=sys.stderr)
        return 1
    print(json.dumps(man, indent=1))
    return 0


def main():
    return cli(__doc__, "build_image", ensure)


if __name__ == "__main__":
    sys.exit(main())
