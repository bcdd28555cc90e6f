package migrationproxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"path"
	"time"

	"k8s.io/klog/v2"

	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
)

// HandshakeTimeout bounds a TLS handshake on either side: a peer that
// connects and says nothing holds no goroutine for longer.
const HandshakeTimeout = 30 * time.Second

// TargetConfig is the target side of one migration.
type TargetConfig struct {
	// Address is the IP to listen on: the handler pod's, which goes into
	// migrationState.targetNodeAddress.
	Address string
	// Pod is the target launcher pod's private directory.
	Pod podfs.Dir
	// SourceNode is the only node whose handler may connect.
	SourceNode string
	Identity   Identity
}

// Target is the target side of one migration: a listener per kind.
type Target struct {
	pod    podfs.Dir
	ports  map[Kind]int
	cancel context.CancelFunc
	g      group
}

// ListenTarget opens the migration's listeners on cfg.Address, one per
// kind on a port the kernel picks; they serve until Close (or ctx ends).
func ListenTarget(ctx context.Context, cfg TargetConfig) (*Target, error) {
	ctx, cancel := context.WithCancel(ctx)
	t := &Target{pod: cfg.Pod, ports: map[Kind]int{}, cancel: cancel}
	for _, k := range Kinds {
		conf, err := cfg.Identity.serverConfig(k, cfg.SourceNode)
		if err != nil {
			t.Close()
			return nil, err
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Address, "0"))
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("listen for the migration's %s connection: %w", k, err)
		}
		if !t.g.listen(ln) {
			t.Close()
			return nil, ctx.Err()
		}
		t.ports[k] = ln.Addr().(*net.TCPAddr).Port
		t.g.go_(func() { t.serve(ctx, ln, k, conf) })
	}
	t.g.go_(func() {
		<-ctx.Done()
		t.g.shut()
	})
	return t, nil
}

// Ports are the listeners' ports by kind.
func (t *Target) Ports() map[Kind]int { return t.ports }

// Close stops listening, closes every connection and waits for them.
func (t *Target) Close() {
	t.cancel()
	t.g.closeAll()
}

// Drain stops accepting connections and lets the open ones end by
// themselves, for at most grace, then closes what is left (Close). The
// migration's end on the target is not its end for the source: libvirt's
// peer-to-peer protocol still has the target's answer to Finish to carry
// to the source, and a source that loses it takes the migration for
// failed and resumes its guest while the target's runs too.
func (t *Target) Drain(grace time.Duration) {
	t.g.drain(grace)
	t.Close()
}

// dialPod connects to the target pod's socket of kind k. Dialled per
// connection: the target's QEMU and NBD server listen only once libvirt
// started the incoming migration.
func (t *Target) dialPod(ctx context.Context, k Kind) (halfCloser, error) {
	return t.pod.Dial(ctx, path.Join(layout.MigrationDirName, k.Socket()))
}

func (t *Target) serve(ctx context.Context, ln net.Listener, k Kind, conf *tls.Config) {
	logger := klog.FromContext(ctx).WithValues("connection", k.String())
	for {
		raw, err := ln.Accept()
		if err != nil {
			return
		}
		if !t.g.track(raw) {
			return
		}
		t.g.goConn(func() {
			defer t.g.untrack(raw)
			defer raw.Close()
			conn := tls.Server(raw, conf)
			hctx, cancel := context.WithTimeout(ctx, HandshakeTimeout)
			err := conn.HandshakeContext(hctx)
			cancel()
			if err != nil {
				logger.Info("Refused a migration connection", "from", raw.RemoteAddr().String(), "err", err.Error())
				return
			}
			local, err := t.dialPod(ctx, k)
			if err != nil {
				logger.Info("Cannot reach the target pod's migration socket", "err", err.Error())
				return
			}
			if !t.g.track(local) {
				return
			}
			defer t.g.untrack(local)
			in, out := splice(conn, local)
			logger.V(4).Info("Migration connection ended", "from", raw.RemoteAddr().String(), "received", in, "sent", out)
		})
	}
}
