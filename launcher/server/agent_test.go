package server

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// fakeAgent answers like a guest agent: libvirt's test driver has none.
// launcher/guestagent's tests cover the agent's own cases (failures, hangs,
// hostile reports); these check the wiring through the contract.
type fakeAgent struct {
	mu   sync.Mutex
	info hypervisor.GuestInfo
}

func (a *fakeAgent) SetAgentTimeout(string, time.Duration) error { return nil }

func (a *fakeAgent) GuestInfo(string) (hypervisor.GuestInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.info, nil
}

var debian = hypervisor.GuestInfo{
	OS:         hypervisor.GuestOS{ID: "debian", PrettyName: "Debian GNU/Linux 12 (bookworm)"},
	Hostname:   "vm",
	Interfaces: []hypervisor.GuestInterface{{Name: "enp1s0", MAC: "52:54:00:00:00:01", Addresses: []string{"198.19.255.2"}}},
}

// agentEvent delivers libvirt's agent lifecycle event as libvirt would.
func (f *fixture) agentEvent(t *testing.T, detail string) {
	t.Helper()
	select {
	case f.events <- hypervisor.Event{Domain: f.srv.DomainName(), Type: hypervisor.AgentEvent, Detail: detail}:
	case <-time.After(5 * time.Second):
		t.Fatalf("the server did not take the agent event %q", detail)
	}
}

// nextEvent reads the watch up to the next event of type typ and detail.
func nextEvent(t *testing.T, watch apiv1.Launcher_WatchDomainClient, typ apiv1.EventType, detail string) *apiv1.DomainEvent {
	t.Helper()
	for {
		ev, err := watch.Recv()
		if err != nil {
			t.Fatalf("watch ended before %s/%s: %v", typ, detail, err)
		}
		if ev.Type == typ && ev.Detail == detail {
			return ev
		}
	}
}

// The agent's connection, its report and its end with the domain reach the
// watchers and GetDomain, each event with the domain after it.
func TestGuestAgentReport(t *testing.T) {
	f := newAgentFixture(t, &fakeAgent{info: debian}, func(c *Config) { c.AgentPollInterval = 10 * time.Millisecond })
	watch, err := f.client.WatchDomain(t.Context(), &apiv1.WatchDomainRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, watch, apiv1.EventType_EVENT_TYPE_STARTED, "booted")
	if d := f.state(t); d.AgentConnected || d.GuestOsInfo != nil {
		t.Fatalf("before the agent connected: %v", d)
	}

	f.agentEvent(t, hypervisor.AgentConnected)
	if ev := nextEvent(t, watch, apiv1.EventType_EVENT_TYPE_AGENT, "connected"); !ev.Domain.AgentConnected {
		t.Errorf("AGENT/connected carries %v, want agent_connected", ev.Domain)
	}
	ev := nextEvent(t, watch, apiv1.EventType_EVENT_TYPE_AGENT, "guest info")
	want := &apiv1.Domain{AgentConnected: true, GuestOsInfo: &apiv1.GuestOSInfo{Id: "debian", PrettyName: "Debian GNU/Linux 12 (bookworm)"},
		GuestHostname: "vm", GuestInterfaces: []*apiv1.GuestInterface{{Name: "enp1s0", Mac: "52:54:00:00:00:01", IpAddresses: []string{"198.19.255.2"}}}}
	if diff := cmp.Diff(want, agentPart(ev.Domain), protocmp.Transform()); diff != "" {
		t.Errorf("AGENT/guest info domain (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, agentPart(f.state(t)), protocmp.Transform()); diff != "" {
		t.Errorf("GetDomain's agent (-want +got):\n%s", diff)
	}

	// The domain ends with the agent connected: the final domain keeps
	// the OS and drops the interfaces, the agent's live view.
	if _, err := f.client.Kill(t.Context(), &apiv1.KillRequest{}); err != nil {
		t.Fatal(err)
	}
	final := f.waitDone(t)
	want = &apiv1.Domain{GuestOsInfo: want.GuestOsInfo, GuestHostname: "vm"}
	if diff := cmp.Diff(want, agentPart(final), protocmp.Transform()); diff != "" {
		t.Errorf("final domain's agent (-want +got):\n%s", diff)
	}
}

// agentPart is d's guest agent fields alone.
func agentPart(d *apiv1.Domain) *apiv1.Domain {
	return &apiv1.Domain{AgentConnected: d.AgentConnected, GuestOsInfo: d.GuestOsInfo, GuestHostname: d.GuestHostname, GuestInterfaces: d.GuestInterfaces}
}
