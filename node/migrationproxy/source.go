package migrationproxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	"k8s.io/klog/v2"

	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
)

// DialTimeout bounds the source's TCP connect to the target.
const DialTimeout = 10 * time.Second

// SourceConfig is the source side of one migration.
type SourceConfig struct {
	// Pod is the source launcher pod's private directory.
	Pod podfs.Dir
	// TargetAddress is migrationState.targetNodeAddress.
	TargetAddress string
	// TargetPorts are the target's ports by kind (ParsePorts of
	// targetDirectMigrationNodePorts).
	TargetPorts map[Kind]int
	// TargetNode is the node the target's certificate must name.
	TargetNode string
	Identity   Identity
	// Local is the migration's target side when it is this handler's too
	// (a migration within the node): the source then connects the two
	// pods' sockets itself, without TCP or TLS, as raw libvirt on one
	// host would (nothing leaves the node, no peer is to be told apart).
	// TargetAddress, TargetPorts and TargetNode are then unused.
	Local *Target
}

// Source is the source side of one migration: a socket per kind in the
// source pod.
type Source struct {
	cancel context.CancelFunc
	g      group
}

// ListenSource listens on the source pod's migration sockets; each
// connection a launcher makes is forwarded to the target's listener of its
// kind until Close (or ctx ends).
func ListenSource(ctx context.Context, cfg SourceConfig) (*Source, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &Source{cancel: cancel}
	for _, k := range Kinds {
		dial, err := cfg.dialer(k)
		if err != nil {
			s.Close()
			return nil, err
		}
		ln, err := cfg.Pod.Listen(layout.MigrationDirName, k.Socket())
		if err != nil {
			s.Close()
			return nil, err
		}
		if !s.g.listen(ln) {
			s.Close()
			return nil, ctx.Err()
		}
		s.g.go_(func() { s.serve(ctx, ln, k, dial) })
	}
	s.g.go_(func() {
		<-ctx.Done()
		s.g.shut()
	})
	return s, nil
}

// Close removes the sockets, closes every connection and waits for them.
func (s *Source) Close() {
	s.cancel()
	s.g.closeAll()
}

// Drain removes the sockets and lets the open connections end by
// themselves, for at most grace, then closes what is left (Close): once
// the guest runs on the target, the source's libvirt still finishes its
// exchange with the target's, and cut off it takes the migration for
// failed and resumes its own copy of the guest.
func (s *Source) Drain(grace time.Duration) {
	s.g.drain(grace)
	s.Close()
}

// dialer connects a connection of kind k to the target: its node's
// listener through mutual TLS, or the target pod itself when Local.
type dialer struct {
	target string
	dial   func(context.Context) (halfCloser, error)
}

func (cfg SourceConfig) dialer(k Kind) (dialer, error) {
	if cfg.Local != nil {
		return dialer{target: "this node", dial: func(ctx context.Context) (halfCloser, error) {
			return cfg.Local.dialPod(ctx, k)
		}}, nil
	}
	port, ok := cfg.TargetPorts[k]
	if !ok {
		return dialer{}, fmt.Errorf("no target port of the %s connection", k)
	}
	conf, err := cfg.Identity.clientConfig(k, cfg.TargetNode)
	if err != nil {
		return dialer{}, err
	}
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: DialTimeout}, Config: conf}
	addr := net.JoinHostPort(cfg.TargetAddress, strconv.Itoa(port))
	return dialer{target: addr, dial: func(ctx context.Context) (halfCloser, error) {
		hctx, cancel := context.WithTimeout(ctx, HandshakeTimeout)
		defer cancel()
		c, err := d.DialContext(hctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return c.(*tls.Conn), nil
	}}, nil
}

func (s *Source) serve(ctx context.Context, ln *podfs.Listener, k Kind, d dialer) {
	logger := klog.FromContext(ctx).WithValues("connection", k.String(), "target", d.target)
	for {
		local, err := ln.Accept()
		if err != nil {
			return
		}
		if !s.g.track(local) {
			return
		}
		s.g.goConn(func() {
			defer s.g.untrack(local)
			defer local.Close()
			remote, err := d.dial(ctx)
			if err != nil {
				logger.Info("Cannot reach the migration target", "err", err.Error())
				return
			}
			if !s.g.track(remote) {
				return
			}
			defer s.g.untrack(remote)
			out, in := splice(local, remote)
			logger.V(4).Info("Migration connection ended", "sent", out, "received", in)
		})
	}
}
