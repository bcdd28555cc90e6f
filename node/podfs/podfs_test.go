package podfs

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The attack tests play a tenant who controls every name below a pod's
// directory: each one must end in a clear error, read nothing from outside
// the directory and allocate little, whatever the file is.

const podUID = "0b3a1f7e-5c7d-4d8e-9f00-123456789abc"

// secret is the content of a file outside the pod's directory.
const secret = "root:$6$secret-hash:19000:0:99999:7:::"

// maxAlloc is what one refused access may allocate: far below what reading
// any of the attack files would.
const maxAlloc = 1 << 20

// fixture is a kubelet root with one pod's private directory.
type fixture struct {
	pods Pods
	dir  Dir
	// outside is a directory beside the kubelet root, holding secret.
	outside string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{pods: Pods{KubeletRoot: filepath.Join(base, "kubelet"), LauncherUID: int64(os.Getuid())}, outside: filepath.Join(base, "host")}
	f.dir = f.pods.PrivateDir(podUID)
	for _, d := range []string{f.dir.String(), filepath.Join(f.dir.String(), "sockets"), f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.outside, "shadow"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// path is name's host path in the pod's directory.
func (f *fixture) path(name string) string { return filepath.Join(f.dir.String(), name) }

func (f *fixture) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(f.path(name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.RemoveAll(f.path(name)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, f.path(name)); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) fifo(t *testing.T, name string) {
	t.Helper()
	if err := unix.Mkfifo(f.path(name), 0o666); err != nil {
		t.Fatal(err)
	}
}

// sparse makes name a size-byte file of holes: its size is what the
// attack claims, it costs no disk.
func (f *fixture) sparse(t *testing.T, name string, size int64) {
	t.Helper()
	fh, err := os.Create(f.path(name))
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

// bounded runs fn within a deadline (a FIFO must not block it) and fails
// when it allocated more than maxAlloc.
func bounded(t *testing.T, fn func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the access blocked for 10s")
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > maxAlloc {
		t.Errorf("the access allocated %d bytes, more than %d", n, maxAlloc)
	}
}

func TestReadFile(t *testing.T) {
	const name, limit = "domain.final.json", 4096
	tests := []struct {
		name    string
		setup   func(*testing.T, *fixture)
		read    string // default: name
		want    string
		wantErr error
	}{
		{name: "regular file", setup: func(t *testing.T, f *fixture) { f.write(t, name, `{"name":"d"}`) }, want: `{"name":"d"}`},
		{name: "at the limit", setup: func(t *testing.T, f *fixture) { f.write(t, name, strings.Repeat("x", limit)) }, want: strings.Repeat("x", limit)},
		{name: "missing", setup: func(*testing.T, *fixture) {}, wantErr: fs.ErrNotExist},
		{name: "pod directory missing", setup: func(t *testing.T, f *fixture) {
			if err := os.RemoveAll(filepath.Join(f.pods.KubeletRoot, "pods")); err != nil {
				t.Fatal(err)
			}
		}, wantErr: fs.ErrNotExist},
		{name: "symlink to /dev/zero", setup: func(t *testing.T, f *fixture) { f.symlink(t, "/dev/zero", name) }, wantErr: ErrWrongType},
		{name: "relative symlink to /dev/zero", setup: func(t *testing.T, f *fixture) {
			f.symlink(t, strings.Repeat("../", 12)+"dev/zero", name)
		}, wantErr: ErrWrongType},
		{name: "symlink to a file outside", setup: func(t *testing.T, f *fixture) {
			f.symlink(t, filepath.Join(f.outside, "shadow"), name)
		}, wantErr: ErrWrongType},
		{name: "FIFO", setup: func(t *testing.T, f *fixture) { f.fifo(t, name) }, wantErr: ErrWrongType},
		{name: "1 GiB sparse file", setup: func(t *testing.T, f *fixture) { f.sparse(t, name, 1<<30) }, wantErr: ErrTooLarge},
		{name: "one byte over the limit", setup: func(t *testing.T, f *fixture) { f.write(t, name, strings.Repeat("x", limit+1)) }, wantErr: ErrTooLarge},
		{name: "directory", setup: func(t *testing.T, f *fixture) {
			if err := os.Mkdir(f.path(name), 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantErr: ErrWrongType},
		{name: "socket", setup: func(t *testing.T, f *fixture) { listen(t, f.path(name)) }, wantErr: ErrWrongType},
		{name: "intermediate directory is a symlink", read: "sub/" + name, setup: func(t *testing.T, f *fixture) {
			if err := os.WriteFile(filepath.Join(f.outside, name), []byte(secret), 0o644); err != nil {
				t.Fatal(err)
			}
			f.symlink(t, f.outside, "sub")
		}, wantErr: ErrUnsafePath},
		{name: "the pod's volume directory is a symlink", setup: func(t *testing.T, f *fixture) {
			if err := os.WriteFile(filepath.Join(f.outside, name), []byte(secret), 0o644); err != nil {
				t.Fatal(err)
			}
			vols := filepath.Dir(f.dir.String())
			if err := os.RemoveAll(vols); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(vols, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(f.outside, f.dir.String()); err != nil {
				t.Fatal(err)
			}
		}, wantErr: ErrUnsafePath},
		{name: "dot-dot", read: "../" + name, setup: func(*testing.T, *fixture) {}, wantErr: ErrUnsafePath},
		{name: "absolute", read: "/etc/shadow", setup: func(*testing.T, *fixture) {}, wantErr: ErrUnsafePath},
	}
	if os.Getuid() == 0 {
		tests = append(tests, struct {
			name    string
			setup   func(*testing.T, *fixture)
			read    string
			want    string
			wantErr error
		}{name: "character device like /dev/zero", setup: func(t *testing.T, f *fixture) {
			if err := unix.Mknod(f.path(name), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
				t.Fatal(err)
			}
		}, wantErr: ErrWrongType})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.setup(t, f)
			read := tt.read
			if read == "" {
				read = name
			}
			var data []byte
			var err error
			bounded(t, func() { data, err = f.dir.ReadFile(read, limit) })
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ReadFile = %d bytes, %v; want %v", len(data), err, tt.wantErr)
				}
				if data != nil {
					t.Errorf("ReadFile returned %d bytes with its error", len(data))
				}
				if strings.Contains(err.Error(), "secret-hash") {
					t.Errorf("the error carries the outside file's content: %v", err)
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil || string(data) != tt.want {
				t.Fatalf("ReadFile = %q, %v; want %q", data, err, tt.want)
			}
		})
	}
}

func TestBadPodUID(t *testing.T) {
	f := newFixture(t)
	for _, uid := range []string{"..", "../" + podUID, "", "a/b"} {
		_, err := f.pods.PrivateDir(uid).ReadFile("domain.final.json", 4096)
		if !errors.Is(err, ErrUnsafePath) {
			t.Errorf("pod uid %q: %v, want %v", uid, err, ErrUnsafePath)
		}
	}
	if _, err := (Dir{}).ReadFile("x", 1); err == nil {
		t.Error("the zero Dir read a file")
	}
}

func TestDial(t *testing.T) {
	const name = "sockets/launcher.sock"
	uid := int64(os.Getuid())
	tests := []struct {
		name        string
		launcherUID int64
		setup       func(*testing.T, *fixture)
		wantErr     error
	}{
		{name: "launcher socket", launcherUID: uid, setup: func(t *testing.T, f *fixture) { listen(t, f.path(name)) }},
		{name: "served by another uid than the launchers'", launcherUID: uid + 1,
			setup: func(t *testing.T, f *fixture) { listen(t, f.path(name)) }, wantErr: ErrWrongPeer},
		{name: "symlink to a socket outside", launcherUID: uid, setup: func(t *testing.T, f *fixture) {
			listen(t, filepath.Join(f.outside, "containerd.sock"))
			f.symlink(t, filepath.Join(f.outside, "containerd.sock"), name)
		}, wantErr: ErrWrongType},
		{name: "socket directory is a symlink", launcherUID: uid, setup: func(t *testing.T, f *fixture) {
			listen(t, filepath.Join(f.outside, "launcher.sock"))
			f.symlink(t, f.outside, "sockets")
		}, wantErr: ErrUnsafePath},
		{name: "FIFO", launcherUID: uid, setup: func(t *testing.T, f *fixture) { f.fifo(t, name) }, wantErr: ErrWrongType},
		{name: "regular file", launcherUID: uid, setup: func(t *testing.T, f *fixture) { f.write(t, name, "x") }, wantErr: ErrWrongType},
		{name: "1 GiB sparse file", launcherUID: uid, setup: func(t *testing.T, f *fixture) { f.sparse(t, name, 1<<30) }, wantErr: ErrWrongType},
		{name: "missing", launcherUID: uid, setup: func(*testing.T, *fixture) {}, wantErr: fs.ErrNotExist},
		{name: "no listener", launcherUID: uid, setup: func(t *testing.T, f *fixture) {
			listen(t, f.path(name)).Close()
		}, wantErr: syscall.ECONNREFUSED},
	}
	if uid == 0 {
		tests = append(tests, []struct {
			name        string
			launcherUID int64
			setup       func(*testing.T, *fixture)
			wantErr     error
		}{
			{name: "served by root, launcher uid unknown", launcherUID: AnyLauncherUID,
				setup: func(t *testing.T, f *fixture) { listen(t, f.path(name)) }, wantErr: ErrWrongPeer},
			{name: "served by the launchers' uid in another process", launcherUID: 107,
				setup: func(t *testing.T, f *fixture) { listenAs(t, f.path(name), 107) }},
			{name: "served by the launchers' uid, launcher uid unknown", launcherUID: AnyLauncherUID,
				setup: func(t *testing.T, f *fixture) { listenAs(t, f.path(name), 107) }},
			{name: "served by another uid in another process", launcherUID: 107,
				setup: func(t *testing.T, f *fixture) { listenAs(t, f.path(name), 4242) }, wantErr: ErrWrongPeer},
			{name: "bound by one uid, served by another, launcher uid unknown", launcherUID: AnyLauncherUID,
				setup: func(t *testing.T, f *fixture) {
					listenAs(t, f.path(name), 4242)
					if err := os.Lchown(f.path(name), 107, 107); err != nil {
						t.Fatal(err)
					}
				}, wantErr: ErrWrongPeer},
			{name: "symlink to a root socket outside", launcherUID: AnyLauncherUID, setup: func(t *testing.T, f *fixture) {
				listen(t, filepath.Join(f.outside, "containerd.sock"))
				f.symlink(t, filepath.Join(f.outside, "containerd.sock"), name)
			}, wantErr: ErrWrongType},
		}...)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.pods.LauncherUID = tt.launcherUID
			f.dir = f.pods.PrivateDir(podUID)
			tt.setup(t, f)
			var conn *Conn
			var err error
			bounded(t, func() { conn, err = f.dir.Dial(t.Context(), name) })
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Dial = %v; want %v", err, tt.wantErr)
				}
				if conn != nil {
					t.Error("Dial returned a connection with its error")
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("Dial (%d-byte path): %v", len(f.path(name)), err)
			}
			defer conn.Close()
			if conn.Peer.PID <= 0 || (tt.launcherUID >= 0 && int64(conn.Peer.UID) != tt.launcherUID) {
				t.Errorf("peer = %+v, want a PID and uid %d", conn.Peer, tt.launcherUID)
			}
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

// TestLongPath: a pod's socket path is longer than a socket address may
// be; Dial reaches it all the same.
func TestLongPath(t *testing.T) {
	f := newFixture(t)
	name := filepath.Join(strings.Repeat("d", 60), "launcher.sock")
	if err := os.MkdirAll(filepath.Dir(f.path(name)), 0o755); err != nil {
		t.Fatal(err)
	}
	listen(t, f.path(name))
	if len(f.path(name)) <= 108 {
		t.Fatalf("the path is only %d bytes", len(f.path(name)))
	}
	conn, err := f.dir.Dial(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
}

// listen serves an echo on a unix socket at path in this process. It binds
// through the directory, as the path may be longer than a socket address;
// closing the listener leaves the socket file.
func listen(t *testing.T, path string) *net.UnixListener {
	t.Helper()
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Net: "unix", Name: "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + filepath.Base(path)})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	t.Cleanup(func() { ln.Close() })
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
	return ln
}

// listenAs serves an echo on a unix socket at path from a child process
// running as uid (and gid) uid, as a launcher or another tenant's process
// would. It needs root.
func listenAs(t *testing.T, path string, uid int) {
	t.Helper()
	dir := filepath.Dir(path)
	// The child binds relative to its working directory, so only this
	// directory needs to let it in.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), listenEnv+"="+filepath.Base(path)+":"+strconv.Itoa(uid))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the listener as uid %d did not start: %q, %v", uid, line, err)
	}
}

// listenEnv makes the test binary a listener (listenAs): name:uid.
const listenEnv = "PODFS_TEST_LISTEN"

func TestMain(m *testing.M) {
	if v := os.Getenv(listenEnv); v != "" {
		serveAs(v)
		return
	}
	os.Exit(m.Run())
}

// serveAs drops to the uid, listens at name in the working directory, says
// ready and echoes until stdin closes.
func serveAs(v string) {
	name, uidStr, _ := strings.Cut(v, ":")
	uid, err := strconv.Atoi(uidStr)
	if err == nil {
		err = syscall.Setgid(uid)
	}
	if err == nil {
		err = syscall.Setuid(uid)
	}
	if err != nil {
		os.Stderr.WriteString("drop to uid " + uidStr + ": " + err.Error() + "\n")
		os.Exit(1)
	}
	ln, err := net.Listen("unix", name)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
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
	os.Stdout.WriteString("ready\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	ln.Close()
}

func TestPodUIDs(t *testing.T) {
	root := t.TempDir()
	p := Pods{KubeletRoot: root, LauncherUID: AnyLauncherUID}
	if uids, err := p.PodUIDs(); err != nil || len(uids) != 0 {
		t.Fatalf("no pods/: %v, %v; want none and no error", uids, err)
	}
	pods := filepath.Join(root, "pods")
	outside := t.TempDir()
	for _, d := range []string{filepath.Join(pods, "uid-a"), filepath.Join(pods, "uid-b"), filepath.Join(outside, "uid-x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pods, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "uid-x"), filepath.Join(pods, "uid-link")); err != nil {
		t.Fatal(err)
	}
	uids, err := p.PodUIDs()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(uids)
	if want := []string{"uid-a", "uid-b"}; !slices.Equal(uids, want) {
		t.Errorf("PodUIDs = %v, want %v (directories only, no symlink)", uids, want)
	}

	// pods/ itself a symlink: refused, not followed.
	linked := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(linked, "pods")); err != nil {
		t.Fatal(err)
	}
	if uids, err := (Pods{KubeletRoot: linked}).PodUIDs(); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("pods/ as a symlink: %v, %v; want ErrUnsafePath", uids, err)
	}
}
