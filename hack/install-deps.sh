#!/usr/bin/env bash
# Installs the Debian packages the project needs, idempotently: only what is
# missing is installed, and only as root. Safe to run on every `make` target
# that needs them; it costs one dpkg-query when everything is present.
set -o errexit -o nounset -o pipefail

# Packages by purpose. Keep this list the single source of truth: CI, `make up`
# and the image builders all call this script.
PACKAGES=(
  # code generation and the launcher's gRPC contract
  protobuf-compiler
  # cgo bindings of virt-launcher (libvirt.org/go/libvirt)
  gcc pkg-config libvirt-dev
  # libvirt's QEMU driver (used embedded, no daemon) and the hypervisor
  libvirt-daemon-driver-qemu qemu-system-x86 qemu-utils ovmf
  # the emulated TPM (devices.tpm): libvirt runs swtpm_setup and swtpm
  swtpm swtpm-tools
  # the local single-node cluster
  containerd runc containernetworking-plugins iproute2 iptables openssl ca-certificates curl
  # the test guest and the launcher image rootfs
  cpio debootstrap
  # the Debian guest image (hack/build-debian-image.sh): its root, its
  # partitions and filesystems assembled without mounts, GRUB for BIOS
  mmdebstrap fdisk dosfstools mtools grub-pc-bin
  # process and mount inspection used by `make down` and the e2e suite
  procps psmisc util-linux
  # make bench: a private libvirtd to compare the embedded driver with
  libvirt-daemon
)

# libvirt's QEMU driver run as root (virt-launcher's embedded libvirt) looks
# up its compiled-in user libvirt-qemu even when qemu.conf names another.
# Debian creates it in libvirt-daemon-system, which would make systemd the
# init: create the same system user instead.
if ! getent passwd libvirt-qemu >/dev/null && [ "$(id -u)" -eq 0 ]; then
  useradd --system --user-group --no-create-home --home-dir /var/lib/libvirt \
    --shell /usr/sbin/nologin libvirt-qemu
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}" >&2
  echo "install-deps: run as root (sudo $0) to install them" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Another apt run (unattended upgrades, a parallel job) may hold the lock:
# wait for it rather than fail.
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
