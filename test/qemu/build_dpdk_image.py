#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Builds (once) the DPDK variant of the QEMU test guest: the image of
build_image.py with dpdk-testpmd added, for a guest whose RX buffers are
written by the device only (qemu_migrate_dpdk.py).

  initrd   build_image.py's initrd.img with a second gzip'd newc cpio
           appended (the kernel unpacks both, the second over the first):
           the host's dpdk-testpmd (Debian's package `dpdk`) and the shared
           libraries ldd names for it, the mempool ring and virtio PMDs in
           DPDK's plugin directory (EAL loads what is there), each with
           its libraries, and the kernel's uio + uio_pci_generic (from the
           same kernel package: build_image.py keeps them in
           extra-modules/) under /lib/modules/extra, NOT loaded by /init:
           the base image's behaviour is unchanged until dpdk_setup runs

The guest then runs, through its agent, the commands dpdk_setup() returns:
insmod in order, 2 MiB hugepages on hugetlbfs, the NIC's PCI function
bound to uio_pci_generic (driver_override + drivers_probe).

Cache: next to the base image (build_image.cache_root()), one directory
dpdk-BASEKEY_HASH (HASH: this builder and the testpmd binary) holding
kernel (a link), initrd.img and manifest.json; the ones unused for days
are pruned (build_image.prune()).

usage: build_dpdk_image.py [--cache DIR] [--force]   (prints the manifest)
"""
import gzip
import hashlib
import os
import shutil
import sys
import tempfile

import build_image

TESTPMD = "/usr/bin/dpdk-testpmd"
# the PMDs testpmd needs for one virtio-net-pci port: EAL loads every .so
# in its plugin directory (RTE_EAL_PMD_PATH), so only these go there
# (EAL loads names ending in .so or .so.ABI, here .so.23.0, nothing else)
PMDS = ("librte_mempool_ring.so.23.0", "librte_net_virtio.so.23.0")
# dlopen'd by glibc for pthread_cancel (EAL cancels its threads at exit)
DLOPENED = ("/lib/x86_64-linux-gnu/libgcc_s.so.1",)
PMD_DIR = "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0"


def builder_hash():
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    st = os.stat(TESTPMD)
    h.update(("%d %d" % (st.st_size, st.st_mtime)).encode())
    return h.hexdigest()[:10]


def overlay(base_dir, man, out):
    """The appended cpio: testpmd, its PMDs and libraries, the modules."""
    c = build_image.Cpio()
    have = set()

    def mkdirs(path):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in have:
                c.dir(d)
                have.add(d)

    def add(path, dest=None, mode=0o755):
        dest = (dest or path).strip("/")
        if dest in have:
            return
        mkdirs(dest)
        with open(os.path.realpath(path), "rb") as f:
            c.file(dest, f.read(), mode)
        have.add(dest)

    pmds = [os.path.join(PMD_DIR, p) for p in PMDS]
    for binary in [TESTPMD] + pmds:
        for lib in build_image.shared_libs(binary):
            add(lib)
        add(binary)
    for lib in DLOPENED:
        if os.path.exists(lib):
            add(lib)
    mods = man.get("extra_modules") or []
    if not mods:
        raise RuntimeError("the base image kept no extra modules (rebuild "
                           "it: build_image.py --force)")
    for m in mods:
        add(os.path.join(base_dir, "extra-modules", m),
            "/lib/modules/extra/" + m, 0o644)
    c.file("lib/modules/extra/load.order",
           ("\n".join(mods) + "\n").encode())
    c.dir("mnt")
    c.dir("mnt/huge")
    with open(man["initrd"], "rb") as f:
        base = f.read()
    with open(out, "wb") as f:
        f.write(base)
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=6) as z:
            z.write(c.close())
    return mods


def ensure(cache=None, force=False, log=print):
    """The DPDK guest image (building it and the base if missing): a
    manifest like build_image.ensure's, initrd the DPDK one."""
    if not os.path.exists(TESTPMD):
        raise RuntimeError("%s missing: install the Debian package dpdk"
                           % TESTPMD)
    for p in PMDS:
        if not os.path.exists(os.path.join(PMD_DIR, p)):
            raise RuntimeError("%s missing in %s" % (p, PMD_DIR))
    man = build_image.ensure(cache, log=log)
    root = build_image.cache_root(cache)
    base_dir = os.path.dirname(man["initrd"])
    key = "dpdk-%s_%s" % (man["key"], builder_hash())
    dest = os.path.join(root, key)
    if os.path.exists(os.path.join(dest, "manifest.json")) and not force:
        return load(dest)
    log("qemu-guest: building %s in %s" % (key, root))
    tmp = tempfile.mkdtemp(prefix="tmp-", dir=root)
    try:
        mods = overlay(base_dir, man, os.path.join(tmp, "initrd.img"))
        kfile = man["kernel_file"]
        try:  # the base image's kernel, shared
            os.link(man["kernel"], os.path.join(tmp, kfile))
        except OSError:
            shutil.copyfile(man["kernel"], os.path.join(tmp, kfile))
        dm = dict((k, v) for k, v in man.items()
                  if k not in ("kernel", "initrd"))
        dm.update({"key": key, "base": man["key"], "dpdk_modules": mods,
                   "testpmd": "/usr/bin/dpdk-testpmd"})
        build_image.install(tmp, dest, dm, force)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    build_image.prune(root, "dpdk-", key, log)  # unused DPDK variants
    return load(dest)


def load(d):
    return build_image.load(d)


def dpdk_setup(hugepages=64):
    """Shell commands (one line, for the guest agent) that make the DPDK
    guest ready for testpmd: modules, hugepages, /dev/uio*. The NIC is
    bound by bind_nic()."""
    # EAL refuses a plugin directory below a world-writable one (the
    # initramfs root is 0777); /var/run holds its runtime directory
    return ("chmod 755 /; mkdir -p /var/run; "
            "for m in $(cat /lib/modules/extra/load.order); do "
            "grep -q \"^${m%%.ko} \" /proc/modules || "
            "insmod /lib/modules/extra/$m || exit 1; done; "
            "echo %d > /proc/sys/vm/nr_hugepages; "
            "grep -q ' /mnt/huge ' /proc/mounts || "
            "mount -t hugetlbfs -o pagesize=2M none /mnt/huge; "
            "grep HugePages_Total /proc/meminfo" % hugepages)


def bind_nic(ifname):
    """Shell commands that move interface IFNAME's PCI function from
    virtio-pci to uio_pci_generic; they print its PCI address. (The
    kernel's driver is the virtio-pci transport: the net device sits on
    a virtio bus below it.)"""
    return ("d=$(readlink -f /sys/class/net/%s/device/..); "
            "a=${d##*/}; ip link set %s down; "
            "echo $a > /sys/bus/pci/drivers/virtio-pci/unbind && "
            "echo uio_pci_generic > $d/driver_override && "
            "echo $a > /sys/bus/pci/drivers_probe && "
            "[ -e $d/uio ] && echo $a" % (ifname, ifname))


def main():
    return build_image.cli(__doc__, "build_dpdk_image", ensure)


if __name__ == "__main__":
    sys.exit(main())
