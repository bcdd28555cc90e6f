// Package podfs is the only way virt-handler touches the files of a
// launcher pod: it reads, and dials the sockets in, the pod's volumes on
// the host, below the kubelet's root directory.
//
// Everything below a pod's directory is written by the tenant: the launcher
// runs as the tenant's uid, anyone with exec into the pod runs as that uid,
// and the containers of containerDisk volumes share the uid and the PID
// namespace. virt-handler is root on the node, so a name it opens there is
// a name the tenant chose. A symlink would have it read /dev/zero until it
// runs out of memory, read the host's /etc/shadow, or dial the container
// runtime's socket and take its peer's PID for a launcher's (and configure
// the host's network namespace). podfs closes that as runc's securejoin and
// KubeVirt's safepath do, with a handle, never a joined path string:
//
//   - a pod's directory is opened from the kubelet's root (the node's own,
//     trusted) with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
//     RESOLVE_NO_MAGICLINKS), so no component of the path may be a symlink
//     and nothing resolves outside the root;
//
//   - a file is opened O_PATH|O_NOFOLLOW first, its type checked with
//     fstat, and only then reopened through /proc/self/fd/N: a FIFO, a
//     device or a symlink is refused without being opened at all, and
//     what was checked is what is read;
//
//   - reads are capped: a file bigger than its cap is refused before a byte
//     is read, and a file that grows while read is cut at the cap and
//     refused;
//
//   - a socket is connected through /proc/self/fd/N of its checked O_PATH
//     descriptor, and its peer's credentials (SO_PEERCRED) must be the
//     launchers' uid (Pods.LauncherUID), never root.
//
//   - a socket virt-handler serves in a pod (Listen: a live migration's
//     source proxy) is bound through /proc/self/fd/N/name of its checked
//     directory's descriptor, handed to the launchers' uid through the
//     descriptor of the socket it just made, removed on Close through the
//     same directory descriptor, and accepts only launchers as peers.
//
//   - a socket a launcher's QEMU made in one pod is renamed into another
//     pod of the same VMI (MoveSocket: a live migration within a node
//     joins the target's incoming socket to the source's path) through
//     both checked directories' descriptors, only when it is a socket of
//     the launchers' uid, and checked again after the rename; WaitSocket
//     watches for it with inotify on the checked directory.
//
// virt-handler creates, chowns and removes nothing else in pods; when it
// does, it does it here. internal/boundary's TestNodeFileAccess fails when
// a package under node/ other than the few it allows with a reason touches
// the file system by path.
//
// podfs imports nothing of the platform but launcher/layout.
package podfs
