package etcd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

// Options configure the embedded etcd.
type Options struct {
	// DataDir holds etcd's data; created if missing.
	DataDir string
	// ClientPort and PeerPort are loopback ports. The peer port is never
	// used by other members but etcd insists on listening on one.
	ClientPort int
	PeerPort   int
	// StartTimeout bounds the wait for etcd to be ready.
	StartTimeout time.Duration
	// QuotaBackendBytes is the size the database file may reach before
	// etcd raises its NOSPACE alarm and refuses writes; 0: DefaultQuota.
	QuotaBackendBytes int64
	// RestoreDir is where a snapshot to start from is staged (restore.go);
	// empty: no restore.
	RestoreDir string
	// RestoreCheckPrefix is a prefix every snapshot of this store has keys
	// under: a restored store without one is refused.
	RestoreCheckPrefix string
	// AwaitSnapshot is the sha256 of a snapshot the store must start from:
	// Start waits until it is staged in RestoreDir, unless it was applied
	// before. Empty: start on the data as it is.
	AwaitSnapshot string
}

// DefaultQuota is the embedded store's quota, as the HA store's
// (artifacts/etcd): with a defragmentation's copy and the write-ahead log
// it fits the 2Gi volume (artifacts/virt-apiserver/storage.yaml), so the
// store refuses writes before the volume fills up.
const DefaultQuota = 512 << 20

// AutoCompactionRetention is how much history etcd itself keeps when it
// compacts. virt-apiserver's storage compacts every 5 minutes already; this
// is the backstop should that stop.
const AutoCompactionRetention = "1h"

// Server is a running embedded etcd.
type Server struct {
	etcd      *embed.Etcd
	clientURL string
}

// Start starts etcd and waits until it serves clients; a snapshot staged
// in RestoreDir is put in place first (restore.go). Cancelling ctx does not
// stop it: call Close, after the API server stopped using it.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.RestoreDir != "" {
		if err := awaitStaged(ctx, o.RestoreDir, o.AwaitSnapshot); err != nil {
			return nil, err
		}
		pending := filepath.Join(o.RestoreDir, PendingSnapshot)
		if _, err := os.Stat(pending); err == nil {
			return startFromSnapshot(ctx, o, pending)
		}
	}
	return start(ctx, o)
}

func start(ctx context.Context, o Options) (*Server, error) {
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create etcd data dir: %w", permissionHint(err))
	}
	clientURL := loopbackURL(o.ClientPort)
	peerURL := PeerURL(o.PeerPort)

	cfg := embed.NewConfig()
	cfg.Name = MemberName
	cfg.InitialClusterToken = ClusterToken
	cfg.Dir = o.DataDir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = InitialCluster(o.PeerPort)
	// etcd's own info logs would drown the API server's; its warnings and
	// errors still show.
	cfg.LogLevel = "warn"
	cfg.QuotaBackendBytes = o.QuotaBackendBytes
	if cfg.QuotaBackendBytes == 0 {
		cfg.QuotaBackendBytes = DefaultQuota
	}
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = AutoCompactionRetention

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd in %s (client %s, peer %s): %w", o.DataDir, clientURL.String(), peerURL.String(), permissionHint(err))
	}
	timeout := o.StartTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed while starting: %w", err)
	case <-time.After(timeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after %v", timeout)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	klog.FromContext(ctx).Info("Embedded etcd ready", "dataDir", o.DataDir, "client", clientURL.String())
	return &Server{etcd: e, clientURL: clientURL.String()}, nil
}

// ClientURL is what the API server's storage connects to.
func (s *Server) ClientURL() string { return s.clientURL }

// Err reports a fatal error of the running etcd.
func (s *Server) Err() <-chan error { return s.etcd.Err() }

// Close stops etcd and waits until its ports and data directory are free, so
// a new server can start on the same ports and data right away.
func (s *Server) Close() {
	s.etcd.Close()
	<-s.etcd.Server.StopNotify()
}

// permissionHint explains a data directory this process may not write: the
// likely cause is a store an earlier virt-apiserver wrote as root.
func permissionHint(err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%w (the data directory must belong to this process's user, uid %d; a store an earlier virt-apiserver wrote as root is root's: docs/runbooks.md \"virt-apiserver cannot write its data\")", err, os.Getuid())
}
