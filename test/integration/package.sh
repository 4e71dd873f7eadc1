#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian package, built from the tree and installed with apt into a
# fresh Debian 12 chroot (debootstrap minbase; the base tarball and apt's
# downloads are cached under BUILD/pkg-cache between runs), then checked:
# dependencies resolved, binaries, unit file (systemd-analyze verify),
# man pages (man -l), completion, conffiles, vswd --help from the installed
# path, a real vswd start (port-add, config-show, its --log-file rotated by
# the host's logrotate with the shipped snippet, shutdown), and a purge.
#
#   package.sh SRC_DIR BUILD_DIR      (root; exit 77 = skipped)
#   VSW_DEBIAN_MIRROR=URL             debootstrap's mirror (deb.debian.org)
#
# Runs in its own mount namespace, so the chroot's /proc, /sys and /dev
# mounts go away with it whatever happens.
set -euo pipefail
src=$(realpath "$1")
build=$(realpath "$2")
if [ -z "${VSW_PKG_NS:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
	command -v debootstrap >/dev/null ||
		{ echo "SKIP: no debootstrap (apt-get install debootstrap)"; exit 77; }
	VSW_PKG_NS=1 exec unshare --mount --propagation private --fork \
		bash "$0" "$@"
fi

t0=$SECONDS
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
chk() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
step() { echo "== $* ($((SECONDS - t0)) s)"; }

cache="$build/pkg-cache"
mkdir -p "$cache/archives/partial" "$cache/lists/partial"

step "building the package"
deb=$("$src/switch/vswd/dist/mkdeb.sh" "$src" "$build/pkg" "$build" | tail -1)
echo "$deb"

base="$cache/bookworm-minbase.tar.gz"
if [ ! -f "$base" ]; then
	step "debootstrap bookworm (once; cached in $base)"
	tmp=$(mktemp -d "$cache/debootstrap.XXXXXX")
	debootstrap --variant=minbase bookworm "$tmp" \
		"${VSW_DEBIAN_MIRROR:-http://deb.debian.org/debian}" \
		>"$cache/debootstrap.log" 2>&1 ||
		{ tail -20 "$cache/debootstrap.log"; exit 1; }
	tar -C "$tmp" -czf "$base.part" . && mv "$base.part" "$base"
	rm -rf "$tmp"
fi

step "fresh chroot"
root=$(mktemp -d "$build/pkg-root.XXXXXX")
vswd_pid=
cleanup() {
	[ -n "$vswd_pid" ] && kill -9 "$vswd_pid" 2>/dev/null
	umount "$root/proc" "$root/sys" 2>/dev/null || true
	# never rm through a mount point
	if grep -q " $root/" /proc/self/mounts; then
		echo "still mounted under $root: not removed"
	else
		rm -rf --one-file-system "$root"
	fi
}
trap cleanup EXIT
tar -C "$root" -xzf "$base"
# fresh proc and sysfs (EAL reads CPUs and hugepages there); the tarball
# has debootstrap's /dev nodes. apt's lists and downloads come from the
# cache and go back to it (copies: nothing of the build is mounted in).
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
cp -a "$cache/archives/." "$root/var/cache/apt/archives/"
cp -a "$cache/lists/." "$root/var/lib/apt/lists/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	DEBIAN_FRONTEND=noninteractive "$@"; }

step "apt-get install ./$(basename "$deb")"
in_root apt-get update -q >/dev/null
in_root apt-get install -y -q --no-install-recommends \
	"/tmp/$(basename "$deb")" >"$build/pkg-apt.log" 2>&1 ||
	{ tail -30 "$build/pkg-apt.log"; exit 1; }
cp -a "$root/var/cache/apt/archives/." "$cache/archives/"
cp -a "$root/var/lib/apt/lists/." "$cache/lists/"
chk "installed with its dependencies" \
	test "$(in_root dpkg-query -W -f='${Status}' vsw)" = \
	"install ok installed"

step "checks"
chk "/usr/sbin/vswd" test -x "$root/usr/sbin/vswd"
chk "/usr/bin/vswctl" test -x "$root/usr/bin/vswctl"
chk "every library found (ldd)" \
	bash -c "! chroot '$root' ldd /usr/sbin/vswd /usr/bin/vswctl |
		grep 'not found'"
chk "vswd --help runs from /usr/sbin" \
	bash -c "chroot '$root' /usr/sbin/vswd --help | grep -q -- --state"
chk "vswctl --help runs from /usr/bin" \
	bash -c "chroot '$root' /usr/bin/vswctl --help | grep -q -- --run-dir"
unit="$root/usr/lib/systemd/system/vswd.service"
chk "unit file" test -f "$unit"
for k in Restart=on-failure RuntimeDirectory=vsw StateDirectory=vsw \
		LimitNOFILE= EnvironmentFile=-/etc/default/vsw \
		"ExecStart=/usr/sbin/vswd "; do
	chk "unit has $k" grep -q "^$k" "$unit"
done
if command -v systemd-analyze >/dev/null; then
	# the host's systemd reads the installed unit, its ExecStart pointed
	# at the chroot's vswd (the chroot has no systemd of its own)
	udir=$(mktemp -d)
	sed "s|=/usr/sbin/vswd |=$root/usr/sbin/vswd |" "$unit" \
		>"$udir/vswd.service"
	# it only warns about a bad directive: any output is a failure
	out=$(systemd-analyze verify --man=no "$udir/vswd.service" 2>&1) ||
		out="exit $? $out"
	chk "systemd-analyze verify: silent" test -z "$out"
	[ -z "$out" ] || echo "$out"
	rm -rf "$udir"
else
	echo "(no systemd-analyze here: unit not verified)"
fi
for m in vswd vswctl; do
	page="$root/usr/share/man/man8/$m.8.gz"
	chk "man -l $m(8) renders, lists config-show" bash -c \
		"MANWIDTH=80 man -l '$page' 2>/dev/null | grep -q config-show"
done
comp="$root/usr/share/bash-completion/completions/vswctl"
chk "bash completion completes commands" bash -c "source '$comp' &&
	COMP_WORDS=(vswctl config-s) COMP_CWORD=1 && _vswctl &&
	[ \"\${COMPREPLY[*]}\" = config-show ]"
conff=$(in_root dpkg-query -W -f='${Conffiles}' vsw)
for f in /etc/vsw/vswd.conf /etc/default/vsw /etc/logrotate.d/vsw; do
	chk "conffile $f" bash -c "grep -q '^ $f ' <<<'$conff' &&
		test -f '$root$f'"
done

lr="$root/etc/logrotate.d/vsw"
chk "logrotate snippet: postrotate vswctl log-reopen, no copytruncate" \
	bash -c "grep -q 'vswctl log-reopen' '$lr' && ! grep -q copytruncate '$lr'"

step "vswd as the unit starts it: port-add, config-show, log rotation, shutdown"
# ExecStart with /etc/default/vsw expanded as systemd does ("${VAR}" is one
# word, even empty; $VAR splits), run in the chroot: the unit's options,
# the chroot's libraries and EAL plugins (the mempool ring) all take part.
cat >>"$root/etc/default/vsw" <<'DEF'
VSWD_MEMORY=256
VSWD_EAL_ARGS="--no-telemetry --log-level=*:notice"
VSWD_OPTS="--log-file /var/log/vsw/vswd.log"
DEF
mkdir -p "$root/run/vsw" "$root/var/lib/vsw" "$root/var/log/vsw"
mapfile -d '' argv < <(python3 - "$unit" "$root/etc/default/vsw" <<'PY'
import re, shlex, sys
unit, env_file = sys.argv[1:3]
env = {}
for ln in open(env_file):
    m = re.match(r"^([A-Z_]+)=(.*)$", ln.strip())
    if m:
        env[m.group(1)] = " ".join(shlex.split(m.group(2)))
line = [l for l in open(unit) if l.startswith("ExecStart=")][0]
out = []
for w in line.split("=", 1)[1].split():
    if re.fullmatch(r"\$[A-Z_]+", w):
        out += env.get(w[1:], "").split()
    else:
        out.append(re.sub(r"\$\{([A-Z_]+)\}", lambda m: env.get(m.group(1), ""), w))
sys.stdout.write("".join(a + "\0" for a in out))
PY
)
echo "ExecStart: ${argv[*]}"
chroot "$root" "${argv[@]}" >"$build/pkg-vswd.log" 2>&1 &
vswd_pid=$!
for _ in $(seq 100); do
	[ -S "$root/run/vsw/vswd.ctl" ] && break
	kill -0 "$vswd_pid" 2>/dev/null || break
	sleep 0.2
done
ctl() { chroot "$root" /usr/bin/vswctl "$@"; }
chk "port-add on the installed vswd" ctl port-add vm1 vhost-user
chk "the state file has it" grep -q "^port-add vm1 vhost-user" \
	"$root/var/lib/vsw/vswd.state"
chk "config-show = state file" bash -c \
	"diff <(chroot '$root' /usr/bin/vswctl config-show) \
		'$root/var/lib/vsw/vswd.state'"
vlog="$root/var/log/vsw/vswd.log"
chk "vswd logs to --log-file" grep -q "vswd: ready" "$vlog"
if command -v logrotate >/dev/null; then
	# the shipped snippet, its paths pointed into the chroot
	lrdir=$(mktemp -d)
	sed -e "s|/var/log/vsw|$root/var/log/vsw|" \
		-e "s|/usr/bin/vswctl|chroot $root /usr/bin/vswctl|" "$lr" \
		>"$lrdir/vsw"
	chk "logrotate -f with the snippet" logrotate -f -s "$lrdir/state" \
		"$lrdir/vsw"
	rm -rf "$lrdir"
	chk "rotated file has the start-up lines" grep -q "vswd: ready" \
		"$vlog.1"
	# logrotate (no "create") moved the file: a new one is vswd's reopen
	chk "log-reopen made a new file" test -f "$vlog"
	# the packaged levels may hide info lines: a config change at info
	ctl log-level vsw.vswd info >/dev/null
	ctl port-add vm2 vhost-user >/dev/null
	# the control thread writes queued lines out within 0.2 s
	for _ in $(seq 25); do
		grep -q "config change: port-add vm2" "$vlog" 2>/dev/null && break
		sleep 0.2
	done
	chk "lines after the rotation land in the new file" \
		grep -q "config change: port-add vm2" "$vlog"
else
	echo "(no logrotate here: rotation not run)"
fi
ctl shutdown >/dev/null || true
wait "$vswd_pid" && rc=0 || rc=$?
vswd_pid=
chk "vswd exited 0 (log: $vlog)" test "$rc" -eq 0
grep -q "mbuf pool: 0 in use" "$vlog" ||
	bad "vswd's pool line: $(grep 'mbuf pool' "$vlog")"

step "apt-get purge vsw"
in_root apt-get purge -y -q vsw >>"$build/pkg-apt.log" 2>&1
chk "binaries gone" test ! -e "$root/usr/sbin/vswd"
chk "conffiles and state gone" test ! -e "$root/etc/vsw/vswd.conf" -a \
	! -e "$root/var/lib/vsw"

step "done"
echo "$fails failure(s)"
[ "$fails" -eq 0 ]
