#!/usr/bin/env bash
# setup-browsers.sh STATE_DIR: install what the browser targets (wasm, webgpu,
# webnn through onnxruntime-web in headless Chromium) need, from the registries
# only, pinned and checked. Idempotent; prints nothing when all is in place.
#
#   Debian chromium (+ libnss3 libnspr4 libexpat1)  → /usr/bin/chromium (apt, needs root)
#   npm onnxruntime-web@1.30.0  package/dist/        → STATE_DIR/web/onnxruntime-web/
#   npm @sparticuz/chromium@153.0.0 bin/chromium.br,
#       bin/swiftshader.tar.br (brotli)              → STATE_DIR/web/sparticuz-chromium/
#   versions seen                                    → STATE_DIR/web/versions.txt
#
# npm tarballs come from `npm pack` and are unpacked with tar, so no install
# script runs; each tarball's sha512 must equal the registry's dist.integrity
# recorded below (checked with `npm view PKG dist.integrity` when pinned).
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 STATE_DIR   (for example: $0 .hwtest)" >&2
	exit 2
fi
STATE=$(mkdir -p "$1" && cd "$1" && pwd)
WEB=$STATE/web
CACHE=$STATE/cache/npm

ORT_WEB_PKG=onnxruntime-web
ORT_WEB_VERSION=1.30.0
ORT_WEB_INTEGRITY=sha512-q0y+JrrtukXSzsBWEMccVfqX25LRmosXHF+CaRJmg8pZClzcV7svNc4rKY3jL02Vb7QmRMDs1SigqR4CXAfKYQ==

SPARTICUZ_PKG=@sparticuz/chromium
SPARTICUZ_VERSION=153.0.0
SPARTICUZ_INTEGRITY=sha512-jiGWqSvPMdu4+P9TilYqAR7yEGPEHINx+lCvE/NqNO/EHYzF/x1hUiI5T6ioVIt7dEy7n88byyT0vk+dnsgQwA==

# Debian packages: the browser for wasm/WebGPU, and the libraries the
# @sparticuz Chromium (built for Amazon Linux) loads from the system.
APT_PACKAGES=(chromium libnss3 libnspr4 libexpat1)
DEBIAN_CHROMIUM=/usr/bin/chromium

tmp=
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT

say() { echo "setup-browsers: $*"; }
die() {
	echo "setup-browsers: $*" >&2
	exit 1
}

# --- Debian packages ---------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
	if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" != installed ]; then
		missing+=("$p")
	fi
done
if [ ! -x "$DEBIAN_CHROMIUM" ] && [[ ! " ${missing[*]} " =~ " chromium " ]]; then
	missing+=(chromium)
fi
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		die "missing Debian packages: ${missing[*]}; as root run: apt-get update && apt-get install -y ${missing[*]}"
	fi
	say "apt-get install ${missing[*]}"
	log=$(mktemp)
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >"$log" 2>&1; then
		# The package lists may be absent or stale (a fresh container).
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$log" 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >>"$log" 2>&1 ||
			{ cat "$log" >&2; rm -f "$log"; die "apt-get install ${missing[*]} failed"; }
	fi
	rm -f "$log"
	[ -x "$DEBIAN_CHROMIUM" ] || die "$DEBIAN_CHROMIUM is still missing after apt-get install chromium"
fi

command -v node >/dev/null || die "node is needed (brotli decompression, integrity check); apt-get install -y nodejs npm"
command -v npm >/dev/null || die "npm is needed; apt-get install -y npm"

# --- npm tarballs ------------------------------------------------------------

# fetch PKG VERSION INTEGRITY: print the path of the checked tarball in CACHE.
fetch() {
	local pkg=$1 version=$2 want=$3
	local name=${pkg#@}
	name=${name//\//-}-$version.tgz
	local tgz=$CACHE/$name
	mkdir -p "$CACHE"
	if [ ! -f "$tgz" ]; then
		say "npm pack $pkg@$version" >&2
		local log
		log=$(mktemp)
		(cd "$CACHE" && npm pack --silent "$pkg@$version" >"$log" 2>&1) ||
			{ cat "$log" >&2; rm -f "$log"; die "npm pack $pkg@$version failed"; }
		rm -f "$log"
		[ -f "$tgz" ] || die "npm pack $pkg@$version did not write $tgz"
	fi
	local got
	got=$(node -e 'const c=require("crypto"),f=require("fs");
		process.stdout.write("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")
	if [ "$got" != "$want" ]; then
		rm -f "$tgz"
		die "$tgz: integrity $got, want $want (npm view $pkg@$version dist.integrity); removed it"
	fi
	echo "$tgz"
}

# installed DIR INTEGRITY: true when DIR was completed from the tarball with INTEGRITY.
installed() { [ -f "$1/.integrity" ] && [ "$(cat "$1/.integrity")" = "$2" ]; }

# onnxruntime-web: package/dist/ → WEB/onnxruntime-web/
ORT_DIR=$WEB/onnxruntime-web
if ! installed "$ORT_DIR" "$ORT_WEB_INTEGRITY"; then
	tgz=$(fetch "$ORT_WEB_PKG" "$ORT_WEB_VERSION" "$ORT_WEB_INTEGRITY")
	say "$ORT_WEB_PKG@$ORT_WEB_VERSION dist → $ORT_DIR"
	mkdir -p "$WEB"
	tmp=$(mktemp -d "$WEB.tmp.XXXXXX")
	tar -xzf "$tgz" -C "$tmp" package/dist
	for f in ort.min.js ort.webgpu.min.js ort-wasm-simd-threaded.jsep.mjs ort-wasm-simd-threaded.jsep.wasm \
		ort-wasm-simd-threaded.asyncify.mjs ort-wasm-simd-threaded.asyncify.wasm; do
		[ -f "$tmp/package/dist/$f" ] || { rm -rf "$tmp"; die "$ORT_WEB_PKG@$ORT_WEB_VERSION has no dist/$f"; }
	done
	echo "$ORT_WEB_INTEGRITY" >"$tmp/package/dist/.integrity"
	rm -rf "$ORT_DIR"
	mv "$tmp/package/dist" "$ORT_DIR"
	rm -rf "$tmp"
fi

# @sparticuz/chromium: brotli-compressed Chromium + SwiftShader → WEB/sparticuz-chromium/
SP_DIR=$WEB/sparticuz-chromium
if ! installed "$SP_DIR" "$SPARTICUZ_INTEGRITY"; then
	tgz=$(fetch "$SPARTICUZ_PKG" "$SPARTICUZ_VERSION" "$SPARTICUZ_INTEGRITY")
	say "$SPARTICUZ_PKG@$SPARTICUZ_VERSION → $SP_DIR"
	mkdir -p "$WEB"
	tmp=$(mktemp -d "$WEB.tmp.XXXXXX")
	tar -xzf "$tgz" -C "$tmp" package/bin/chromium.br package/bin/swiftshader.tar.br
	mkdir -p "$tmp/out"
	node -e 'const z=require("zlib"),f=require("fs");
		const [src,dst]=process.argv.slice(1);
		f.writeFileSync(dst, z.brotliDecompressSync(f.readFileSync(src)));' \
		"$tmp/package/bin/chromium.br" "$tmp/out/chromium"
	node -e 'const z=require("zlib"),f=require("fs");
		const [src,dst]=process.argv.slice(1);
		f.writeFileSync(dst, z.brotliDecompressSync(f.readFileSync(src)));' \
		"$tmp/package/bin/swiftshader.tar.br" "$tmp/swiftshader.tar"
	tar -xf "$tmp/swiftshader.tar" -C "$tmp/out"
	chmod 0755 "$tmp/out/chromium"
	echo "$SPARTICUZ_INTEGRITY" >"$tmp/out/.integrity"
	rm -rf "$SP_DIR"
	mv "$tmp/out" "$SP_DIR"
	rm -rf "$tmp"
fi

# --- versions ----------------------------------------------------------------
# Debian's /usr/bin/chromium is a wrapper script that prints a harmless
# "[: ... unexpected operator" on stderr: keep stdout only.
deb_version=$("$DEBIAN_CHROMIUM" --version 2>/dev/null | head -1 || true)
sp_version=$("$SP_DIR/chromium" --version 2>/dev/null | head -1 || true)
[ -n "$sp_version" ] || die "$SP_DIR/chromium does not run: $("$SP_DIR/chromium" --version 2>&1 | head -3)"
versions="debian-chromium: ${deb_version:-unknown} ($(dpkg-query -W -f='${Version}' chromium 2>/dev/null || echo '?'))
sparticuz-chromium: $sp_version ($SPARTICUZ_PKG@$SPARTICUZ_VERSION $SPARTICUZ_INTEGRITY)
onnxruntime-web: $ORT_WEB_VERSION ($ORT_WEB_INTEGRITY)"
if [ ! -f "$WEB/versions.txt" ] || [ "$(cat "$WEB/versions.txt")" != "$versions" ]; then
	echo "$versions" >"$WEB/versions.txt"
	say "versions → $WEB/versions.txt"
	sed 's/^/  /' "$WEB/versions.txt"
fi
