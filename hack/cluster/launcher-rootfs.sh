#!/usr/bin/env bash
# Builds the root filesystem of the virt-launcher image once: a minimal
# Debian bookworm (debootstrap --variant=minbase) with libvirt's QEMU driver,
# QEMU and firmware, packed as a gzip'd layer tarball under ${VIRT_CACHE}.
# The tarball is named by a hash of this script, so editing the package list
# builds a new one and an unchanged list costs nothing. Prints its path.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SUITE=bookworm
# The host's Debian mirror (hack/lib/common.sh), or VIRT_DEBIAN_MIRROR.
MIRROR="$(debian_mirror "${SUITE}" VIRT_DEBIAN_MIRROR)"
# What the launcher runs: libvirt embedded (qemu:///embed loads the QEMU
# driver module from libvirt0), the x86 system emulator with its BIOS/iPXE
# data, OVMF for EFI guests, qemu-img for empty disks, and swtpm with its
# swtpm_setup (swtpm-tools), which libvirt runs for a TPM (devices.tpm);
# libvirt-daemon for /usr/sbin/libvirtd, the private daemon a live
# migration's target launcher runs (--migration-target; an embedded driver
# cannot receive a guest). Not libvirt-daemon-system: its postinst defines a
# default network in a forbidden range and a system service.
PACKAGES=(libvirt0 libvirt-daemon libvirt-daemon-driver-qemu qemu-system-x86 qemu-utils ovmf swtpm swtpm-tools)
# Bump when the steps below change what ends up in the layer.
RECIPE=4

key="$(echo "${RECIPE} ${SUITE} ${PACKAGES[*]}" | sha256sum | cut -c1-12)"
out="${VIRT_CACHE}/images/launcher-rootfs-${key}.tar.gz"
if [ -s "${out}" ]; then
  echo "${out}"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || die "building the launcher rootfs needs root (debootstrap)"

mkdir -p "${VIRT_CACHE}/images" "${VIRT_CACHE}/debootstrap" "${VIRT_CACHE}/tmp"
work="$(mktemp -d "${VIRT_CACHE}/tmp/launcher-rootfs.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
start=$(date +%s)
log "debootstrap ${SUITE} minbase + ${PACKAGES[*]} (once; cached as ${out})"
# A private mount namespace: whatever debootstrap mounts in the target
# (proc, sys, devpts) disappears with it, even when it fails half way.
include="$(IFS=,; echo "${PACKAGES[*]}")"
if ! unshare --mount --propagation private \
  debootstrap --variant=minbase --include="${include}" \
  --cache-dir="${VIRT_CACHE}/debootstrap" \
  "${SUITE}" "${work}/root" "${MIRROR}" >"${work}/debootstrap.log" 2>&1; then
  tail -30 "${work}/debootstrap.log" >&2
  die "debootstrap failed (log above)"
fi

r="${work}/root"
# libvirt's QEMU driver, run as root, looks up its compiled-in user even
# when qemu.conf names another; Debian creates it only in
# libvirt-daemon-system, which would pull in systemd.
chroot "${r}" useradd --system --user-group --no-create-home --home-dir /var/lib/libvirt \
  --shell /usr/sbin/nologin libvirt-qemu
# The launchers' user (uid 107, KubeVirt's qemu): libvirt's RPC server and
# client look their peer's uid up, so a private libvirtd (migration target)
# refuses every connection of a user without a passwd entry (any name does).
chroot "${r}" getent group 107 >/dev/null || chroot "${r}" groupadd --gid 107 qemu
chroot "${r}" getent passwd 107 >/dev/null || chroot "${r}" useradd --uid 107 --gid 107 \
  --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin qemu
# Guests are x86_64: libvirt probes every qemu-system-<arch> it finds when
# its QEMU driver starts (tens of seconds each under TCG on a busy node),
# so the i386 emulator would double every launcher's start.
rm -f "${r}/usr/bin/qemu-system-i386" "${r}/usr/bin/qemu-system-x86_64-microvm"
# Nothing of this is used at run time; the container runtime provides /dev.
rm -rf "${r}"/usr/share/{doc,man,info,locale,lintian,linda}/* \
  "${r}"/var/cache/apt/* "${r}"/var/lib/apt/lists/* "${r}"/var/log/* \
  "${r}"/dev/* "${r}"/tmp/* "${r}"/var/tmp/* "${r}"/debootstrap
# Paths without a leading ./, as in registry images.
(cd "${r}" && tar --numeric-owner --xattrs --sort=name -cf - $(ls -A)) | gzip -6 >"${work}/layer.tar.gz"
mv "${work}/layer.tar.gz" "${out}"
log "launcher rootfs: $(du -sm "${r}" | cut -f1) MiB unpacked, $(du -m "${out}" | cut -f1) MiB gzip'd, $(( $(date +%s) - start ))s"
# Older builds of the rootfs are of no further use.
find "${VIRT_CACHE}/images" -maxdepth 1 -name 'launcher-rootfs-*.tar.gz' ! -name "$(basename "${out}")" -delete
echo "${out}"
