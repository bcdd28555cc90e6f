package network

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vishvananda/netns"

	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
	"kubevirt.dev/virt/node/socket"
)

const podUID = "0b3a1f7e-5c7d-4d8e-9f00-123456789abc"

// serve listens on path and closes every connection.
func serve(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := socket.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// The socket's peer credentials name the process that listens: here, this
// test's; its network namespace is ours.
func TestFindLauncher(t *testing.T) {
	pods := podfs.Pods{KubeletRoot: t.TempDir(), LauncherUID: int64(os.Getuid())}
	dir := pods.PrivateDir(podUID)
	serve(t, layout.LauncherSocket(dir.String()))
	l, err := FindLauncher(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.PID != os.Getpid() || l.Owner.UID != uint32(os.Getuid()) || l.Owner.GID != uint32(os.Getgid()) {
		t.Errorf("FindLauncher = %+v, want pid %d uid %d gid %d", l, os.Getpid(), os.Getuid(), os.Getgid())
	}
	ns, err := l.NetNS()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	self, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	if !ns.Equal(self) {
		t.Errorf("the launcher's namespace %s is not this process's %s", ns, self)
	}
	if _, err := FindLauncher(t.Context(), pods.PrivateDir("other-pod")); err == nil {
		t.Error("FindLauncher of a socket nobody serves: no error")
	}
}

// TestFindLauncherRefusesHostSockets: a tenant who points the launcher
// socket at a host daemon's must not have the handler take that daemon's
// PID (and network namespace) for the launcher's.
func TestFindLauncherRefusesHostSockets(t *testing.T) {
	root := t.TempDir()
	host := filepath.Join(root, "run", "containerd", "containerd.sock")
	serve(t, host)
	pods := podfs.Pods{KubeletRoot: filepath.Join(root, "kubelet"), LauncherUID: int64(os.Getuid())}
	dir := pods.PrivateDir(podUID)
	sock := layout.LauncherSocket(dir.String())
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, sock); err != nil {
		t.Fatal(err)
	}
	if l, err := FindLauncher(t.Context(), dir); !errors.Is(err, podfs.ErrWrongType) {
		t.Errorf("FindLauncher through a symlink to a host socket = %+v, %v; want %v", l, err, podfs.ErrWrongType)
	}

	// The pod's own socket, but served by another uid than the launchers'
	// (root, when the tests run as root).
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	serve(t, sock)
	other := podfs.Pods{KubeletRoot: pods.KubeletRoot, LauncherUID: int64(os.Getuid()) + 1}
	if l, err := FindLauncher(t.Context(), other.PrivateDir(podUID)); !errors.Is(err, podfs.ErrWrongPeer) {
		t.Errorf("FindLauncher of a socket served by uid %d, launchers %d = %+v, %v; want %v", os.Getuid(), other.LauncherUID, l, err, podfs.ErrWrongPeer)
	}
}
