package lease

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/dhcp"
)

// ErrInvalid is wrapped by Serve's error when a lease can never be served
// as given (an address that is none, a route outside the subnet): the VMI
// cannot run in this pod. Other errors (the socket could not be bound) are
// the pod's.
var ErrInvalid = errors.New("invalid lease")

// invalid marks an error as ErrInvalid without changing its message.
type invalid struct{ error }

func (invalid) Is(target error) bool { return target == ErrInvalid }
func (e invalid) Unwrap() error      { return e.error }

// Config is what every lease of a Set shares.
type Config struct {
	// ResolvConf is the pod's resolver configuration, whose name servers
	// and search domains the leases carry. Empty: none.
	ResolvConf string
	// Background is the context the servers run in: they stop when it is
	// done.
	Background context.Context
	// OnAck is called, without any lock of the Set held, when the guest of
	// NIC name took its lease.
	OnAck func(name string)
}

// Set is the DHCP servers of one guest's NICs, by interface name.
type Set struct {
	cfg Config

	mu      sync.Mutex
	servers map[string]*dhcp.Server
}

// New is an empty Set.
func New(cfg Config) *Set {
	if cfg.Background == nil {
		cfg.Background = context.Background()
	}
	if cfg.OnAck == nil {
		cfg.OnAck = func(string) {}
	}
	return &Set{cfg: cfg, servers: map[string]*dhcp.Server{}}
}

// Serve starts the server of every NIC that has a lease and no server yet:
// on the binding's bridge, with the pod's DNS and hostname as the guest's
// host name. It returns once each socket is bound, so that a lease that
// cannot be served is known before the guest starts.
func (s *Set) Serve(ctx context.Context, hostname string, nics []*apiv1.InterfaceNetwork) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var dns []netip.Addr
	var search []string
	for _, nic := range nics {
		name := nic.GetName()
		if nic.GetDhcp() == nil || s.servers[name] != nil {
			continue
		}
		if dns == nil && s.cfg.ResolvConf != "" {
			var err error
			if dns, search, err = dhcp.ReadResolvConf(s.cfg.ResolvConf); err != nil {
				// A guest without DNS still gets its address.
				klog.FromContext(ctx).Error(err, "Reading the pod's resolver configuration failed; the leases carry no DNS")
			}
		}
		cfg, err := dhcp.NewConfig(nic, dns, search, hostname)
		if err != nil {
			return invalid{fmt.Errorf("interface %q: %w", name, err)}
		}
		cfg.OnAck = func(netip.Addr) { s.cfg.OnAck(name) }
		srv, err := dhcp.NewServer(cfg)
		if err != nil {
			return invalid{fmt.Errorf("interface %q: %w", name, err)}
		}
		serve, err := srv.Listen(s.cfg.Background)
		if err != nil {
			return fmt.Errorf("interface %q: %w", name, err)
		}
		s.servers[name] = srv
		logger := klog.LoggerWithValues(klog.FromContext(s.cfg.Background), "interface", name)
		go func() {
			if err := serve(); err != nil {
				logger.Error(err, "DHCP server stopped; the guest cannot renew its lease")
			}
		}()
	}
	return nil
}

// Acked is the address the guest of NIC name took, if it took one.
func (s *Set) Acked(name string) (netip.Addr, bool) {
	s.mu.Lock()
	srv := s.servers[name]
	s.mu.Unlock()
	if srv == nil {
		return netip.Addr{}, false
	}
	return srv.Acked()
}
