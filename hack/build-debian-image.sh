#!/usr/bin/env bash
# Builds the Debian cloud guest: a disk image of Debian 12 (bookworm) made
# from Debian's packages only, booted from its own disk with SeaBIOS (BIOS,
# the platform's default) or OVMF (spec.domain.firmware.bootloader.efi),
# for the containerDisk image localhost/debian-disk:dev
# (hack/cluster/guest-images.sh).
#
# What is in it:
#   - linux-image-cloud-amd64, systemd, udev, dbus, systemd-networkd (DHCP on
#     every en*/eth* NIC; cloud-init's own fallback config matches the first
#     NIC first) and systemd-resolved, openssh-server, sudo, e2fsprogs;
#   - cloud-init 22.4 with the NoCloud datasource (the platform's
#     cloudInitNoCloud, a disk labelled cidata) and ConfigDrive (label
#     config-2): datasource_list [NoCloud, ConfigDrive, None]; its default
#     user is "debian" (sudo without password, no password, SSH keys only);
#   - qemu-guest-agent, started by udev when the virtio-serial port
#     org.qemu.guest_agent.0 appears (Debian's unit has no [Install]);
#   - systemd-logind powers the guest off on the ACPI power button (the
#     cloud kernel's button and evdev modules, loaded by udev);
#   - "VIRT-GUEST-READY <hostname>" on ttyS0 once cloud-init's final stage
#     and sshd are done (virt-guest-ready.service), the marker the test
#     guest prints too. Before it, cloud-init's own lines reach the console
#     ("Cloud-init v. ... finished at ...").
#
# The disk (2 GiB virtual, MBR-partitioned) is assembled from pieces, without
# loop devices or mounts:
#   sector 0             GRUB's boot.img (i386-pc) before the partition table
#   sectors 1-2047       GRUB's core.img (i386-pc), found there by boot.img's
#                        and diskboot.img's default sector numbers
#   partition 1 (32 MiB) EFI system partition, FAT (mkfs.vfat + mtools):
#                        \EFI\BOOT\BOOTX64.EFI (Debian's signed shim) and
#                        grubx64.efi (Debian's signed GRUB), the removable-
#                        media path OVMF boots without NVRAM entries, with or
#                        without Secure Boot; \EFI\debian\grub.cfg
#   partition 2 (rest)   ext4 labelled debian-root, filled by mkfs.ext4 -d
#                        straight from the mmdebstrap tree at its offset
# Both GRUBs find the partition labelled debian-root and read its
# /boot/grub/grub.cfg, which this script writes (no GRUB package is in the
# guest): /vmlinuz and /initrd.img (the symlinks the kernel package keeps
# current), root by label, console=tty0 console=ttyS0,115200 (ttyS0 last:
# /dev/console is the serial port), quiet, no menu (timeout 0).
#
# Boot tuning for TCG, each change on top of the ones above it: seconds from
# QEMU's start to a runcmd's marker on ttyS0 and to the first SSH login
# (median [min-max] of 3-4 boots, BIOS, qemu64, 1 vCPU, 512 MiB, virtio disk
# and NIC, NoCloud seed, host load 1-3 with other jobs running, so +-8 s of
# noise):
#   Debian's defaults: initramfs MODULES=most   59.7 [58-72]  52.6 [50-62]
#     (13.9 MiB), every unit, Debian's cloud-init
#     module lists, RSA+ECDSA+Ed25519 host keys
#   + initramfs MODULES=list (5.6 MiB)          54.8 [48-61]  46.8 [42-52]
#     kernel+initramfs 5.1 -> 4.4 s
#   + quiet                                     54.6 [50-62]  46.7 [43-54]
#   + 9 units masked                            57.6 [49-59]  49.1 [41-50]
#     e2scrub_reap.service alone took 7-11 s at boot (systemd-analyze blame)
#   + /etc/.updated and /var/.updated           62.0 [51-69]  53.9 [43-61]
#     ldconfig and the journal catalog update no longer run at each boot
#   + cloud-init: 24 of Debian's 51 modules,   44.6 [42-47]  36.3 [36-41]
#     no RSA host key (cloud-init.service 10-26 s -> 4.7-5.7 s)
# The small steps are within the noise; what counts is the last one:
# cloud-init's network stage, which sshd waits for, made RSA and other keys
# and ran modules for other clouds. Tried and left out: mitigations=off
# (46.6 [42-54], 39.7 [36-47]: no gain), no systemd-resolved (45.5, 38.2: no
# gain, and no DNS), the config stage's 4 modules run by the final stage
# instead (cloud-config.service masked: 42.4 and 39.0 in one boot, no clear
# gain). What is left is mostly Python starting cloud-init four times
# (cloud-init-local 11-16 s, cloud-config 7.5-9 s, cloud-final 3.5-6 s
# under emulation; about 0.25 s of imports each natively) and udev's
# coldplug. Under EFI (OVMF) the times are about the same: see the table in
# docs/launcher.md. `packages:` in user data costs an `apt-get update` and
# the installs through the network: minutes under emulation.
#
# Result: ${VIRT_CACHE}/debian-image/<hash>/disk.qcow2 (compressed qcow2,
# mode 0644) and packages.txt (what is installed), the directory printed on
# stdout. <hash> covers this script, the suite and the mirrors: a second
# run is instant, a changed recipe rebuilds. Delete the directory to pick up
# newer Debian packages (and the host's newer GRUB for BIOS). Downloaded
# .debs are kept in ${VIRT_CACHE}/debian-image/debs for the next build
# (superseded ones are dropped).
#
# Needs root to build (mmdebstrap's root mode, files owned by root in the
# image), not to answer from the cache. Mirrors: VIRT_DEBIAN_MIRROR and
# VIRT_DEBIAN_SECURITY_MIRROR, else the host's apt sources for bookworm and
# bookworm-security; with neither it stops and names the variable to set.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

SUITE=bookworm
LABEL=debian-root
DISK_MIB=2048
ESP_MIB=32

mirror="$(debian_mirror "${SUITE}" VIRT_DEBIAN_MIRROR)"
security="$(debian_mirror "${SUITE}-security" VIRT_DEBIAN_SECURITY_MIRROR)"
sources=(
  "deb ${mirror%/} ${SUITE} main"
  "deb ${mirror%/} ${SUITE}-updates main"
  "deb ${security%/} ${SUITE}-security main"
)

base="${VIRT_CACHE}/debian-image"
key="$(
  {
    sha256sum <"${BASH_SOURCE[0]}"
    printf '%s\n' "${sources[@]}"
  } | sha256sum | cut -c1-12
)"
out="${base}/${key}"
if [ -s "${out}/disk.qcow2" ]; then
  echo "${out}"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || die "build-debian-image: building the image needs root (mmdebstrap's root mode); run it as root once"
mkdir -p "${base}/debs"
# One build at a time (they share the .deb cache); a build that finished
# while this one waited is the answer.
exec 9>"${base}/.lock"
flock 9
if [ -s "${out}/disk.qcow2" ]; then
  echo "${out}"
  exit 0
fi
"${ROOT}/hack/install-deps.sh" >&2
t0=$(date +%s)
work="$(mktemp -d "${base}/.build.XXXXXX")"
cleanup() {
  # mmdebstrap mounts /proc, /sys and /dev/pts in the tree and undoes it
  # itself; should it be killed, nothing beneath ${work} may be mounted when
  # it is removed.
  local m
  for m in $(awk -v w="${work}/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "${m}" || true
  done
  rm -rf --one-file-system "${work}"
}
trap cleanup EXIT
rootfs="${work}/rootfs"

# --- the root tree ----------------------------------------------------------

packages=(
  linux-image-cloud-amd64 zstd
  systemd-sysv udev dbus systemd-resolved
  cloud-init openssh-server qemu-guest-agent sudo
  e2fsprogs iproute2 iputils-ping netbase ca-certificates procps less
)

# Read by initramfs-tools when the kernel package builds the initramfs, so
# it is built once, small: MODULES=list takes only what the root disk needs
# (virtio-blk or virtio-scsi; ext4 is built in) instead of every storage
# driver, and CD-ROMs (sr_mod): cloud-init's generator looks for the NoCloud
# or ConfigDrive label before udev loads modules from the root, so a cidata
# CD-ROM must be there by then, as a virtio disk is. The cloud kernel has no
# AHCI driver: disks and CD-ROMs on the sata bus stay invisible to it.
mkdir -p "${work}/hooks"
cat >"${work}/hooks/essential-initramfs.sh" <<'EOF'
#!/bin/sh
set -e
mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d"
printf 'MODULES=list\nCOMPRESS=zstd\nRESUME=none\n' >"$1/etc/initramfs-tools/conf.d/virt-image.conf"
printf '%s\n' virtio_pci virtio_blk virtio_scsi sd_mod sr_mod ext4 >"$1/usr/share/initramfs-tools/modules.d/virt-image"
EOF
chmod 755 "${work}/hooks/essential-initramfs.sh"

mkdir -p "${work}/debs"
log "build-debian-image: mmdebstrap ${SUITE} (${#packages[@]} packages and their dependencies) from ${mirror}"
# The .debs of earlier builds go in and come out again (after apt dropped
# those no longer in the mirror's lists), so a rebuild downloads only what
# changed.
mmdebstrap --mode=root --variant=minbase --format=directory --quiet \
  --include="$(IFS=,; echo "${packages[*]}")" \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --skip=essential/unlink \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --setup-hook="sync-in ${base}/debs /var/cache/apt/archives/" \
  --essential-hook="'${work}/hooks/essential-initramfs.sh' \"\$1\"" \
  --customize-hook='chroot "$1" apt-get -qq autoclean' \
  --customize-hook="sync-out /var/cache/apt/archives ${work}/debs" \
  "${SUITE}" "${rootfs}" "${sources[@]}" >&2
rm -rf "${base}/debs"
find "${work}/debs" -maxdepth 1 ! -name '*.deb' ! -path "${work}/debs" -exec rm -rf {} +
mv "${work}/debs" "${base}/debs"
log "build-debian-image: root tree ready ($(($(date +%s) - t0))s, $(du -sm "${rootfs}" | cut -f1) MiB)"

[ -e "${rootfs}/vmlinuz" ] && [ -e "${rootfs}/initrd.img" ] ||
  die "the kernel package left no /vmlinuz and /initrd.img symlinks"

# Files of a fresh machine rather than the build host's (mmdebstrap copies
# the host's hosts and resolv.conf).
echo debian >"${rootfs}/etc/hostname"
cat >"${rootfs}/etc/hosts" <<'EOF'
127.0.0.1	localhost
::1		localhost ip6-localhost ip6-loopback
ff02::1		ip6-allnodes
ff02::2		ip6-allrouters
EOF
ln -sfn ../run/systemd/resolve/stub-resolv.conf "${rootfs}/etc/resolv.conf"
echo "LABEL=${LABEL} / ext4 defaults,errors=remount-ro 0 1" >"${rootfs}/etc/fstab"
# Each boot makes its own identity: machine-id (systemd), SSH host keys
# (cloud-init's ssh module).
: >"${rootfs}/etc/machine-id"
rm -f "${rootfs}/var/lib/dbus/machine-id" "${rootfs}"/etc/ssh/ssh_host_*
rm -rf "${rootfs}/var/lib/cloud" "${rootfs}"/var/log/*.log "${rootfs}/var/cache/apt/"*.bin

# Networking: networkd takes DHCP on any NIC; systemd-networkd-wait-online,
# which cloud-init's network stage waits for, is content with one NIC
# online and gives up after 30 s rather than 2 min.
cat >"${rootfs}/etc/systemd/network/90-dhcp.network" <<'EOF'
# Any NIC cloud-init configured no other way.
[Match]
Name=en* eth*

[Network]
DHCP=ipv4
EOF
mkdir -p "${rootfs}/etc/systemd/system/systemd-networkd-wait-online.service.d"
cat >"${rootfs}/etc/systemd/system/systemd-networkd-wait-online.service.d/virt-image.conf" <<'EOF'
[Service]
ExecStart=
ExecStart=/lib/systemd/systemd-networkd-wait-online --any --timeout=30
EOF
chroot "${rootfs}" systemctl enable --quiet systemd-networkd.service systemd-resolved.service

# cloud-init's ssh module makes the host keys; without cloud-init (no
# datasource, or disabled) sshd would fail for want of any.
mkdir -p "${rootfs}/etc/systemd/system/ssh.service.d"
cat >"${rootfs}/etc/systemd/system/ssh.service.d/virt-image.conf" <<'EOF'
[Service]
ExecStartPre=
ExecStartPre=/bin/sh -c 'ls /etc/ssh/ssh_host_*_key >/dev/null 2>&1 || ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key'
ExecStartPre=/usr/sbin/sshd -t
EOF

cat >"${rootfs}/etc/cloud/cloud.cfg.d/90-virt-image.cfg" <<'EOF'
# hack/build-debian-image.sh: the platform's datasources, networkd, and the
# modules users of a VM need (Debian's lists run 51, most of them for other
# clouds or tools this image does not have).
datasource_list: [NoCloud, ConfigDrive, None]
system_info:
  network:
    renderers: [networkd]
# RSA keys take long to make under emulation.
ssh_genkeytypes: [ed25519, ecdsa]
cloud_init_modules:
  - seed_random
  - bootcmd
  - write-files
  - mounts
  - set_hostname
  - update_hostname
  - update_etc_hosts
  - ca-certs
  - users-groups
  - ssh
cloud_config_modules:
  - set-passwords
  - apt-configure
  - timezone
  - runcmd
cloud_final_modules:
  - package-update-upgrade-install
  - write-files-deferred
  - scripts-vendor
  - scripts-per-once
  - scripts-per-boot
  - scripts-per-instance
  - scripts-user
  - phone-home
  - final-message
  - power-state-change
EOF

# Units a VM started from a pristine disk does not need at boot or later:
# periodic apt and filesystem jobs (CPU a guest under emulation cannot
# spare), binfmt, and cloud-init's NIC hotplug listener (no NIC hotplug).
for unit in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
  e2scrub_reap.service fstrim.timer systemd-binfmt.service proc-sys-fs-binfmt_misc.automount \
  cloud-init-hotplugd.socket; do
  ln -sfn /dev/null "${rootfs}/etc/systemd/system/${unit}"
done

cat >"${rootfs}/etc/systemd/system/virt-guest-ready.service" <<'EOF'
# The guest is up: cloud-init's last stage and sshd are done. Ordered after
# multi-user.target without being part of it (cloud-final.service is after
# it too).
[Unit]
Description=Tell the serial console that the guest is ready
DefaultDependencies=no
After=multi-user.target cloud-final.service ssh.service

[Service]
Type=oneshot
# On a line of its own: getty's login prompt may be on the console already.
ExecStart=/bin/sh -c '{ echo; echo "VIRT-GUEST-READY $$(hostname)"; } >/dev/ttyS0'

[Install]
WantedBy=multi-user.target
EOF
chroot "${rootfs}" systemctl enable --quiet virt-guest-ready.service

mkdir -p "${rootfs}/boot/grub"
cat >"${rootfs}/boot/grub/grub.cfg" <<EOF
# Written by hack/build-debian-image.sh and read by the GRUB images in the
# disk's first sectors (BIOS) and its EFI system partition; no GRUB package
# in the guest rewrites it.
if [ "\${grub_platform}" = pc ]; then
  serial --unit=0 --speed=115200
  terminal_input serial console
  terminal_output serial console
fi
set timeout=0
menuentry 'Debian GNU/Linux 12' {
  linux /vmlinuz root=LABEL=${LABEL} ro console=tty0 console=ttyS0,115200 quiet
  initrd /initrd.img
}
EOF

# systemd reruns ldconfig and the journal's catalog update at every boot
# while /etc/.updated and /var/.updated are missing or older than /usr
# (ConditionNeedsUpdate): a pristine disk at every start would pay each time.
for d in etc var; do
  printf 'TIMESTAMP_NSEC=%s\n' "$(stat -c %Y "${rootfs}/usr")000000000" >"${rootfs}/${d}/.updated"
  touch -r "${rootfs}/usr" "${rootfs}/${d}/.updated"
done

chroot "${rootfs}" dpkg-query -W -f='${Package} ${Version}\n' >"${work}/packages.txt"

# --- the disk ---------------------------------------------------------------

# BIOS: a core.img with the modules it needs built in and, as its embedded
# config, where the root's grub.cfg is.
cat >"${work}/grub-early.cfg" <<EOF
search --no-floppy --label --set=root ${LABEL}
set prefix=(\$root)/boot/grub
EOF
grub-mkimage -O i386-pc -o "${work}/core.img" -c "${work}/grub-early.cfg" -p /boot/grub \
  biosdisk part_msdos ext2 search search_label normal linux boot test echo serial terminal

# EFI: Debian's signed chain, so that it boots with Secure Boot too
# (efi.secureBoot, OVMF with Microsoft's keys): shim, signed by Microsoft's
# UEFI CA, loads grubx64.efi from its own directory; Debian's signed GRUB
# reads /EFI/debian/grub.cfg of the partition it came from and checks the
# Debian-signed kernel through shim. Taken from the packages without
# installing them on the host.
mkdir "${work}/efi"
if ! (cd "${work}/efi" && apt-get download -qq -o APT::Sandbox::User=root shim-signed grub-efi-amd64-signed) >&2; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  (cd "${work}/efi" && apt-get download -qq -o APT::Sandbox::User=root shim-signed grub-efi-amd64-signed) >&2
fi
for deb in "${work}"/efi/*.deb; do
  dpkg -x "${deb}" "${work}/efi/x"
  dpkg-deb -W --showformat='${Package} ${Version} (EFI system partition)\n' "${deb}" >>"${work}/packages.txt"
done
cat >"${work}/grub-esp.cfg" <<EOF
search --no-floppy --label --set=root ${LABEL}
set prefix=(\$root)/boot/grub
configfile \$prefix/grub.cfg
EOF
core_sectors=$(( ($(stat -c %s "${work}/core.img") + 511) / 512 ))
[ "${core_sectors}" -lt 2047 ] || die "GRUB's core.img (${core_sectors} sectors) does not fit before the first partition"

disk="${work}/disk.raw"
esp_start=2048
esp_sectors=$((ESP_MIB * 2048))
root_start=$((esp_start + esp_sectors))
root_sectors=$((DISK_MIB * 2048 - root_start))
truncate -s "${DISK_MIB}M" "${disk}"
sfdisk --quiet --no-reread --no-tell-kernel "${disk}" <<EOF
label: dos
label-id: 0x56495254
unit: sectors
start=${esp_start}, size=${esp_sectors}, type=ef
start=${root_start}, size=${root_sectors}, type=83, bootable
EOF

# The MBR's boot code (up to the disk signature; the partition table stays),
# with the jump over the drive check made a no-op as grub-install does for a
# hard disk; then core.img from sector 1.
dd if=/usr/lib/grub/i386-pc/boot.img of="${disk}" bs=440 count=1 conv=notrunc status=none
printf '\x90\x90' | dd of="${disk}" bs=1 seek=$((0x66)) conv=notrunc status=none
dd if="${work}/core.img" of="${disk}" bs=512 seek=1 conv=notrunc status=none

esp="${work}/esp.img"
mkfs.vfat -C -n EFI "${esp}" $((esp_sectors / 2)) >/dev/null
export MTOOLS_SKIP_CHECK=1
mmd -i "${esp}" ::/EFI ::/EFI/BOOT ::/EFI/debian
mcopy -i "${esp}" "${work}/efi/x/usr/lib/shim/shimx64.efi.signed" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "${esp}" "${work}/efi/x/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" ::/EFI/BOOT/grubx64.efi
mcopy -i "${esp}" "${work}/grub-esp.cfg" ::/EFI/debian/grub.cfg
dd if="${esp}" of="${disk}" bs=512 seek="${esp_start}" conv=notrunc,sparse status=none

# GRUB 2.06 cannot read ext4 with metadata_csum_seed or orphan_file, which
# e2fsprogs 1.47 may enable.
mkfs.ext4 -q -F -L "${LABEL}" -O ^metadata_csum_seed,^orphan_file -m 1 \
  -E "offset=$((root_start * 512))" -d "${rootfs}" "${disk}" "$((root_sectors / 2))k"
log "build-debian-image: disk assembled ($(($(date +%s) - t0))s)"

staging="${out}.tmp.$$"
rm -rf "${staging}"
mkdir -p "${staging}"
qemu-img convert -c -O qcow2 "${disk}" "${staging}/disk.qcow2"
cp "${work}/packages.txt" "${staging}/"
chmod 755 "${staging}"
chmod 644 "${staging}"/*
rm -rf "${out}"
mv "${staging}" "${out}"
# Builds of earlier recipes.
find "${base}" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended -regex '.*/[0-9a-f]{12}' \
  ! -name "${key}" -exec rm -rf {} +
log "build-debian-image: built ${out} ($(du -m "${out}/disk.qcow2" | cut -f1) MiB, $(($(date +%s) - t0))s)"
echo "${out}"
