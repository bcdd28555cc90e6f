// Package hostpath prepares the node's directories that launcher pods mount
// as hostPath volumes and must write to.
//
// The kubelet creates a missing hostPath of type DirectoryOrCreate owned by
// root with mode 0755, and the launchers run as an unprivileged user: they
// could read such a directory but never write it. virt-handler runs on every
// node as root before any launcher can be scheduled there (the node becomes
// schedulable only once the handler is ready), so it hands the directories
// to the launchers' user at start. Today that is the node's shared QEMU
// capabilities cache (launcher/layout.CapabilitiesCacheHostPath).
//
// It changes only the directory itself, never what is inside: the contents
// are the launchers' to write, and following their entries as root would let
// a launcher redirect the handler's chown through a symlink.
//
// It imports nothing of the platform.
package hostpath
