package storequota

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"kubevirt.dev/virt/apiserver/etcd"
)

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestWatcherOnRealEtcd fills a real etcd with a 2 MiB quota: the watcher
// reports NearQuota before etcd refuses writes, and NoSpace once its alarm
// is raised.
func TestWatcherOnRealEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const quota = 2 << 20
	srv, err := etcd.Start(ctx, etcd.Options{DataDir: t.TempDir(), ClientPort: freePort(t), PeerPort: freePort(t), QuotaBackendBytes: quota})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.ClientURL()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	reports := make(chan Report, 100)
	w := &Watcher{Client: client, Quota: quota, Threshold: DefaultThreshold, Interval: 50 * time.Millisecond, Repeat: time.Hour,
		Emit: func(_ context.Context, r Report) { reports <- r }}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	defer func() { stop(); <-done }()

	value := strings.Repeat("x", 32<<10)
	var seen []Level
	wait := func(want Level) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case r := <-reports:
				seen = append(seen, r.Level)
				if r.Level == want {
					return
				}
			case <-deadline:
				t.Fatalf("no %v report within 30s; reports so far %v", want, seen)
			}
		}
	}
	full := false
	for i := 0; !full && i < 1000; i++ {
		_, err := client.Put(ctx, "/registry/fill/"+time.Now().Format(time.RFC3339Nano), value)
		if errors.Is(err, rpctypes.ErrGRPCNoSpace) || (err != nil && strings.Contains(err.Error(), "database space exceeded")) {
			full = true
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := client.Status(ctx, srv.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		if st.DbSize >= quota*9/10 && len(seen) == 0 {
			// The warning must have come before the store got this far.
			select {
			case r := <-reports:
				seen = append(seen, r.Level)
			case <-time.After(5 * time.Second):
			}
			if len(seen) == 0 || seen[0] != NearQuota {
				t.Fatalf("the database is at %d of %d bytes and the watcher reported %v, want NearQuota first", st.DbSize, quota, seen)
			}
		}
	}
	if !full {
		t.Fatal("etcd never refused a write")
	}
	wait(NoSpace)
	if seen[0] != NearQuota {
		t.Errorf("reports %v: the first must be NearQuota, before the store was full", seen)
	}

	// The runbook's cure (docs/runbooks.md "The store is full"): delete,
	// compact, defragment, disarm; writes work again and the watcher says
	// so. A full store still takes deletes and reads.
	del, err := client.Delete(ctx, "/registry/fill/", clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("delete while full: %v", err)
	}
	if _, err := client.Compact(ctx, del.Header.Revision); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Defragment(ctx, srv.ClientURL()); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AlarmDisarm(ctx, &clientv3.AlarmMember{}); err != nil {
		t.Fatal(err)
	}
	wait(OK)
	if _, err := client.Put(ctx, "/registry/after", "x"); err != nil {
		t.Errorf("write after the cure: %v", err)
	}
	t.Logf("reports: %v", seen)
}
