package network

import (
	"context"
	"fmt"
	"net"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"kubevirt.dev/virt/node/socket"
)

// Launcher is a launcher process as the node sees it.
type Launcher struct {
	// PID in the node's PID namespace.
	PID   int
	Owner Owner
}

// FindLauncher identifies the process serving the launcher socket at path
// by the socket's peer credentials: the kernel reports the listener's PID,
// UID and GID, the PID translated into the caller's PID namespace (the
// node's: virt-handler runs with hostPID), whatever the pod's own is.
func FindLauncher(ctx context.Context, path string) (Launcher, error) {
	conn, err := socket.Dial(ctx, path)
	if err != nil {
		return Launcher{}, err
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return Launcher{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Launcher{}, err
	}
	if credErr != nil {
		return Launcher{}, fmt.Errorf("peer credentials of %s: %w", path, credErr)
	}
	if cred.Pid <= 0 {
		return Launcher{}, fmt.Errorf("the launcher behind %s is not in this PID namespace: virt-handler needs hostPID", path)
	}
	return Launcher{PID: int(cred.Pid), Owner: Owner{UID: cred.Uid, GID: cred.Gid}}, nil
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
