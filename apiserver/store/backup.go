package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/snapshot"
	etcdutl "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	"k8s.io/klog/v2"
)

// EtcdTLS is the operator's client certificate of the HA mode's etcd
// cluster (the members' certificate names 127.0.0.1, where the
// port-forward ends).
type EtcdTLS struct {
	CAFile, CertFile, KeyFile string
}

// Backup takes a snapshot of the platform's store, in either mode, into
// target (never overwritten) and writes target.json; it returns the
// metadata. etcd's snapshot is consistent and online: the store keeps
// serving meanwhile.
func (c *cluster) Backup(ctx context.Context, target string, etcdTLS EtcdTLS) (Metadata, error) {
	logger := klog.FromContext(ctx)
	if _, err := os.Stat(target); err == nil {
		return Metadata{}, fmt.Errorf("%s exists: name another file, a backup is never overwritten", target)
	}
	a, err := c.apiserver(ctx)
	if err != nil {
		return Metadata{}, err
	}
	component, port, scheme := apiserverName, a.clientPort, "http"
	var tlsConfig *tls.Config
	if a.mode == ModeHA {
		component, port, scheme = etcdName, defaultClientPort, "https"
		tlsConfig, err = transport.TLSInfo{TrustedCAFile: etcdTLS.CAFile, CertFile: etcdTLS.CertFile, KeyFile: etcdTLS.KeyFile}.ClientConfig()
		if err != nil {
			return Metadata{}, fmt.Errorf("the HA store's client certificate: %w", err)
		}
	}
	pods, err := c.readyPods(ctx, component)
	if err != nil {
		return Metadata{}, err
	}
	if len(pods) == 0 {
		return Metadata{}, fmt.Errorf("no Ready pod of %s (%s mode) to take the snapshot from: kubectl -n %s get pods -l %s=%s", component, a.mode, namespace, componentLabel, component)
	}
	start := time.Now()
	var errs []error
	// The first member that answers: a snapshot is one member's state.
	for _, pod := range pods {
		m, err := c.backupFrom(ctx, pod.Name, port, scheme, tlsConfig, target)
		if err == nil {
			m.Mode = string(a.mode)
			m.Source = namespace + "/" + pod.Name
			m.Time = start.UTC().Format(time.RFC3339)
			if err := writeMetadata(target+".json.partial", m); err != nil {
				return m, err
			}
			if err := os.Rename(target+".json.partial", target+".json"); err != nil {
				return m, err
			}
			if err := os.Rename(target+".partial", target); err != nil {
				return m, err
			}
			logger.Info("Backup done", "file", target, "revision", m.Revision, "keys", m.TotalKeys, "bytes", m.Size, "took", time.Since(start).Round(100*time.Millisecond))
			return m, nil
		}
		_ = os.Remove(target + ".partial")
		logger.Info("No snapshot from this pod; trying the next", "pod", pod.Name, "err", err)
		errs = append(errs, fmt.Errorf("%s: %w", pod.Name, err))
	}
	return Metadata{}, fmt.Errorf("no snapshot of the %s store: %w", a.mode, errors.Join(errs...))
}

// backupFrom saves the snapshot of the etcd in pod into target.partial and
// returns its metadata, counted and checked.
func (c *cluster) backupFrom(ctx context.Context, pod string, port int, scheme string, tlsConfig *tls.Config, target string) (Metadata, error) {
	stop := make(chan struct{})
	defer close(stop)
	local, err := c.forward(pod, port, stop)
	if err != nil {
		return Metadata{}, err
	}
	cfg := clientv3.Config{
		Endpoints:   []string{fmt.Sprintf("%s://127.0.0.1:%d", scheme, local)},
		DialTimeout: 10 * time.Second,
		TLS:         tlsConfig,
		Logger:      zap.NewNop(),
	}
	partial := target + ".partial"
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return Metadata{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	// SaveWithVersion streams Maintenance.Snapshot and refuses a stream
	// without etcd's integrity hash at its end.
	if _, err := snapshot.SaveWithVersion(sctx, zap.NewNop(), cfg, partial); err != nil {
		return Metadata{}, fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Chmod(partial, 0o600); err != nil {
		return Metadata{}, err
	}
	// A snapshot etcd's own tools cannot read is no backup.
	st, err := etcdutl.NewV3(zap.NewNop()).Status(partial)
	if err != nil {
		return Metadata{}, fmt.Errorf("the snapshot does not verify: %w", err)
	}
	d, err := fileDigest(partial)
	if err != nil {
		return Metadata{}, err
	}
	if err := d.check(nil); err != nil {
		return Metadata{}, fmt.Errorf("the snapshot: %w", err)
	}
	// Keys per resource at the snapshot's revision, which the store keeps
	// readable for minutes (virt-apiserver compacts every 5).
	cli, err := clientv3.New(cfg)
	if err != nil {
		return Metadata{}, err
	}
	defer cli.Close()
	resp, err := cli.Get(sctx, KeyRoot+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithRev(st.Revision))
	if err != nil {
		return Metadata{}, fmt.Errorf("list the keys at revision %d: %w", st.Revision, err)
	}
	keys := map[string]int{}
	for _, kv := range resp.Kvs {
		parts := strings.SplitN(strings.TrimPrefix(string(kv.Key), KeyRoot+"/"), "/", 3)
		if len(parts) >= 2 {
			keys[parts[0]+"/"+parts[1]]++
		}
	}
	return Metadata{
		Snapshot:    filepath.Base(target),
		Store:       strings.TrimSuffix(strings.TrimPrefix(GroupPrefix, KeyRoot+"/"), "/"),
		SHA256:      d.SHA256,
		Size:        d.Size,
		Revision:    st.Revision,
		TotalKeys:   st.TotalKey,
		EtcdVersion: st.Version,
		Prefix:      KeyRoot + "/",
		Keys:        keys,
	}, nil
}
