// Package imagecopy is the copy tool of a launcher pod's init containers
// (cmd/virt-imagecopy). The launcher image's init container installs the
// tool into the pod's tools volume; the init containers of container-disk and
// kernel-boot images, which hold nothing but their files, run it from there
// to copy their files into the pod's emptyDirs.
//
// The tool runs in images without libc: it must build with CGO_ENABLED=0 and
// import nothing of libvirt or the launcher besides layout and termination.
package imagecopy
