#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the Debian package from the tree: a release build configured for
# /usr (PKG_BUILD, made once), `meson install --destdir` into a staging
# tree, then DEBIAN/ (control with Depends from dpkg-shlibdeps, conffiles
# = everything under /etc, md5sums, maintainer scripts from deb/) and
# dpkg-deb --build.
#
#   mkdeb.sh SRC_DIR PKG_BUILD OUT_DIR   -> OUT_DIR/vsw_VERSION_ARCH.deb
#
# Prints the path of the package on its last line.
set -euo pipefail
src=$(realpath "$1")
bdir=$(realpath -m "$2")
out=$(realpath "$3")
dist="$src/switch/vswd/dist"

if [ ! -f "$bdir/build.ninja" ]; then
	meson setup "$bdir" "$src" --prefix=/usr -Dbuildtype=release \
		-Dintegration_tests=false >/dev/null
fi
# Only what is installed (not the tests and benchmarks), then install it.
mapfile -t targets < <(python3 - "$bdir" <<'PY'
import json, os, sys
b = sys.argv[1]
for t in json.load(open(os.path.join(b, "meson-info", "intro-targets.json"))):
    if t.get("installed"):
        for f in t["filename"]:
            print(os.path.relpath(f, b))
PY
)
ninja -C "$bdir" "${targets[@]}" >/dev/null
stage="$bdir/deb-root"
rm -rf "$stage"
meson install -C "$bdir" --no-rebuild --destdir "$stage" --quiet

# Debian policy: stripped binaries, compressed man pages.
strip --strip-unneeded "$stage/usr/sbin/vswd" "$stage/usr/bin/vswctl"
gzip -9n "$stage"/usr/share/man/man8/*.8

version=$(meson introspect --projectinfo "$bdir" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)

# dpkg-shlibdeps wants a debian/control to read; give it one in a scratch
# directory. librte-mempool-ring23 is not linked but loaded by the EAL as a
# plugin: the mbuf pools' ring ops live there.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/debian"
printf 'Source: vsw\n\nPackage: vsw\nArchitecture: any\n' \
	>"$scratch/debian/control"
shlibs=$(cd "$scratch" && dpkg-shlibdeps -O \
	"$stage/usr/sbin/vswd" "$stage/usr/bin/vswctl" 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
depends="$shlibs, librte-mempool-ring23"

mkdir "$stage/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" \
	-e "s/@SIZE@/$(du -sk --exclude=DEBIAN "$stage" | cut -f1)/" \
	-e "s/@DEPENDS@/$depends/" "$dist/deb/control.in" \
	>"$stage/DEBIAN/control"
(cd "$stage" && find etc -type f | sort | sed 's|^|/|') \
	>"$stage/DEBIAN/conffiles"
(cd "$stage" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o \
	-type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
	>"$stage/DEBIAN/md5sums"
install -m 0755 "$dist/deb/postinst" "$dist/deb/prerm" "$dist/deb/postrm" \
	"$stage/DEBIAN/"
chmod -R u=rwX,go=rX "$stage"

deb="$out/vsw_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
