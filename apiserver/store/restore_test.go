package store

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/snapshot"
	"go.uber.org/zap"

	"kubevirt.dev/virt/apiserver/etcd"
)

// embedded is a data directory of the embedded store, started and stopped
// by the tests as virt-apiserver's pod would be.
type embedded struct {
	t    *testing.T
	opts etcd.Options
}

func newEmbedded(t *testing.T) *embedded {
	root := t.TempDir()
	return &embedded{t: t, opts: etcd.Options{
		DataDir: filepath.Join(root, "etcd"), RestoreDir: filepath.Join(root, "restore"),
		ClientPort: freePort(t), PeerPort: freePort(t),
		RestoreCheckPrefix: GroupPrefix,
	}}
}

// run starts the store, runs f with a client of it, and stops it.
func (e *embedded) run(f func(cli *clientv3.Client, endpoint string)) {
	e.t.Helper()
	s, err := etcd.Start(e.t.Context(), e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	defer s.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ClientURL()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		e.t.Fatal(err)
	}
	defer cli.Close()
	f(cli, s.ClientURL())
}

func (e *embedded) put(cli *clientv3.Client, kv ...string) {
	e.t.Helper()
	for i := 0; i < len(kv); i += 2 {
		if _, err := cli.Put(e.t.Context(), kv[i], kv[i+1]); err != nil {
			e.t.Fatal(err)
		}
	}
}

// snapshotOf saves a snapshot of the running store as etcd streams it.
func (e *embedded) snapshotOf(endpoint string) string {
	e.t.Helper()
	file := filepath.Join(e.t.TempDir(), "backup.db")
	if _, err := snapshot.SaveWithVersion(e.t.Context(), zap.NewNop(), clientv3.Config{Endpoints: []string{endpoint}, Logger: zap.NewNop()}, file); err != nil {
		e.t.Fatal(err)
	}
	return file
}

func (e *embedded) stage(file string) {
	e.t.Helper()
	d, err := fileDigest(file)
	if err != nil {
		e.t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	if err := Stage(f, e.opts.RestoreDir, d.SHA256); err != nil {
		e.t.Fatal(err)
	}
}

func get(t *testing.T, cli *clientv3.Client, key string) (string, int64) {
	t.Helper()
	resp, err := cli.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return "", resp.Header.Revision
	}
	return string(resp.Kvs[0].Value), resp.Header.Revision
}

func TestRestoreStartsFromTheStagedSnapshot(t *testing.T) {
	e := newEmbedded(t)
	vm := GroupPrefix + "virtualmachines/ns/vm"
	var file string
	var snapRev int64
	e.run(func(cli *clientv3.Client, endpoint string) {
		e.put(cli, vm, "before")
		file = e.snapshotOf(endpoint)
		_, snapRev = get(t, cli, vm)
		// Written after the backup: gone after the restore.
		e.put(cli, vm, "after", GroupPrefix+"virtualmachines/ns/later", "x")
	})
	e.stage(file)
	e.run(func(cli *clientv3.Client, _ string) {
		if v, rev := get(t, cli, vm); v != "before" || rev < snapRev+etcd.RevisionBump {
			t.Errorf("restored %s = %q at revision %d, want %q at %d or more", vm, v, rev, "before", snapRev+etcd.RevisionBump)
		}
		if v, _ := get(t, cli, GroupPrefix+"virtualmachines/ns/later"); v != "" {
			t.Errorf("a key written after the snapshot survived the restore")
		}
	})
	r, err := etcd.LastRestore(e.opts.RestoreDir)
	if err != nil || r.Error != "" || r.Previous == "" || r.Revision < snapRev+etcd.RevisionBump {
		t.Fatalf("restore result %+v (%v)", r, err)
	}
	if _, err := os.Stat(filepath.Join(r.Previous, "member", "snap", "db")); err != nil {
		t.Errorf("the old store is not kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.opts.RestoreDir, etcd.PendingSnapshot)); !os.IsNotExist(err) {
		t.Errorf("the applied snapshot is still pending (%v): the next start would restore it again", err)
	}
}

func TestRestoreRefusesAnotherStoresSnapshot(t *testing.T) {
	other := newEmbedded(t)
	var foreign string
	other.run(func(cli *clientv3.Client, endpoint string) {
		other.put(cli, "/registry/pods/ns/p", "a pod")
		foreign = other.snapshotOf(endpoint)
	})
	e := newEmbedded(t)
	vm := GroupPrefix + "virtualmachines/ns/vm"
	e.run(func(cli *clientv3.Client, _ string) { e.put(cli, vm, "mine") })
	e.stage(foreign)
	e.run(func(cli *clientv3.Client, _ string) {
		if v, _ := get(t, cli, vm); v != "mine" {
			t.Errorf("after a refused restore %s = %q, want the old store's %q", vm, v, "mine")
		}
	})
	r, err := etcd.LastRestore(e.opts.RestoreDir)
	if err != nil || !strings.Contains(r.Error, "another store") || r.Rejected == "" {
		t.Fatalf("restore result %+v (%v), want a refusal naming another store", r, err)
	}
}

func TestStageRefusesADamagedSnapshot(t *testing.T) {
	e := newEmbedded(t)
	var file string
	e.run(func(cli *clientv3.Client, endpoint string) {
		e.put(cli, GroupPrefix+"virtualmachines/ns/vm", "x")
		file = e.snapshotOf(endpoint)
	})
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, damaged := range map[string][]byte{
		"truncated": raw[:len(raw)-4096],
		"altered":   append(append([]byte{}, raw[:100]...), append([]byte{raw[100] ^ 0xff}, raw[101:]...)...),
	} {
		t.Run(name, func(t *testing.T) {
			if err := Stage(bytes.NewReader(damaged), e.opts.RestoreDir, ""); err == nil {
				t.Fatal("a damaged snapshot was staged")
			}
			if _, err := os.Stat(filepath.Join(e.opts.RestoreDir, etcd.PendingSnapshot)); !os.IsNotExist(err) {
				t.Errorf("a damaged snapshot is pending (%v)", err)
			}
		})
	}
	d, _ := fileDigest(file)
	f, _ := os.Open(file)
	defer f.Close()
	if err := Stage(f, e.opts.RestoreDir, strings.Repeat("0", len(d.SHA256))); err == nil {
		t.Error("a snapshot of another sha256 than the backup's was staged")
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestAwaitedSnapshot is a switch's carry: the store told to start from a
// snapshot waits until it is staged, starts from it, and on later starts
// runs on as it is.
func TestAwaitedSnapshot(t *testing.T) {
	src := newEmbedded(t)
	vm := GroupPrefix + "virtualmachines/ns/vm"
	var file string
	src.run(func(cli *clientv3.Client, endpoint string) {
		src.put(cli, vm, "carried")
		file = src.snapshotOf(endpoint)
	})
	d, err := fileDigest(file)
	if err != nil {
		t.Fatal(err)
	}
	e := newEmbedded(t)
	e.run(func(cli *clientv3.Client, _ string) { e.put(cli, vm, "stale") })
	e.opts.AwaitSnapshot = d.SHA256
	staged := make(chan error, 1)
	go func() {
		// Staged only once the store waits: it must not serve meanwhile.
		time.Sleep(500 * time.Millisecond)
		f, err := os.Open(file)
		if err != nil {
			staged <- err
			return
		}
		defer f.Close()
		staged <- Stage(f, e.opts.RestoreDir, d.SHA256)
	}()
	e.run(func(cli *clientv3.Client, _ string) {
		if v, _ := get(t, cli, vm); v != "carried" {
			t.Errorf("%s = %q after the carry, want %q", vm, v, "carried")
		}
		e.put(cli, vm, "written after")
	})
	if err := <-staged; err != nil {
		t.Fatal(err)
	}
	// Applied: the next start neither waits nor restores again.
	e.run(func(cli *clientv3.Client, _ string) {
		if v, _ := get(t, cli, vm); v != "written after" {
			t.Errorf("%s = %q on the next start, want %q", vm, v, "written after")
		}
	})
}

// TestRestoreMember restores a snapshot as an HA member's data with the
// cluster's identity, once per request.
func TestRestoreMember(t *testing.T) {
	src := newEmbedded(t)
	var file string
	src.run(func(cli *clientv3.Client, endpoint string) {
		src.put(cli, GroupPrefix+"virtualmachines/ns/vm", "x")
		file = src.snapshotOf(endpoint)
	})
	d, _ := fileDigest(file)
	dir := t.TempDir()
	m := etcd.MemberRestore{Name: etcd.HAMemberName(1), DataDir: filepath.Join(dir, "data"),
		RestoreDir: filepath.Join(dir, "restore"), AwaitSnapshot: d.SHA256 + "@1"}
	f, _ := os.Open(file)
	defer f.Close()
	if err := Stage(f, m.RestoreDir, d.SHA256); err != nil {
		t.Fatal(err)
	}
	if err := etcd.RestoreMember(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.DataDir, "member", "snap", "db")); err != nil {
		t.Fatalf("no restored member data: %v", err)
	}
	r, err := etcd.LastRestore(m.RestoreDir)
	if err != nil || r.SHA256 != d.SHA256 || r.Revision <= r.SnapshotRevision {
		t.Errorf("member restore result %+v (%v)", r, err)
	}
	// The same request again returns at once (nothing is staged: it
	// would wait otherwise).
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := etcd.RestoreMember(ctx, m); err != nil {
		t.Errorf("an applied request: %v", err)
	}
}
