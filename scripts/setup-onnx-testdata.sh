#!/usr/bin/env bash
# setup-onnx-testdata.sh STATE_DIR: install Debian's libonnx-testdata (the ONNX
# project's own backend test cases: model.onnx + test_data_set_0/{input,output}_K.pb)
# into STATE_DIR/onnx-testdata/, pinned by version and checked by sha256.
# Idempotent; prints nothing when it is in place.
#
#   apt-get download libonnx-testdata=1.12.0-2 (the .deb from Debian bookworm's archive)
#   → sha256 check → dpkg -x → STATE_DIR/onnx-testdata/usr/share/libonnx-testdata/data/
#
# `apt-get download` + `dpkg -x` works as root and as any user, and never touches the
# system; only `apt-get update` (when the package lists lack the package) needs root.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 STATE_DIR   (for example: $0 .hwtest)" >&2
	exit 2
fi
STATE=$(mkdir -p "$1" && cd "$1" && pwd)

PKG=libonnx-testdata
VERSION=1.12.0-2
DEB=${PKG}_${VERSION}_all.deb
SHA256=7dc0912e02f79ece102331411a751b091bc0e191c9fb1287f8cdfbe5530f6027
DEST=$STATE/onnx-testdata
CACHE=$STATE/cache/apt
MARK=$DEST/.installed-$VERSION

[ -f "$MARK" ] && exit 0

say() { echo "setup-onnx-testdata: $*"; }
die() {
	echo "setup-onnx-testdata: $*" >&2
	exit 1
}

mkdir -p "$CACHE"
if [ ! -f "$CACHE/$DEB" ]; then
	say "apt-get download $PKG=$VERSION → $CACHE/"
	if ! (cd "$CACHE" && apt-get download -qq "$PKG=$VERSION" 2>/dev/null); then
		[ "$(id -u)" -eq 0 ] || die "apt-get download $PKG=$VERSION failed: the package lists do not have it; as root run: apt-get update (then make setup again)"
		apt-get update -qq >/dev/null
		(cd "$CACHE" && apt-get download -qq "$PKG=$VERSION") || die "apt-get download $PKG=$VERSION failed after apt-get update (is Debian bookworm's main archive in /etc/apt/sources.list?)"
	fi
fi
if ! echo "$SHA256  $CACHE/$DEB" | sha256sum --check --quiet - 2>/dev/null; then
	rm -f "$CACHE/$DEB"
	die "$DEB does not match sha256 $SHA256 (removed; run make setup again)"
fi
tmp=$(mktemp -d "$STATE/.onnx-testdata.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg -x "$CACHE/$DEB" "$tmp"
[ -d "$tmp/usr/share/libonnx-testdata/data/node" ] || die "$DEB has no usr/share/libonnx-testdata/data/node"
touch "$tmp/.installed-$VERSION"
rm -rf "$DEST"
mv "$tmp" "$DEST"
trap - EXIT
say "$PKG $VERSION → $DEST/usr/share/libonnx-testdata/data ($(ls "$DEST/usr/share/libonnx-testdata/data/node" | wc -l) node cases)"
