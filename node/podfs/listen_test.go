package podfs

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestListen(t *testing.T) {
	f := newFixture(t)
	l, err := f.dir.Listen("mig", "qemu")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			_, err = io.Copy(c, c)
			c.Close()
		}
		done <- err
	}()
	// The launcher's side: a plain connect to the path inside the pod.
	conn, err := dialPath(t, f.path("mig/qemu"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	conn.(*net.UnixConn).CloseWrite()
	got, err := io.ReadAll(conn)
	if err != nil || string(got) != "ping" {
		t.Fatalf("echo through the listener: %q, %v", got, err)
	}
	conn.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(f.path("mig/qemu")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the socket outlived Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestListenAttacks(t *testing.T) {
	t.Run("directory is a symlink", func(t *testing.T) {
		f := newFixture(t)
		f.symlink(t, f.outside, "mig")
		if _, err := f.dir.Listen("mig", "qemu"); !errors.Is(err, ErrUnsafePath) {
			t.Fatalf("want ErrUnsafePath, got %v", err)
		}
		if _, err := os.Lstat(filepath.Join(f.outside, "qemu")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a socket was made outside the pod: %v", err)
		}
	})
	t.Run("name is a symlink to a file outside", func(t *testing.T) {
		f := newFixture(t)
		if err := os.Mkdir(f.path("mig"), 0o755); err != nil {
			t.Fatal(err)
		}
		f.symlink(t, filepath.Join(f.outside, "shadow"), "mig/qemu")
		l, err := f.dir.Listen("mig", "qemu")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if data, err := os.ReadFile(filepath.Join(f.outside, "shadow")); err != nil || string(data) != secret {
			t.Fatalf("the file outside was touched: %q, %v", data, err)
		}
		st, err := os.Lstat(f.path("mig/qemu"))
		if err != nil || st.Mode().Type() != fs.ModeSocket {
			t.Fatalf("want a socket in place of the symlink, got %v, %v", st, err)
		}
	})
	t.Run("bad names", func(t *testing.T) {
		f := newFixture(t)
		for _, n := range [][2]string{{"..", "x"}, {"mig", "../x"}, {"a/b", "x"}, {"mig", ""}} {
			if _, err := f.dir.Listen(n[0], n[1]); !errors.Is(err, ErrUnsafePath) {
				t.Errorf("Listen(%q, %q): want ErrUnsafePath, got %v", n[0], n[1], err)
			}
		}
	})
}

// TestListenHandsOver: as root, the socket and the directory Listen made
// belong to the launchers' uid, and a connection from anyone else (root
// here) is closed unanswered.
func TestListenHandsOver(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root to chown; the suite runs as root in CI (make test)")
	}
	f := newFixture(t)
	f.pods.LauncherUID = 107
	f.dir = f.pods.PrivateDir(podUID)
	l, err := f.dir.Listen("mig", "libvirt")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, name := range []string{"mig", "mig/libvirt"} {
		st, err := os.Lstat(f.path(name))
		if err != nil {
			t.Fatal(err)
		}
		if uid := st.Sys().(*syscall.Stat_t).Uid; uid != 107 {
			t.Errorf("%s belongs to uid %d, want 107", name, uid)
		}
	}
	accepted := make(chan struct{})
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
			close(accepted)
		}
	}()
	conn, err := dialPath(t, f.path("mig/libvirt"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := conn.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("root's connection: want it closed (EOF), got %d bytes, %v", n, err)
	}
	select {
	case <-accepted:
		t.Fatal("Accept returned root's connection")
	default:
	}
}

// dialPath connects to the socket at a long path as a launcher would (the
// path relative to its directory).
func dialPath(t *testing.T, path string) (net.Conn, error) {
	t.Helper()
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	return net.Dial("unix", "/proc/self/fd/"+strconv.Itoa(int(dir.Fd()))+"/"+filepath.Base(path))
}
