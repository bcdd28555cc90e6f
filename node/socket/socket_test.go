package socket

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// longDir is a directory below t.TempDir whose socket path is longer than
// a unix socket address may be, like a launcher's under the kubelet's root.
func longDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pods", "0b3a1f7e-5c7d-4d8e-9f00-123456789abc", "volumes",
		"kubernetes.io~empty-dir", "virt-private", strings.Repeat("d", 40), "sockets")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestListen: a socket at a path longer than a socket address is served,
// and reached through its directory as node/podfs reaches it.
func TestListen(t *testing.T) {
	dir := longDir(t)
	path := filepath.Join(dir, "launcher.sock")
	serveEcho(t, path)
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	conn, err := net.Dial("unix", fmt.Sprintf("/proc/self/fd/%d/launcher.sock", d.Fd()))
	if err != nil {
		t.Fatalf("dial a %d-byte path through its directory: %v", len(path), err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo = %q, %v; want ping", buf, err)
	}
	if _, err := Listen(path); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("a second Listen at the same path = %v, want %v", err, syscall.EADDRINUSE)
	}
}

// TestLongPathNeedsTheDirectory proves the test's premise: the path cannot
// be connected to directly.
func TestLongPathNeedsTheDirectory(t *testing.T) {
	path := filepath.Join(longDir(t), "launcher.sock")
	if len(path) <= 108 {
		t.Fatalf("test path is only %d bytes", len(path))
	}
	serveEcho(t, path)
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		t.Fatalf("a direct connect to a %d-byte path worked; the test no longer shows why Listen binds through the directory", len(path))
	}
}

// serveEcho listens on path and echoes.
func serveEcho(t *testing.T, path string) {
	t.Helper()
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ln.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("socket %s left after Close: %v", path, err)
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
}
