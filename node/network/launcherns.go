package network

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/vishvananda/netns"

	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
)

// Launcher is a launcher process as the node sees it.
type Launcher struct {
	// PID in the node's PID namespace.
	PID   int
	Owner Owner
}

// FindLauncher identifies the process serving the launcher socket in a
// launcher pod's private directory by the socket's peer credentials: the
// kernel reports the listener's PID, UID and GID, the PID translated into
// the caller's PID namespace (the node's: virt-handler runs with hostPID),
// whatever the pod's own is.
//
// The network namespace of that PID is configured next, so the peer must be
// a launcher: podfs refuses a socket that is not the pod's own (a symlink to
// the container runtime's socket, say) and a peer that does not run as the
// launchers' uid (root, whose PID would be the host's namespace).
func FindLauncher(ctx context.Context, privateDir podfs.Dir) (Launcher, error) {
	conn, err := privateDir.Dial(ctx, filepath.Join(layout.SocketDirName, layout.LauncherSocketName))
	if err != nil {
		return Launcher{}, err
	}
	defer conn.Close()
	if conn.Peer.PID <= 0 {
		return Launcher{}, fmt.Errorf("the launcher in %s is not in this PID namespace: virt-handler needs hostPID", privateDir)
	}
	return Launcher{PID: conn.Peer.PID, Owner: Owner{UID: conn.Peer.UID, GID: conn.Peer.GID}}, nil
}

// NetNS opens the network namespace of the launcher (of its pod). The
// caller closes it.
func (l Launcher) NetNS() (netns.NsHandle, error) {
	ns, err := netns.GetFromPid(l.PID)
	if err != nil {
		return netns.None(), fmt.Errorf("open the network namespace of launcher pid %d: %w", l.PID, err)
	}
	return ns, nil
}
