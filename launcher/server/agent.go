package server

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
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
	hostname := bounded(info.Hostname, virtv1.MaxGuestStringLength)
	if proto.Equal(os, s.guestOS) && hostname == s.guestHostname && interfacesEqual(ifaces, s.guestInterfaces) {
		return
	}
	s.guestOS, s.guestHostname, s.guestInterfaces = os, hostname, ifaces
	s.changed = time.Now()
	s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_AGENT, Detail: "guest info"})
}

// The guest's report is cut on its way into the contract: a string to the
// API's bound of what a guest may say (virtv1.MaxGuestStringLength, an
// address to virtv1.MaxIPAddressLength) and to valid UTF-8, which protobuf
// requires of a string (a report that is not would make every answer of
// this server fail to marshal); the lists to twice what the status holds,
// so that the node, which checks and cuts again, has valid ones to choose
// from and a report stays far below gRPC's 4 MiB message limit (~1 MiB at
// most). The guest agent runs inside the guest and is not trusted.
const (
	maxReportedInterfaces = 2 * virtv1.MaxStatusInterfaces
	maxReportedAddresses  = 2 * virtv1.MaxInterfaceIPAddresses
)

func guestOSInfo(os hypervisor.GuestOS) *apiv1.GuestOSInfo {
	b := func(s string) string { return bounded(s, virtv1.MaxGuestStringLength) }
	return &apiv1.GuestOSInfo{
		Name: b(os.Name), KernelRelease: b(os.KernelRelease), Version: b(os.Version), PrettyName: b(os.PrettyName),
		VersionId: b(os.VersionID), KernelVersion: b(os.KernelVersion), Machine: b(os.Machine), Id: b(os.ID),
	}
}

func guestInterfaces(in []hypervisor.GuestInterface) []*apiv1.GuestInterface {
	var out []*apiv1.GuestInterface
	for _, i := range in[:min(len(in), maxReportedInterfaces)] {
		gi := &apiv1.GuestInterface{Name: bounded(i.Name, virtv1.MaxGuestStringLength), Mac: bounded(i.MAC, virtv1.MaxGuestStringLength)}
		for _, a := range i.Addresses[:min(len(i.Addresses), maxReportedAddresses)] {
			gi.IpAddresses = append(gi.IpAddresses, bounded(a, virtv1.MaxIPAddressLength))
		}
		out = append(out, gi)
	}
	return out
}

// bounded is s as valid UTF-8 of at most n bytes, cut at a character.
func bounded(s string, n int) string {
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
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
