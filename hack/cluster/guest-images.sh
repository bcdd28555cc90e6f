# The guests' images: the test guest's kernel and initramfs
# (hack/build-guest.sh) and the Debian cloud guest's disk
# (hack/build-debian-image.sh). Sourced by images.sh (uses its image
# function).
#   localhost/guest-kernel:dev  /boot/vmlinuz and /boot/initrd.gz, for
#                               spec.domain.firmware.kernelBoot.container
#   localhost/guest-disk:dev    /disk/disk.img, for containerDisk volumes: a
#                               16 MiB raw disk whose first sector starts with
#                               "VIRT-TEST-DISK" (the guest boots from the
#                               kernel image; this one is data)
#   localhost/debian-disk:dev   /disk/disk.qcow2, the Debian 12 cloud guest of
#                               hack/build-debian-image.sh (boots from its own
#                               disk, BIOS or EFI; cloud-init, guest agent):
#                               artifacts/examples/vm-debian.yaml. Its first
#                               build needs root and about 2 minutes.
if [ -x "${ROOT}/hack/build-guest.sh" ]; then
  guest="$("${ROOT}/hack/build-guest.sh")"
  image guest-kernel "" -- --add "/boot/vmlinuz=${guest}/vmlinuz:0644" \
    --add "/boot/initrd.gz=${guest}/initrd.gz:0644"
  disk="${IMAGES}/guest-disk.img"
  if [ ! -s "${disk}" ]; then
    printf 'VIRT-TEST-DISK\n' >"${disk}.tmp"
    truncate -s 16M "${disk}.tmp"
    mv "${disk}.tmp" "${disk}"
  fi
  image guest-disk "" -- --add "/disk/disk.img=${disk}:0644"
fi
if [ -x "${ROOT}/hack/build-debian-image.sh" ]; then
  debian="$("${ROOT}/hack/build-debian-image.sh")"
  # 0644: the launcher (uid 107) opens it through the image's container.
  image debian-disk "" -- --add "/disk/disk.qcow2=${debian}/disk.qcow2:0644"
fi
