# The test guest's images, from the kernel and initramfs hack/build-guest.sh
# builds. Sourced by images.sh (uses its image function).
#   localhost/guest-kernel:dev  /boot/vmlinuz and /boot/initrd.gz, for
#                               spec.domain.firmware.kernelBoot.container
#   localhost/guest-disk:dev    /disk/disk.img, for containerDisk volumes: a
#                               16 MiB raw disk whose first sector starts with
#                               "VIRT-TEST-DISK" (the guest boots from the
#                               kernel image; this one is data)
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
