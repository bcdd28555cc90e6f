// Package overhead measures what a VMI costs beyond its guest (issue 9,
// part 4): the memory of a running launcher pod's processes from /proc —
// everything in the pod but QEMU (virt-launcher with its embedded libvirt,
// pause), and the whole pod minus the guest's RAM and the TCG code buffer,
// both read from QEMU's own mappings (smaps) — and, on the host, the same
// guest under virt-launcher with its embedded libvirt against virt-launcher
// talking to a private libvirtd (--libvirt-uri), each run as the pod's
// unprivileged user with no capabilities.
package overhead
