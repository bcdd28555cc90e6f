// Package imagecopy is the tool the containers of a launcher pod run from
// images that hold nothing but files (cmd/virt-imagecopy). The launcher
// image's init container installs it into the pod's tools volume; the
// kernel-boot init container runs it to copy the kernel and initrd into an
// emptyDir, and the container of each containerDisk volume runs it to hold
// the disk in place for the launcher, which reads it through
// /proc/<pid>/root (Hold, layout.ContainerDisk) instead of a copy.
//
// The tool runs in images without libc: it must build with CGO_ENABLED=0 and
// import nothing of libvirt or the launcher besides layout and termination.
package imagecopy
