// Package logrotation keeps the files a guest writes into without end (its
// serial console log, QEMU's own log) under a size in the launcher pod's
// emptyDir: a guest that prints forever must not fill the node's disk.
//
// The writer (QEMU, which libvirt opened the file for with O_APPEND) never
// cooperates: it keeps its descriptor and appends. So a file is watched,
// and once it has passed its bound its last bytes are copied to the file's
// single older generation (NAME.1) and the file is truncated to nothing,
// logrotate's "copytruncate": appends then start again at offset 0. What
// the guest writes between the copy and the truncation is lost; what stays
// on disk is at most twice the bound plus what the guest writes in one
// interval of the watch.
package logrotation
