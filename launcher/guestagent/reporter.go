package guestagent

import (
	"context"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// Defaults of Config.PollInterval and Config.Timeout.
const (
	DefaultPollInterval = 10 * time.Second
	DefaultTimeout      = 5 * time.Second
)

// Agent is what a Reporter asks of the guest agent: *hypervisor.Conn, or a
// fake in tests (libvirt's test driver has no agent).
type Agent interface {
	SetAgentTimeout(name string, timeout time.Duration) error
	GuestInfo(name string) (hypervisor.GuestInfo, error)
}

// Config is how a Reporter asks.
type Config struct {
	// Domain is the libvirt name of the domain whose agent is asked.
	Domain string
	// PollInterval is how often the agent is asked while it is connected
	// (and once as it connects). Zero: DefaultPollInterval.
	PollInterval time.Duration
	// Timeout bounds how long libvirt waits for each of the agent's
	// answers. Zero: DefaultTimeout.
	Timeout time.Duration
	// OnChange is called when a new report differs from the last one,
	// without any lock of the Reporter held: it may call Describe.
	OnChange func()
}

// Reporter keeps the guest agent's last report.
type Reporter struct {
	agent Agent
	cfg   Config

	mu         sync.Mutex
	connected  bool
	os         *apiv1.GuestOSInfo
	hostname   string
	interfaces []*apiv1.GuestInterface
	// stopPolling ends the poller of the current connection; nil while
	// nobody asks.
	stopPolling context.CancelFunc
}

// New is a Reporter of cfg.Domain's agent, not yet connected.
func New(agent Agent, cfg Config) *Reporter {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func() {}
	}
	return &Reporter{agent: agent, cfg: cfg}
}

// SetConnected records libvirt's agent lifecycle event (or the agent's end
// with QEMU). While the agent is connected a goroutine asks it for the
// guest's info at once and every PollInterval, until it disconnects or ctx
// ends. The interfaces are the agent's live view and go with it; the OS
// stays known.
func (r *Reporter) SetConnected(ctx context.Context, connected bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if connected == r.connected {
		return
	}
	r.connected = connected
	if r.stopPolling != nil {
		r.stopPolling()
		r.stopPolling = nil
	}
	if !connected {
		r.interfaces = nil
		return
	}
	poll, stop := context.WithCancel(ctx)
	r.stopPolling = stop
	go r.poll(poll)
}

// poll asks the agent for the guest's info until ctx ends.
func (r *Reporter) poll(ctx context.Context) {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "domain", r.cfg.Domain)
	if err := r.agent.SetAgentTimeout(r.cfg.Domain, r.cfg.Timeout); err != nil {
		// Asking still works; an agent that hangs then holds only this
		// goroutine, as long as libvirt lets it.
		logger.Error(err, "Bounding the guest agent's answers failed")
	}
	tick := time.NewTicker(r.cfg.PollInterval)
	defer tick.Stop()
	for {
		info, err := r.agent.GuestInfo(r.cfg.Domain)
		if err != nil {
			// A paused guest, an agent still starting or one that lacks
			// a command: the last report stands, the next poll retries.
			logger.V(2).Info("Asking the guest agent failed", "err", err)
		} else if r.record(ctx, info) {
			r.cfg.OnChange()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// record keeps what the agent answered, cut to the API's bounds, and
// reports whether it changed. An answer that arrives after the agent
// disconnected (the poller's context, cancelled under r.mu, says so) is
// dropped.
func (r *Reporter) record(ctx context.Context, info hypervisor.GuestInfo) bool {
	os, hostname, ifaces := cut(info)
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	if proto.Equal(os, r.os) && hostname == r.hostname && interfacesEqual(ifaces, r.interfaces) {
		return false
	}
	r.os, r.hostname, r.interfaces = os, hostname, ifaces
	return true
}

// Describe adds what is known of the agent to d.
func (r *Reporter) Describe(d *apiv1.Domain) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d.AgentConnected = r.connected
	if r.os != nil {
		d.GuestOsInfo = proto.Clone(r.os).(*apiv1.GuestOSInfo)
	}
	d.GuestHostname = r.hostname
	d.GuestInterfaces = nil
	for _, i := range r.interfaces {
		d.GuestInterfaces = append(d.GuestInterfaces, proto.Clone(i).(*apiv1.GuestInterface))
	}
}

func interfacesEqual(a, b []*apiv1.GuestInterface) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
