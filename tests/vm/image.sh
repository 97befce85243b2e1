# Shared by every VM the tests boot (sourced: tests/vm/run.sh, tests/vm/cluster.sh): the Debian
# packages (downloaded once into the cache), the cached base image (kernel modules, user space and
# the libraries they link) and the overlay with the fabscope under test. Needs: here (tests/vm),
# cache (the package/image cache) and die() from the caller.

# vm_packages: the packages of packages.txt plus the kernel package, downloaded when missing
# (apt-get download needs no root and installs nothing). Sets the array `debs`.
vm_packages() {
  local kernel_pkg=${FABSCOPE_VM_KERNEL:-}
  if [ -z "$kernel_pkg" ]; then
    kernel_pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    if [ -z "$kernel_pkg" ]; then  # offline: use the kernel already in the cache
      kernel_pkg=$(ls "$cache/debs" | sed -n 's/^\(linux-image-[0-9][^_]*-amd64\)_.*/\1/p' | sort -V | tail -1)
    fi
  fi
  [ -n "$kernel_pkg" ] || die "no linux-image-*-amd64 package known to apt and none cached in $cache/debs"
  mkdir -p "$cache/debs"
  local pkgs missing=() p
  mapfile -t pkgs < <(grep -v '^\s*\(#\|$\)' "$here/packages.txt")
  pkgs+=("$kernel_pkg")
  for p in "${pkgs[@]}"; do
    ls "$cache/debs/${p}"_*.deb >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "vm: downloading ${missing[*]}"
    (cd "$cache/debs" && apt-get download -q "${missing[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed') ||
      die "apt-get download failed for: ${missing[*]}"
  fi
  debs=()
  for p in "${pkgs[@]}"; do debs+=("$(ls "$cache/debs/${p}"_*.deb | sort -V | tail -1)"); done
}

# vm_base MODULE... -- PROGRAM...: the base image with these kernel modules (and what they
# depend on, in load order in /etc/modules.order) and these programs (paths inside the
# packages, e.g. usr/bin/rdma, sbin/tc; installed under /usr/bin by their name), cached by the
# package set, the lists and this file. Sets `base` and `vmlinuz`. iproute2's sbin/ip is always
# installed as ip2: busybox sh runs its own `ip` applet first, and the applet cannot create veth
# pairs or set qdiscs.
vm_base() {
  local modules=() programs=() m
  while [ $# -gt 0 ] && [ "$1" != -- ]; do modules+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  programs=("$@")
  local key
  key=$( (printf '%s\n' "${debs[@]##*/}" "${modules[@]}" "${programs[@]}"; cat "$here/image.sh" "$here/modules.py") |
         sha256sum | cut -c1-16)
  base="$cache/base-$key.cpio.gz"
  vmlinuz="$cache/vmlinuz-$key"
  [ -s "$base" ] && [ -s "$vmlinuz" ] && return 0
  echo "vm: building base image $key"
  local work
  work=$(mktemp -d "$cache/build.XXXXXX")
  local x="$work/x" r="$work/root"
  mkdir -p "$x" "$r"/{bin,sbin,usr/bin,usr/lib/x86_64-linux-gnu,lib64,etc,proc,sys,dev,tmp,run,out}
  local d
  for d in "${debs[@]}"; do dpkg -x "$d" "$x"; done
  local kver
  kver=$(ls "$x/lib/modules" | head -1)
  cp "$x/boot/vmlinuz-$kver" "$work/vmlinuz"
  local mdir="$x/lib/modules/$kver"
  mkdir -p "$r/lib/modules/$kver"
  python3 "$here/modules.py" "$mdir" "${modules[@]}" >"$work/order" || { rm -rf "$work"; die "kernel modules"; }
  while read -r m; do
    install -D -m 0644 "$mdir/$m" "$r/lib/modules/$kver/$m"
    echo "/lib/modules/$kver/$m" >>"$r/etc/modules.order"
  done <"$work/order"
  echo "$kver" >"$r/etc/kernel-release"
  for d in "${debs[@]}"; do dpkg-deb -f "$d" Package Version | paste -sd' '; done >"$r/etc/packages"
  install -m 0755 "$x/bin/busybox" "$r/bin/busybox"
  install -m 0755 "$x/sbin/ip" "$r/usr/bin/ip2"
  local elfs=("$r/usr/bin/ip2") b
  for b in "${programs[@]}"; do
    install -m 0755 "$x/$b" "$r/usr/bin/$(basename "$b")"; elfs+=("$r/usr/bin/$(basename "$b")")
  done
  # libibverbs dlopens its provider from a driver file; only rxe is needed.
  mkdir -p "$r/etc/libibverbs.d" "$r/usr/lib/x86_64-linux-gnu/libibverbs"
  cp "$x/etc/libibverbs.d/rxe.driver" "$r/etc/libibverbs.d/"
  cp "$x/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so" "$r/usr/lib/x86_64-linux-gnu/libibverbs/"
  elfs+=("$r/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so")
  local libpath="$x/usr/lib/x86_64-linux-gnu:$x/lib/x86_64-linux-gnu"
  LD_LIBRARY_PATH=$libpath ldd "${elfs[@]}" >"$work/ldd" 2>&1 || true
  if grep -q 'not found' "$work/ldd"; then
    local nf
    nf=$(grep 'not found' "$work/ldd" | sort -u | tr '\n' ' ')
    rm -rf "$work"
    die "libraries not found: $nf"
  fi
  awk '/=> \// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' "$work/ldd" | sort -u | while read -r lib; do
    cp -L "$lib" "$r/usr/lib/x86_64-linux-gnu/$(basename "$lib")"
  done
  ln -s usr/lib "$r/lib"
  ln -sf ../usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$r/lib64/ld-linux-x86-64.so.2"
  (cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$work/base.cpio.gz"
  mv "$work/base.cpio.gz" "$base"; mv "$work/vmlinuz" "$vmlinuz"
  rm -rf "$work"
}

# vm_overlay_fabscope DIR BINARY: the fabscope under test in DIR/usr/bin, with the libraries it
# links (none for a static binary).
vm_overlay_fabscope() {
  mkdir -p "$1/usr/bin" "$1/usr/lib/x86_64-linux-gnu" "$1/etc"
  install -m 0755 "$2" "$1/usr/bin/fabscope"
  { ldd "$2" || true; } | awk '/=> \// {print $3}' | while read -r lib; do
    cp -L "$lib" "$1/usr/lib/x86_64-linux-gnu/$(basename "$lib")"
  done
}

# vm_cpio DIR OUT: a newc archive of DIR (root-owned), gzip'd.
vm_cpio() { (cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$2"; }
