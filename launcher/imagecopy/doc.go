// Package imagecopy is the tool the containers of a launcher pod run from
// images that hold nothing but files (cmd/virt-imagecopy). The compute
// container's postStart hook installs it into the pod's tools volume (Install),
// before the kubelet starts those containers; the container of the
// kernel-boot image runs it to hold the kernel and initrd, and the container
// of each containerDisk volume to hold the disk, in place for the launcher,
// which reads them through /proc/<pid>/root (Hold, layout.ContainerDisk)
// instead of a copy.
//
// The tool runs in images without libc: it must build with CGO_ENABLED=0 and
// import nothing of libvirt or the launcher besides layout and termination.
package imagecopy
