package podfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// twoPods is a kubelet root with two pods' private directories, each with
// a "mig" directory: a migration's source (a) and target (b) within one
// node.
func twoPods(t *testing.T) (a, b Dir) {
	t.Helper()
	p := Pods{KubeletRoot: filepath.Join(t.TempDir(), "kubelet"), LauncherUID: int64(os.Getuid())}
	a, b = p.PrivateDir(podUID), p.PrivateDir("7c1d2e3f-0000-4000-8000-000000000002")
	for _, d := range []Dir{a, b} {
		if err := os.MkdirAll(filepath.Join(d.String(), "mig"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func TestMoveSocket(t *testing.T) {
	source, target := twoPods(t)
	// The source's path holds the proxy's socket, the target's QEMU
	// listens on its own: the move replaces the first with the second.
	relay, err := source.Listen("mig", "qemu")
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	listen(t, filepath.Join(target.String(), "mig", "qemu"))
	if err := target.MoveSocket("mig", "qemu", source); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(target.String(), "mig", "qemu")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the target's name is still there after the move: %v", err)
	}
	// A plain connect at the source's path reaches the target's listener.
	conn, err := dialPath(t, filepath.Join(source.String(), "mig", "qemu"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	conn.(*net.UnixConn).CloseWrite()
	if got, err := io.ReadAll(conn); err != nil || string(got) != "ping" {
		t.Fatalf("echo through the moved socket: %q, %v", got, err)
	}
}

func TestMoveSocketAttacks(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"a regular file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symlink to a socket", func(t *testing.T, path string) {
			elsewhere := filepath.Join(t.TempDir(), "s")
			listen(t, elsewhere)
			if err := os.Symlink(elsewhere, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			source, target := twoPods(t)
			relay, err := source.Listen("mig", "qemu")
			if err != nil {
				t.Fatal(err)
			}
			defer relay.Close()
			tc.make(t, filepath.Join(target.String(), "mig", "qemu"))
			if err := target.MoveSocket("mig", "qemu", source); !errors.Is(err, ErrWrongType) {
				t.Fatalf("MoveSocket of %s = %v, want ErrWrongType", tc.name, err)
			}
			// Nothing moved: the proxy's socket is where it was.
			if fi, err := os.Lstat(filepath.Join(source.String(), "mig", "qemu")); err != nil || fi.Mode().Type() != fs.ModeSocket {
				t.Errorf("the source's socket after the refused move: %v, %v", fi, err)
			}
		})
	}

	t.Run("the migration directory is a symlink", func(t *testing.T) {
		source, target := twoPods(t)
		mig := filepath.Join(target.String(), "mig")
		if err := os.Remove(mig); err != nil {
			t.Fatal(err)
		}
		elsewhere := t.TempDir()
		listen(t, filepath.Join(elsewhere, "qemu"))
		if err := os.Symlink(elsewhere, mig); err != nil {
			t.Fatal(err)
		}
		if err := target.MoveSocket("mig", "qemu", source); !errors.Is(err, ErrUnsafePath) {
			t.Fatalf("MoveSocket through a symlinked directory = %v, want ErrUnsafePath", err)
		}
		if _, err := os.Lstat(filepath.Join(elsewhere, "qemu")); err != nil {
			t.Errorf("the socket outside the pod was touched: %v", err)
		}
	})

	t.Run("a socket of another uid", func(t *testing.T) {
		source, target := twoPods(t)
		target.pods.LauncherUID = int64(os.Getuid()) + 1
		listen(t, filepath.Join(target.String(), "mig", "qemu"))
		if err := target.MoveSocket("mig", "qemu", source); !errors.Is(err, ErrWrongPeer) {
			t.Fatalf("MoveSocket of a socket the launchers' uid does not own = %v, want ErrWrongPeer", err)
		}
	})
}

func TestWaitSocket(t *testing.T) {
	_, target := twoPods(t)
	path := filepath.Join(target.String(), "mig", "qemu")

	// Other names, and a file of the name that is no socket, do not end
	// the wait; the deadline does.
	if err := os.WriteFile(filepath.Join(target.String(), "mig", "other"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := target.WaitSocket(ctx, "mig", "qemu"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitSocket without a socket = %v, want the deadline", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}

	// A socket made while it waits ends the wait.
	done := make(chan error, 1)
	go func() { done <- target.WaitSocket(t.Context(), "mig", "qemu") }()
	time.Sleep(50 * time.Millisecond) // let the watch start: either order must work
	listen(t, path)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitSocket did not see the socket made while it waited")
	}

	// One that is there already ends it at once.
	if err := target.WaitSocket(t.Context(), "mig", "qemu"); err != nil {
		t.Fatal(err)
	}
}
