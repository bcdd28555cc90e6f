package migrationproxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"path"
	"strconv"
	"sync"
	"sync/atomic"
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
	// relayed counts the connections relayed, by kind.
	relayed [Block + 1]atomic.Int32

	// joinMu orders join's move against the end of the source side: once
	// Drain or Close began (joinEnded), no socket is moved into the
	// source pod any more, where nothing would remove it. And against the
	// relay's dial of the target's socket (dialer): a connection accepted
	// just before the move must find the socket where it is then.
	joinMu    sync.Mutex
	joinEnded bool
	// joined: the kind's target socket now has the source pod's name.
	joined   [Block + 1]bool
	stopJoin context.CancelFunc
}

// ListenSource listens on the source pod's migration sockets; each
// connection a launcher makes is forwarded to the target's listener of its
// kind until Close (or ctx ends).
func ListenSource(ctx context.Context, cfg SourceConfig) (*Source, error) {
	ctx, cancel := context.WithCancel(ctx)
	joinCtx, stopJoin := context.WithCancel(ctx)
	s := &Source{cancel: cancel, stopJoin: stopJoin}
	for _, k := range Kinds {
		dial, err := s.dialer(cfg, k)
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
	if cfg.Local != nil {
		for _, k := range []Kind{QEMU, Block} {
			s.g.go_(func() { s.join(joinCtx, cfg.Local.pod, cfg.Pod, k) })
		}
	}
	s.g.go_(func() {
		<-ctx.Done()
		s.g.shut()
	})
	return s, nil
}

// join takes the proxy out of a migration within the node for QEMU's
// streams (the memory, the block copy): as soon as the target's QEMU
// listens on its socket, the socket is moved over the proxy's own in the
// source pod, so the source's QEMU connects to the target's directly, as
// between two libvirts on one host. Relayed, every byte woke the proxy
// twice on the node's CPUs while the target's QEMU, which bounds the
// paused copy, wanted one of them (docs/migration.md "Within a node").
// QEMU's listening socket exists only once libvirt prepared the incoming
// migration, a few milliseconds before the source connects: a connection
// made before the move is relayed as before. The libvirt connection stays
// relayed: the target's libvirtd listens on its socket from the start,
// and its launcher uses it too.
func (s *Source) join(ctx context.Context, target, source podfs.Dir, k Kind) {
	logger := klog.FromContext(ctx).WithValues("connection", k.String())
	if err := target.WaitSocket(ctx, layout.MigrationDirName, k.Socket()); err != nil {
		if ctx.Err() == nil {
			logger.Info("Cannot watch for the target's migration socket; its connections are relayed", "err", err.Error())
		}
		return
	}
	s.joinMu.Lock()
	defer s.joinMu.Unlock()
	if s.joinEnded {
		return
	}
	if err := target.MoveSocket(layout.MigrationDirName, k.Socket(), source); err != nil {
		logger.Info("Cannot join the two pods' migration sockets; their connections are relayed", "err", err.Error())
		return
	}
	s.joined[k] = true
	// Relayed before: the source connected before the move (it lost the
	// race described above).
	logger.Info("Joined the target pod's migration socket to the source pod's", "relayedBefore", s.relayed[k].Load())
}

// Close removes the sockets, closes every connection and waits for them.
func (s *Source) Close() {
	s.endJoin()
	s.cancel()
	s.g.closeAll()
}

// endJoin stops join for good, and returns once no move is under way.
func (s *Source) endJoin() {
	s.joinMu.Lock()
	s.joinEnded = true
	s.joinMu.Unlock()
	s.stopJoin()
}

// Drain removes the sockets and lets the open connections end by
// themselves, for at most grace, then closes what is left (Close): once
// the guest runs on the target, the source's libvirt still finishes its
// exchange with the target's, and cut off it takes the migration for
// failed and resumes its own copy of the guest.
func (s *Source) Drain(grace time.Duration) {
	s.endJoin()
	s.g.drain(grace)
	s.Close()
}

// dialer connects a connection of kind k to the target: its node's
// listener through mutual TLS, or the target pod itself when Local.
type dialer struct {
	target string
	dial   func(context.Context) (halfCloser, error)
}

func (s *Source) dialer(cfg SourceConfig, k Kind) (dialer, error) {
	if cfg.Local != nil {
		return dialer{target: "this node", dial: func(ctx context.Context) (halfCloser, error) {
			// Under joinMu, so that join cannot move the socket between
			// this choice and the connect: once joined, the target's
			// socket is the one at the source pod's name (a connection
			// the proxy accepted just before the move, or one waiting in
			// its listener's backlog).
			s.joinMu.Lock()
			defer s.joinMu.Unlock()
			if s.joined[k] {
				return cfg.Pod.Dial(ctx, path.Join(layout.MigrationDirName, k.Socket()))
			}
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
		s.relayed[k].Add(1)
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
