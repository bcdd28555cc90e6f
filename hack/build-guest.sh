#!/usr/bin/env bash
# Builds the project's test guest: Debian's cloud kernel plus a busybox
# initramfs whose init
#   - prints "VIRT-GUEST-READY <hostname>" on ttyS0 once it is up
#     (hostname from the kernel argument virt.hostname=, default virt-guest),
#   - powers off on the ACPI power button, printing VIRT-GUEST-ACPI-SHUTDOWN
#     first (button.ko + evdev.ko + busybox acpid: a bare busybox ignores it),
#   - with the kernel argument virt.acpi=ignore ignores the power button, so
#     the destroy-after-grace path can be tested with the same files,
#   - then runs an interactive shell (busybox ash as root, no login) on ttyS0,
#     for console clients, and one on tty1, the VGA text console a VNC client
#     sees (the marker is printed there too); busybox init restarts a shell
#     that exits,
#     The kernel writes its own messages to tty1 only with console=tty0; give
#     it last (console=tty0 console=ttyS0) so /dev/console stays the serial
#     port.
# The guest needs at least 72 MiB of memory (the bzImage unpacks to ~67 MiB);
# 128 MiB is a safe default.
#
# Result: ${VIRT_CACHE}/guest/<kernel>-<busybox>-<script hash>/{vmlinuz,initrd.gz},
# its directory printed on stdout. A second run with the same inputs is
# instant. Needs no root once apt's package lists exist.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# The fast path: a guest built by this very script is reused as it is, without
# asking apt (which costs seconds); delete ${VIRT_CACHE}/guest to pick up a
# newer Debian kernel.
script_hash="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"
current="${VIRT_CACHE}/guest/current-${script_hash}"
if [ -s "${current}/vmlinuz" ] && [ -s "${current}/initrd.gz" ]; then
  readlink -f "${current}"
  exit 0
fi

# Resolve the kernel package the meta package points at, and refresh apt's
# lists once if they are missing (a fresh machine that never ran apt-get update).
resolve() {
  apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'
}
kernel_pkg="$(resolve)"
if [ -z "${kernel_pkg}" ]; then
  [ "$(id -u)" -eq 0 ] || die "apt has no package lists: run 'apt-get update' as root"
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  kernel_pkg="$(resolve)"
  [ -n "${kernel_pkg}" ] || die "cannot resolve linux-image-cloud-amd64 from apt"
fi
version_of() { apt-cache policy "$1" | awk '/Candidate:/{print $2; exit}'; }
kernel_ver="$(version_of "${kernel_pkg}")"
busybox_ver="$(version_of busybox-static)"
[ -n "${kernel_ver}" ] && [ -n "${busybox_ver}" ] || die "cannot resolve package versions"

out="${VIRT_CACHE}/guest/${kernel_pkg#linux-image-}-busybox${busybox_ver//[:+~]/_}-${script_hash}"
if [ -s "${out}/vmlinuz" ] && [ -s "${out}/initrd.gz" ]; then
  ln -sfn "$(basename "${out}")" "${current}"
  echo "${out}"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
log "build-guest: downloading ${kernel_pkg}=${kernel_ver} and busybox-static=${busybox_ver}"
# apt-get download writes into the current directory; _apt needs to be able
# to write there when run as root.
chmod 777 "${work}"
(cd "${work}" && apt-get download -qq "${kernel_pkg}=${kernel_ver}" "busybox-static=${busybox_ver}" >&2)
dpkg -x "${work}"/linux-image-*.deb "${work}/kernel"
dpkg -x "${work}"/busybox-static_*.deb "${work}/busybox"

root="${work}/initrd"
mkdir -p "${root}"/{bin,proc,sys,dev,etc/acpi/PWRF,lib/modules}
cp "${work}/busybox/bin/busybox" "${root}/bin/busybox"
# Every applet, so that the shells are usable.
for applet in $("${root}/bin/busybox" --list); do
  case "${applet}" in busybox | linuxrc) continue ;; esac
  ln -s busybox "${root}/bin/${applet}"
done
for mod in drivers/acpi/button.ko drivers/input/evdev.ko; do
  src="$(find "${work}/kernel/lib/modules" -path "*/kernel/${mod}*" | head -n1)"
  [ -n "${src}" ] || die "module ${mod} not found in ${kernel_pkg}"
  case "${src}" in
    *.ko) cp "${src}" "${root}/lib/modules/" ;;
    *.ko.xz) xz -dc "${src}" >"${root}/lib/modules/$(basename "${mod}")" ;;
    *) die "unsupported module compression: ${src}" ;;
  esac
done

cat >"${root}/etc/acpi/PWRF/00000080" <<'EOF'
#!/bin/sh
echo VIRT-GUEST-ACPI-SHUTDOWN > /dev/ttyS0
poweroff -f
EOF
chmod 755 "${root}/etc/acpi/PWRF/00000080"

# Each shell runs as a session leader on its terminal (job control, ^C) and
# is started again when it exits.
cat >"${root}/etc/inittab" <<'EOF'
ttyS0::respawn:/bin/sh
tty1::respawn:/bin/sh
EOF

cat >"${root}/init" <<'EOF'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
name=virt-guest
acpi=poweroff
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    virt.hostname=*) name="${arg#virt.hostname=}" ;;
    virt.acpi=*) acpi="${arg#virt.acpi=}" ;;
  esac
done
hostname "$name"
if [ "$acpi" = ignore ]; then
  echo "VIRT-GUEST-ACPI-IGNORED" > /dev/ttyS0
else
  # The power button reaches user space only through evdev; busybox acpid
  # then runs /etc/acpi/PWRF/00000080.
  insmod /lib/modules/evdev.ko
  insmod /lib/modules/button.ko
  # acpid opens the event devices that exist when it starts, and devtmpfs
  # creates their nodes asynchronously: wait for every one (up to 5 s), or
  # an early power button press is lost.
  for i in $(seq 50); do
    missing=0
    for e in /sys/class/input/event*; do
      [ -e "/dev/input/${e##*/}" ] || missing=1
    done
    [ "$missing" = 0 ] && break
    sleep 0.1
  done
  acpid -c /etc/acpi -l /dev/null
fi
echo "VIRT-GUEST-READY $name" > /dev/ttyS0
echo "VIRT-GUEST-READY $name" > /dev/tty1
# busybox init runs the shells of /etc/inittab (and reaps orphans). Started
# by a shell script instead, they would inherit the ignored SIGINT of a
# background job and ^C would not work.
export PS1='\h:\w# '
exec /bin/init
EOF
chmod 755 "${root}/init"

staging="${out}.tmp.$$"
rm -rf "${staging}"
mkdir -p "${staging}"
(cd "${root}" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -9n) >"${staging}/initrd.gz"
cp "${work}"/kernel/boot/vmlinuz-* "${staging}/vmlinuz"
# qemu may run as another user and must read them.
chmod 755 "${staging}"
chmod 644 "${staging}"/*
rm -rf "${out}"
mv "${staging}" "${out}"
ln -sfn "$(basename "${out}")" "${current}"
log "build-guest: built ${out}"
echo "${out}"
