package server

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// Defaults of Config.AgentPollInterval and Config.AgentTimeout.
const (
	DefaultAgentPollInterval = 10 * time.Second
	DefaultAgentTimeout      = 5 * time.Second
)

// guestAgent is what the server asks of the guest agent: *hypervisor.Conn,
// or a fake in tests (libvirt's test driver has no agent).
type guestAgent interface {
	SetAgentTimeout(name string, timeout time.Duration) error
	GuestInfo(name string) (hypervisor.GuestInfo, error)
}

// agentChangedLocked records the agent's lifecycle event. While the agent is
// connected a goroutine asks it for the guest's info at once and every
// AgentPollInterval; nothing else ever waits for the agent, so a guest
// whose agent hangs slows no call. The interfaces are the agent's live view
// and go with it; the OS stays known. s.mu must be held.
func (s *Server) agentChangedLocked(ctx context.Context, connected bool) {
	if connected == s.agentConnected {
		return
	}
	s.agentConnected = connected
	if s.stopPolling != nil {
		s.stopPolling()
		s.stopPolling = nil
	}
	if !connected {
		s.guestInterfaces = nil
		return
	}
	poll, stop := context.WithCancel(ctx)
	s.stopPolling = stop
	go s.pollAgent(poll)
}

// pollAgent asks the agent for the guest's info until ctx ends (the agent
// disconnected, the domain ended, the server stopped).
func (s *Server) pollAgent(ctx context.Context) {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "domain", s.name)
	if err := s.agent.SetAgentTimeout(s.name, s.cfg.AgentTimeout); err != nil {
		// Asking still works; an agent that hangs then holds only this
		// goroutine, as long as libvirt lets it.
		logger.Error(err, "Bounding the guest agent's answers failed")
	}
	tick := time.NewTicker(s.cfg.AgentPollInterval)
	defer tick.Stop()
	for {
		info, err := s.agent.GuestInfo(s.name)
		if err != nil {
			// A paused guest, an agent still starting or one that lacks
			// a command: the last report stands, the next poll retries.
			logger.V(2).Info("Asking the guest agent failed", "err", err)
		} else {
			s.guestInfoRead(ctx, info)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// guestInfoRead records what the agent answered and tells the watchers when
// it changed. An answer that arrives after the agent disconnected (the
// poller's context, cancelled under s.mu, says so) is dropped.
func (s *Server) guestInfoRead(ctx context.Context, info hypervisor.GuestInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil || s.final != nil {
		return
	}
	os := guestOSInfo(info.OS)
	ifaces := guestInterfaces(info.Interfaces)
	if proto.Equal(os, s.guestOS) && info.Hostname == s.guestHostname && interfacesEqual(ifaces, s.guestInterfaces) {
		return
	}
	s.guestOS, s.guestHostname, s.guestInterfaces = os, info.Hostname, ifaces
	s.changed = time.Now()
	s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_AGENT, Detail: "guest info"})
}

func guestOSInfo(os hypervisor.GuestOS) *apiv1.GuestOSInfo {
	return &apiv1.GuestOSInfo{
		Name: os.Name, KernelRelease: os.KernelRelease, Version: os.Version, PrettyName: os.PrettyName,
		VersionId: os.VersionID, KernelVersion: os.KernelVersion, Machine: os.Machine, Id: os.ID,
	}
}

func guestInterfaces(in []hypervisor.GuestInterface) []*apiv1.GuestInterface {
	var out []*apiv1.GuestInterface
	for _, i := range in {
		out = append(out, &apiv1.GuestInterface{Name: i.Name, Mac: i.MAC, IpAddresses: i.Addresses})
	}
	return out
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

// agentSnapshotLocked adds what is known of the agent to d; s.mu must be
// held.
func (s *Server) agentSnapshotLocked(d *apiv1.Domain) {
	d.AgentConnected = s.agentConnected
	if s.guestOS != nil {
		d.GuestOsInfo = proto.Clone(s.guestOS).(*apiv1.GuestOSInfo)
	}
	d.GuestHostname = s.guestHostname
	for _, i := range s.guestInterfaces {
		d.GuestInterfaces = append(d.GuestInterfaces, proto.Clone(i).(*apiv1.GuestInterface))
	}
}
