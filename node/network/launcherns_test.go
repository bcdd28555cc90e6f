package network

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/vishvananda/netns"
)

// The socket's peer credentials name the process that listens: here, this
// test's; its network namespace is ours.
func TestFindLauncher(t *testing.T) {
	path := filepath.Join(t.TempDir(), "launcher.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	l, err := FindLauncher(t.Context(), path)
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
	if _, err := FindLauncher(t.Context(), filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Error("FindLauncher of a socket nobody serves: no error")
	}
}
