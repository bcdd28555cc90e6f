package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/util/wait"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// fakeAgent stands in for libvirt's guest agent calls: the test driver has
// no agent, and its agent lifecycle events never come.
type fakeAgent struct {
	mu      sync.Mutex
	info    hypervisor.GuestInfo
	err     error
	timeout time.Duration
	calls   int
	// block, when set, holds every GuestInfo until it is closed: an agent
	// that does not answer.
	block chan struct{}
}

func (a *fakeAgent) SetAgentTimeout(_ string, timeout time.Duration) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.timeout = timeout
	return nil
}

func (a *fakeAgent) GuestInfo(string) (hypervisor.GuestInfo, error) {
	a.mu.Lock()
	a.calls++
	block := a.block
	a.mu.Unlock()
	if block != nil {
		<-block
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.info, a.err
}

func (a *fakeAgent) set(info hypervisor.GuestInfo, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.info, a.err = info, err
}

func (a *fakeAgent) callCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls
}

var debian = hypervisor.GuestInfo{
	OS: hypervisor.GuestOS{ID: "debian", Name: "Debian GNU/Linux", PrettyName: "Debian GNU/Linux 12 (bookworm)",
		Version: "12 (bookworm)", VersionID: "12", KernelRelease: "6.1.0-41-cloud-amd64", KernelVersion: "#1 SMP", Machine: "x86_64"},
	Hostname:   "vm",
	Interfaces: []hypervisor.GuestInterface{{Name: "enp1s0", MAC: "52:54:00:00:00:01", Addresses: []string{"198.19.255.2", "fe80::1"}}},
}

var debianOS = &apiv1.GuestOSInfo{Id: "debian", Name: "Debian GNU/Linux", PrettyName: "Debian GNU/Linux 12 (bookworm)",
	Version: "12 (bookworm)", VersionId: "12", KernelRelease: "6.1.0-41-cloud-amd64", KernelVersion: "#1 SMP", Machine: "x86_64"}

// agentFixture is a launcher with a started domain whose agent is fake and
// asked every 10 ms.
func agentFixture(t *testing.T, agent *fakeAgent) (*fixture, apiv1.Launcher_WatchDomainClient) {
	t.Helper()
	f := newFixture(t, func(c *Config) { c.AgentPollInterval = 10 * time.Millisecond })
	f.srv.agent = agent
	watch, err := f.client.WatchDomain(t.Context(), &apiv1.WatchDomainRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	// libvirt's own events of the start come first, so that only the
	// agent moves the domain after this.
	for {
		ev, err := watch.Recv()
		if err != nil {
			t.Fatalf("watch ended before STARTED: %v", err)
		}
		if ev.Type == apiv1.EventType_EVENT_TYPE_STARTED {
			return f, watch
		}
	}
}

// agentEvent delivers libvirt's agent lifecycle event as Run would.
func (f *fixture) agentEvent(t *testing.T, detail string) {
	t.Helper()
	if f.srv.handle(t.Context(), hypervisor.Event{Domain: f.srv.DomainName(), Type: hypervisor.AgentEvent, Detail: detail}) {
		t.Fatalf("agent event %q ended the domain", detail)
	}
}

// nextAgentEvent reads the watch up to the next EVENT_TYPE_AGENT with detail.
func nextAgentEvent(t *testing.T, watch apiv1.Launcher_WatchDomainClient, detail string) *apiv1.DomainEvent {
	t.Helper()
	for {
		ev, err := watch.Recv()
		if err != nil {
			t.Fatalf("watch ended before AGENT/%s: %v", detail, err)
		}
		if ev.Type == apiv1.EventType_EVENT_TYPE_AGENT && ev.Detail == detail {
			return ev
		}
	}
}

func TestGuestAgentReport(t *testing.T) {
	agent := &fakeAgent{info: debian}
	f, watch := agentFixture(t, agent)
	if d := f.state(t); d.AgentConnected || d.GuestOsInfo != nil {
		t.Fatalf("before the agent connected: %v", d)
	}

	f.agentEvent(t, hypervisor.AgentConnected)
	if ev := nextAgentEvent(t, watch, "connected"); !ev.Domain.AgentConnected {
		t.Errorf("AGENT/connected carries %v, want agent_connected", ev.Domain)
	}
	ev := nextAgentEvent(t, watch, "guest info")
	want := &apiv1.Domain{AgentConnected: true, GuestOsInfo: debianOS, GuestHostname: "vm",
		GuestInterfaces: []*apiv1.GuestInterface{{Name: "enp1s0", Mac: "52:54:00:00:00:01", IpAddresses: []string{"198.19.255.2", "fe80::1"}}}}
	if diff := cmp.Diff(want, agentPart(ev.Domain), protocmp.Transform()); diff != "" {
		t.Errorf("AGENT/guest info domain (-want +got):\n%s", diff)
	}
	if agent.timeout != DefaultAgentTimeout {
		t.Errorf("agent timeout = %v, want %v", agent.timeout, DefaultAgentTimeout)
	}

	// Unchanged answers change nothing: polls go on, the domain's change
	// time stays.
	changed := f.state(t).StateChangeTimeUnixNano
	calls := agent.callCount()
	waitFor(t, "three more polls", func() bool { return agent.callCount() >= calls+3 })
	if got := f.state(t).StateChangeTimeUnixNano; got != changed {
		t.Errorf("unchanged answers moved the domain's change time from %d to %d", changed, got)
	}

	// A failing poll keeps the last report; a new answer is broadcast.
	agent.set(hypervisor.GuestInfo{}, errors.New("guest agent is not responding"))
	calls = agent.callCount()
	waitFor(t, "a failed poll", func() bool { return agent.callCount() >= calls+2 })
	if d := f.state(t); d.GuestOsInfo.GetId() != "debian" || len(d.GuestInterfaces) != 1 {
		t.Errorf("after a failed poll: %v, want the last report", d)
	}
	next := debian
	next.Interfaces = []hypervisor.GuestInterface{{Name: "enp1s0", MAC: "52:54:00:00:00:01", Addresses: []string{"198.19.255.7"}}}
	agent.set(next, nil)
	if ev := nextAgentEvent(t, watch, "guest info"); ev.Domain.GuestInterfaces[0].GetIpAddresses()[0] != "198.19.255.7" {
		t.Errorf("new answer not reported: %v", ev.Domain.GuestInterfaces)
	}

	// Disconnected: the interfaces go (they were the agent's live view),
	// the OS stays known.
	f.agentEvent(t, hypervisor.AgentDisconnected)
	ev = nextAgentEvent(t, watch, "disconnected")
	want = &apiv1.Domain{GuestOsInfo: debianOS, GuestHostname: "vm"}
	if diff := cmp.Diff(want, agentPart(ev.Domain), protocmp.Transform()); diff != "" {
		t.Errorf("AGENT/disconnected domain (-want +got):\n%s", diff)
	}

	// Connected again and the domain ends: the final domain has no agent.
	f.agentEvent(t, hypervisor.AgentConnected)
	nextAgentEvent(t, watch, "guest info")
	if _, err := f.client.Kill(t.Context(), &apiv1.KillRequest{}); err != nil {
		t.Fatal(err)
	}
	final := f.waitDone(t)
	want = &apiv1.Domain{GuestOsInfo: debianOS, GuestHostname: "vm"}
	if diff := cmp.Diff(want, agentPart(final), protocmp.Transform()); diff != "" {
		t.Errorf("final domain's agent (-want +got):\n%s", diff)
	}
}

// An agent that does not answer holds only its poller: every call of the
// contract goes on, and its disconnect is recorded at once.
func TestGuestAgentThatHangsBlocksNothing(t *testing.T) {
	agent := &fakeAgent{info: debian, block: make(chan struct{})}
	f, watch := agentFixture(t, agent)
	t.Cleanup(func() { close(agent.block) })
	f.agentEvent(t, hypervisor.AgentConnected)
	nextAgentEvent(t, watch, "connected")
	waitFor(t, "the poller asking", func() bool { return agent.callCount() == 1 })

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := f.client.GetDomain(ctx, &apiv1.GetDomainRequest{}); err != nil {
		t.Errorf("GetDomain while the agent hangs: %v", err)
	}
	if _, err := f.sync(t); err != nil {
		t.Errorf("Sync while the agent hangs: %v", err)
	}
	if _, err := f.client.Pause(ctx, &apiv1.PauseRequest{}); err != nil {
		t.Errorf("Pause while the agent hangs: %v", err)
	}
	if _, err := f.client.Unpause(ctx, &apiv1.UnpauseRequest{}); err != nil {
		t.Errorf("Unpause while the agent hangs: %v", err)
	}
	f.agentEvent(t, hypervisor.AgentDisconnected)
	if d := f.state(t); d.AgentConnected {
		t.Errorf("after the disconnect: %v", d)
	}
}

// An answer that arrives after the agent disconnected is not recorded: the
// poller's context ended with the connection.
func TestGuestInfoAfterDisconnectIsDropped(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f.srv.guestInfoRead(ctx, debian)
	if d := f.state(t); d.GuestOsInfo != nil || len(d.GuestInterfaces) != 0 {
		t.Errorf("a late answer was recorded: %v", d)
	}
}

// agentPart is d's guest agent fields alone.
func agentPart(d *apiv1.Domain) *apiv1.Domain {
	return &apiv1.Domain{AgentConnected: d.AgentConnected, GuestOsInfo: d.GuestOsInfo, GuestHostname: d.GuestHostname, GuestInterfaces: d.GuestInterfaces}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// A hostile guest agent's report (1 MiB strings, bytes that are not UTF-8,
// 10,000 interfaces of 10,000 addresses' worth) reaches the watch cut to
// the API's bounds: without the cut, protobuf refuses the invalid UTF-8 and
// the report passes gRPC's 4 MiB message limit, and the node would hear
// nothing of the domain any more.
func TestGuestAgentReportIsBounded(t *testing.T) {
	mib := strings.Repeat("x", 1<<20)
	hostile := hypervisor.GuestInfo{
		OS: hypervisor.GuestOS{ID: mib, Name: mib, PrettyName: mib, Version: mib, VersionID: mib,
			KernelRelease: mib, KernelVersion: mib, Machine: "x86_64\xff"},
		Hostname: mib,
	}
	var addrs []string
	for i := range 10000 {
		addrs = append(addrs, fmt.Sprintf("198.19.%d.%d", i/256, i%256))
	}
	for i := range 10000 {
		hostile.Interfaces = append(hostile.Interfaces, hypervisor.GuestInterface{Name: mib[:1000], MAC: "02:00:00:00:00:01", Addresses: addrs[:i%100]})
	}
	hostile.Interfaces[0].Addresses = append([]string{"fe80::1%" + mib}, addrs...)
	agent := &fakeAgent{info: hostile}
	f, watch := agentFixture(t, agent)
	f.agentEvent(t, hypervisor.AgentConnected)
	ev := nextAgentEvent(t, watch, "guest info")
	d := ev.Domain
	if n := proto.Size(ev); n > 2<<20 {
		t.Errorf("the event has %d bytes", n)
	}
	if got := d.GuestOsInfo.GetName(); len(got) != virtv1.MaxGuestStringLength {
		t.Errorf("os name of %d bytes, want %d", len(got), virtv1.MaxGuestStringLength)
	}
	if got := d.GuestOsInfo.GetMachine(); got != "x86_64\uFFFD" {
		t.Errorf("machine %q, want the invalid byte replaced", got)
	}
	if len(d.GuestHostname) != virtv1.MaxGuestStringLength {
		t.Errorf("hostname of %d bytes", len(d.GuestHostname))
	}
	if n := len(d.GuestInterfaces); n != maxReportedInterfaces {
		t.Errorf("%d interfaces, want %d", n, maxReportedInterfaces)
	}
	first := d.GuestInterfaces[0].GetIpAddresses()
	if len(first) != maxReportedAddresses || len(first[0]) != virtv1.MaxIPAddressLength {
		t.Errorf("first interface: %d addresses, the first of %d bytes", len(first), len(first[0]))
	}
}
