package migrationproxy

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kubevirt.dev/virt/internal/migrationcert"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
	"kubevirt.dev/virt/node/socket"
)

// ca is a test certificate authority.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(t *testing.T, name string) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &ca{cert: c, key: key}
}

// identity is node's migration identity from this CA, as the signer issues
// it: CN system:virt-handler-migration:NODE, DNS name NODE, client and
// server auth.
func (c *ca) identity(t *testing.T, node string) Identity {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: migrationcert.CommonName(node)},
		DNSNames:  []string{node},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c.cert)
	leaf := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return Identity{
		Certificate: func() *tls.Certificate { return leaf },
		CAs:         func() (*x509.CertPool, error) { return pool, nil },
	}
}

const (
	sourceUID = "11111111-1111-1111-1111-111111111111"
	targetUID = "22222222-2222-2222-2222-222222222222"
)

// fixture is a kubelet root with a source and a target pod, and the target
// pod's "libvirtd", "QEMU" and "NBD server": each answers "<kind>:" and
// echoes what it receives until its client ends, then ends too.
type fixture struct {
	pods           podfs.Pods
	source, target podfs.Dir
	// accepted counts the connections the target pod's servers accepted.
	accepted atomic.Int32
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{pods: podfs.Pods{KubeletRoot: t.TempDir(), LauncherUID: int64(os.Geteuid())}}
	f.source, f.target = f.pods.PrivateDir(sourceUID), f.pods.PrivateDir(targetUID)
	for _, d := range []podfs.Dir{f.source, f.target} {
		if err := os.MkdirAll(d.String(), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(f.target.String(), layout.MigrationDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds {
		ln, err := socket.Listen(filepath.Join(f.target.String(), layout.MigrationDirName, k.Socket()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				c := conn.(*net.UnixConn)
				f.accepted.Add(1)
				go func() {
					defer c.Close()
					if _, err := c.Write([]byte(k.String() + ":")); err != nil {
						return
					}
					_, _ = io.Copy(c, c)
					_ = c.CloseWrite()
				}()
			}
		}()
	}
	return f
}

// dialSource connects to the source pod's socket of kind, as the source
// launcher's libvirt or QEMU does.
func (f *fixture) dialSource(t *testing.T, k Kind) *net.UnixConn {
	t.Helper()
	d, err := os.Open(filepath.Join(f.source.String(), layout.MigrationDirName))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := net.Dial("unix", "/proc/self/fd/"+strconv.Itoa(int(d.Fd()))+"/"+k.Socket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return c.(*net.UnixConn)
}

// start runs a target for sourceNode with the target's identity and a
// source towards targetNode with the source's identity.
func (f *fixture) start(t *testing.T, sourceID, targetID Identity, sourceNode, targetNode string) (*Source, *Target) {
	t.Helper()
	ctx := t.Context()
	tgt, err := ListenTarget(ctx, TargetConfig{Address: "127.0.0.1", Pod: f.target, SourceNode: sourceNode, Identity: targetID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tgt.Close)
	ports, err := ParsePorts(Ports(tgt.Ports()))
	if err != nil {
		t.Fatal(err)
	}
	src, err := ListenSource(ctx, SourceConfig{Pod: f.source, TargetAddress: "127.0.0.1", TargetPorts: ports, TargetNode: targetNode, Identity: sourceID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src, tgt
}

// startWithinNode runs a target and a source of a migration within one
// node (SourceConfig.Local).
func (f *fixture) startWithinNode(t *testing.T) (*Source, *Target) {
	t.Helper()
	authority := newCA(t, "migration-ca")
	tgt, err := ListenTarget(t.Context(), TargetConfig{Address: "127.0.0.1", Pod: f.target, SourceNode: "node-a", Identity: authority.identity(t, "node-a")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tgt.Close)
	src, err := ListenSource(t.Context(), SourceConfig{Pod: f.source, Local: tgt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src, tgt
}

// forwardsEveryKind checks that every kind reaches its own socket in the
// target pod, with half-close: the client's end of stream makes the server
// end.
func (f *fixture) forwardsEveryKind(t *testing.T) {
	t.Helper()
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for _, k := range Kinds {
		c := f.dialSource(t, k)
		go func() {
			_, _ = c.Write(payload)
			_ = c.CloseWrite()
		}()
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		want := append([]byte(k.String()+":"), payload...)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: got %d bytes (%q...), want %d", k, len(got), got[:min(len(got), 16)], len(want))
		}
	}
}

func TestForward(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFixture(t)
	authority := newCA(t, "migration-ca")
	src, tgt := f.start(t, authority.identity(t, "node-a"), authority.identity(t, "node-b"), "node-a", "node-b")

	f.forwardsEveryKind(t)

	// Close ends open connections, removes the sockets and leaves no
	// goroutine behind.
	open := f.dialSource(t, Libvirt)
	if _, err := io.ReadFull(open, make([]byte, len("libvirt:"))); err != nil {
		t.Fatal(err)
	}
	src.Close()
	tgt.Close()
	if _, err := open.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("an open connection after Close: want EOF, got %v", err)
	}
	for _, k := range Kinds {
		if _, err := os.Lstat(filepath.Join(f.source.String(), layout.MigrationDirName, k.Socket())); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the source pod's %s socket outlived Close: %v", k, err)
		}
	}
	open.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+len(Kinds)+2 { // the target pod's servers
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d before, %d after Close\n%s", base, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDrain: once the migration ended on the target, an open connection
// still carries both ways until its ends close it (libvirt's last answers
// to the source), no new connection reaches the target pod, and Drain
// returns once the open one ended.
func TestDrain(t *testing.T) {
	f := newFixture(t)
	authority := newCA(t, "migration-ca")
	_, tgt := f.start(t, authority.identity(t, "node-a"), authority.identity(t, "node-b"), "node-a", "node-b")
	open, drained := f.drainAroundOpen(t, tgt.Drain)
	// Drain closes the listeners first; then a new connection fails.
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		before := f.accepted.Load()
		c := f.dialSource(t, QEMU)
		_, err := io.ReadFull(c, make([]byte, 1))
		return err != nil && f.accepted.Load() == before, nil
	})
	if err != nil {
		t.Fatalf("a new connection after Drain: %v", err)
	}
	echoes(t, open, "finish")
	select {
	case <-drained:
		t.Fatal("Drain returned while a connection was open")
	default:
	}
	endAndWait(t, open, drained)
}

// TestSourceDrain: the source side's Drain removes its sockets at once and
// carries an open connection until its ends close it.
func TestSourceDrain(t *testing.T) {
	f := newFixture(t)
	authority := newCA(t, "migration-ca")
	src, _ := f.start(t, authority.identity(t, "node-a"), authority.identity(t, "node-b"), "node-a", "node-b")
	open, drained := f.drainAroundOpen(t, src.Drain)
	sock := filepath.Join(f.source.String(), layout.MigrationDirName, Libvirt.Socket())
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Lstat(sock)
		return errors.Is(err, os.ErrNotExist), nil
	})
	if err != nil {
		t.Fatalf("the source pod's socket during Drain: %v", err)
	}
	echoes(t, open, "confirm")
	endAndWait(t, open, drained)
}

// drainAroundOpen opens a libvirt connection through the proxies, then runs
// drain (a minute's grace) in the background; drained closes when it
// returned.
func (f *fixture) drainAroundOpen(t *testing.T, drain func(time.Duration)) (open *net.UnixConn, drained <-chan struct{}) {
	t.Helper()
	open = f.dialSource(t, Libvirt)
	if _, err := io.ReadFull(open, make([]byte, len("libvirt:"))); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		drain(time.Minute)
		close(done)
	}()
	return open, done
}

// echoes checks that open still carries msg to the target pod and back.
func echoes(t *testing.T, open *net.UnixConn, msg string) {
	t.Helper()
	if _, err := open.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(open, got); err != nil || string(got) != msg {
		t.Fatalf("the open connection during Drain: %q, %v", got, err)
	}
}

// endAndWait ends open from this side and waits for Drain to return.
func endAndWait(t *testing.T, open *net.UnixConn, drained <-chan struct{}) {
	t.Helper()
	_ = open.CloseWrite()
	if _, err := io.ReadAll(open); err != nil {
		t.Fatal(err)
	}
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
		t.Fatal("Drain did not return once the open connection ended")
	}
}

// TestRefused: nothing reaches the target pod unless both handlers hold
// the migration CA's certificates of the migration's nodes.
func TestRefused(t *testing.T) {
	authority, other := newCA(t, "migration-ca"), newCA(t, "guest-access-ca")
	tests := []struct {
		name                   string
		sourceID, targetID     Identity
		sourceNode, targetNode string
	}{
		{name: "client is another node's handler", sourceID: authority.identity(t, "node-c"), targetID: authority.identity(t, "node-b"),
			sourceNode: "node-a", targetNode: "node-b"},
		{name: "client certificate of another CA", sourceID: other.identity(t, "node-a"), targetID: authority.identity(t, "node-b"),
			sourceNode: "node-a", targetNode: "node-b"},
		{name: "target is not the target node", sourceID: authority.identity(t, "node-a"), targetID: authority.identity(t, "node-c"),
			sourceNode: "node-a", targetNode: "node-b"},
		{name: "target certificate of another CA", sourceID: authority.identity(t, "node-a"), targetID: other.identity(t, "node-b"),
			sourceNode: "node-a", targetNode: "node-b"},
		{name: "no certificate yet", sourceID: Identity{CAs: authority.identity(t, "x").CAs, Certificate: func() *tls.Certificate { return nil }},
			targetID: authority.identity(t, "node-b"), sourceNode: "node-a", targetNode: "node-b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.start(t, tt.sourceID, tt.targetID, tt.sourceNode, tt.targetNode)
			c := f.dialSource(t, Libvirt)
			_, _ = c.Write([]byte("hello"))
			// Closed unanswered; reset when "hello" was left unread.
			if got, err := io.ReadAll(c); len(got) != 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
				t.Fatalf("want the connection closed unanswered, got %q, %v", got, err)
			}
			if n := f.accepted.Load(); n != 0 {
				t.Fatalf("the target pod accepted %d connections", n)
			}
		})
	}
}

// TestWrongPort: a connection of one kind sent to another kind's port
// fails its handshake (ALPN) instead of reaching the wrong socket.
func TestWrongPort(t *testing.T) {
	f := newFixture(t)
	authority := newCA(t, "migration-ca")
	tgt, err := ListenTarget(t.Context(), TargetConfig{Address: "127.0.0.1", Pod: f.target, SourceNode: "node-a", Identity: authority.identity(t, "node-b")})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	ports := tgt.Ports()
	ports[Libvirt], ports[QEMU] = ports[QEMU], ports[Libvirt]
	src, err := ListenSource(t.Context(), SourceConfig{Pod: f.source, TargetAddress: "127.0.0.1", TargetPorts: ports, TargetNode: "node-b", Identity: authority.identity(t, "node-a")})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c := f.dialSource(t, Libvirt)
	if got, err := io.ReadAll(c); len(got) != 0 || err != nil {
		t.Fatalf("want the connection closed unanswered, got %q, %v", got, err)
	}
	if n := f.accepted.Load(); n != 0 {
		t.Fatalf("the target pod accepted %d connections", n)
	}
}

func TestParsePorts(t *testing.T) {
	if _, err := ParsePorts(map[string]int{"4000": 0, "4001": 49152}); err == nil {
		t.Error("want an error without the block copy's port")
	}
	if _, err := ParsePorts(map[string]int{"4000": 0, "4001": 49152, "x": 49153}); err == nil {
		t.Error("want an error for a port that is not a number")
	}
	got, err := ParsePorts(map[string]int{"4000": 0, "4001": 49152, "4002": 49153})
	if err != nil || got[Libvirt] != 4000 || got[QEMU] != 4001 || got[Block] != 4002 {
		t.Errorf("got %v, %v", got, err)
	}
}

// TestForwardWithinNode: a source whose target is this handler's too
// connects the two pods' sockets itself: every kind reaches its socket in
// the target pod, with no certificate, port or address given, and not
// through the target's TCP listeners.
func TestForwardWithinNode(t *testing.T) {
	f := newFixture(t)
	_, tgt := f.startWithinNode(t)
	f.forwardsEveryKind(t)
	// Nothing went through the target's listeners: closing them now
	// leaves a new connection working.
	tgt.Close()
	c := f.dialSource(t, Libvirt)
	if _, err := io.ReadFull(c, make([]byte, len("libvirt:"))); err != nil {
		t.Fatalf("a connection within the node after the target's listeners closed: %v", err)
	}
}

// TestWithinNodeJoinsQEMUSockets: within a node, once the target pod's
// QEMU listens (its socket appears after the source proxy started, as
// libvirt's incoming migration makes it), its socket replaces the proxy's
// in the source pod: QEMU's streams connect to the target directly. The
// libvirt connection stays relayed.
func TestWithinNodeJoinsQEMUSockets(t *testing.T) {
	f := newFixture(t)
	path := func(d podfs.Dir, k Kind) string {
		return filepath.Join(d.String(), layout.MigrationDirName, k.Socket())
	}
	later := func(k Kind) string { return path(f.target, k) + ".later" }
	inodes := map[Kind]uint64{}
	for _, k := range []Kind{QEMU, Block} {
		var st syscall.Stat_t
		if err := syscall.Lstat(path(f.target, k), &st); err != nil {
			t.Fatal(err)
		}
		inodes[k] = st.Ino
		if err := os.Rename(path(f.target, k), later(k)); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := f.startWithinNode(t)
	// The target's QEMU starts listening.
	for _, k := range []Kind{QEMU, Block} {
		if err := os.Rename(later(k), path(f.target, k)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []Kind{QEMU, Block} {
		err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			var st syscall.Stat_t
			return syscall.Lstat(path(f.source, k), &st) == nil && st.Ino == inodes[k], nil
		})
		if err != nil {
			t.Fatalf("the source pod's %s socket never became the target's: %v", k, err)
		}
		if _, err := os.Lstat(path(f.target, k)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the target pod still has its %s socket's name: %v", k, err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(path(f.target, Libvirt), &st); err != nil {
		t.Errorf("the target's libvirt socket moved: %v", err)
	}
	f.forwardsEveryKind(t)
	// QEMU's stream does not go through the proxy any more: closing the
	// source side, which cuts every connection it relays, leaves it be.
	c := f.dialSource(t, QEMU)
	if _, err := io.ReadFull(c, make([]byte, len("qemu:"))); err != nil {
		t.Fatal(err)
	}
	src.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatalf("QEMU's connection after the source proxy closed: %v", err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatalf("QEMU's connection after the source proxy closed: %v", err)
	}
}
