package socket

import (
	"errors"
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

func TestDial(t *testing.T) {
	dir := longDir(t)
	tests := []struct {
		name    string
		path    string
		listen  bool
		wantErr error
	}{
		{name: "path longer than a socket address", path: filepath.Join(dir, "launcher.sock"), listen: true},
		{name: "short path", path: filepath.Join(t.TempDir(), "s.sock"), listen: true},
		{name: "no listener", path: filepath.Join(dir, "gone.sock"), wantErr: syscall.ENOENT},
		{name: "no directory", path: filepath.Join(dir, "missing", "launcher.sock"), wantErr: syscall.ENOENT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.listen {
				serveEcho(t, tt.path)
			}
			conn, err := Dial(t.Context(), tt.path)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Dial(%s) = %v, want %v", tt.path, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dial(%d-byte path): %v", len(tt.path), err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4)
			if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "ping" {
				t.Fatalf("echo = %q, %v; want ping", buf, err)
			}
		})
	}
}

// TestLongPathNeedsDial proves the test's premise: the path cannot be
// connected to directly.
func TestLongPathNeedsDial(t *testing.T) {
	path := filepath.Join(longDir(t), "launcher.sock")
	if len(path) <= 108 {
		t.Fatalf("test path is only %d bytes", len(path))
	}
	serveEcho(t, path)
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		t.Fatalf("a direct connect to a %d-byte path worked; the test no longer shows why Dial exists", len(path))
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
