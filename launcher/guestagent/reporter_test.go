package guestagent

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

// fakeAgent stands in for libvirt's guest agent calls.
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

// reporter is a Reporter of agent asked every 10 ms, and the count of its
// change notices.
func reporter(t *testing.T, agent *fakeAgent) (*Reporter, func() int) {
	var mu sync.Mutex
	changes := 0
	r := New(agent, Config{Domain: "d", PollInterval: 10 * time.Millisecond, OnChange: func() {
		mu.Lock()
		defer mu.Unlock()
		changes++
	}})
	t.Cleanup(func() { r.SetConnected(t.Context(), false) })
	return r, func() int {
		mu.Lock()
		defer mu.Unlock()
		return changes
	}
}

func describe(r *Reporter) *apiv1.Domain {
	d := &apiv1.Domain{}
	r.Describe(d)
	return d
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

func TestReport(t *testing.T) {
	agent := &fakeAgent{info: debian}
	r, changes := reporter(t, agent)
	if d := describe(r); d.AgentConnected || d.GuestOsInfo != nil || agent.callCount() != 0 {
		t.Fatalf("before the agent connected: %v, %d calls", d, agent.callCount())
	}

	r.SetConnected(t.Context(), true)
	waitFor(t, "the first report", func() bool { return changes() == 1 })
	want := &apiv1.Domain{AgentConnected: true, GuestOsInfo: debianOS, GuestHostname: "vm",
		GuestInterfaces: []*apiv1.GuestInterface{{Name: "enp1s0", Mac: "52:54:00:00:00:01", IpAddresses: []string{"198.19.255.2", "fe80::1"}}}}
	if diff := cmp.Diff(want, describe(r), protocmp.Transform()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if agent.timeout != DefaultTimeout {
		t.Errorf("agent timeout = %v, want %v", agent.timeout, DefaultTimeout)
	}

	// Unchanged answers change nothing; a failing poll keeps the last
	// report; a new answer is a change.
	calls := agent.callCount()
	waitFor(t, "three more polls", func() bool { return agent.callCount() >= calls+3 })
	agent.set(hypervisor.GuestInfo{}, errors.New("guest agent is not responding"))
	calls = agent.callCount()
	waitFor(t, "two failed polls", func() bool { return agent.callCount() >= calls+2 })
	if n := changes(); n != 1 {
		t.Errorf("%d change notices for one report", n)
	}
	if d := describe(r); d.GuestOsInfo.GetId() != "debian" || len(d.GuestInterfaces) != 1 {
		t.Errorf("after a failed poll: %v, want the last report", d)
	}
	next := debian
	next.Interfaces = []hypervisor.GuestInterface{{Name: "enp1s0", MAC: "52:54:00:00:00:01", Addresses: []string{"198.19.255.7"}}}
	agent.set(next, nil)
	waitFor(t, "the new report", func() bool { return changes() == 2 })
	if got := describe(r).GuestInterfaces[0].GetIpAddresses(); len(got) != 1 || got[0] != "198.19.255.7" {
		t.Errorf("new answer not kept: %v", got)
	}

	// Disconnected: the interfaces go (they were the agent's live view),
	// the OS stays known.
	r.SetConnected(t.Context(), false)
	want = &apiv1.Domain{GuestOsInfo: debianOS, GuestHostname: "vm"}
	if diff := cmp.Diff(want, describe(r), protocmp.Transform()); diff != "" {
		t.Errorf("after the disconnect (-want +got):\n%s", diff)
	}
}

// An agent that does not answer holds only its poller: its disconnect and
// every Describe go on.
func TestAgentThatHangsBlocksNothing(t *testing.T) {
	agent := &fakeAgent{info: debian, block: make(chan struct{})}
	r, _ := reporter(t, agent)
	t.Cleanup(func() { close(agent.block) })
	r.SetConnected(t.Context(), true)
	waitFor(t, "the poller asking", func() bool { return agent.callCount() == 1 })
	done := make(chan struct{})
	go func() {
		defer close(done)
		describe(r)
		r.SetConnected(t.Context(), false)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Describe or the disconnect waited for the hung agent")
	}
	if describe(r).AgentConnected {
		t.Error("still connected after the disconnect")
	}
}

// An answer that arrives after the agent disconnected is not recorded: the
// poller's context ended with the connection.
func TestAnswerAfterDisconnectIsDropped(t *testing.T) {
	r, _ := reporter(t, &fakeAgent{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if r.record(ctx, debian) {
		t.Error("a late answer counts as a change")
	}
	if d := describe(r); d.GuestOsInfo != nil || len(d.GuestInterfaces) != 0 {
		t.Errorf("a late answer was recorded: %v", d)
	}
}

// A hostile guest agent's report (1 MiB strings, bytes that are not UTF-8,
// 10,000 interfaces of 10,000 addresses' worth) is kept cut to the API's
// bounds: uncut, protobuf refuses the invalid UTF-8 and the report passes
// gRPC's 4 MiB message limit, and the node would hear nothing of the domain
// any more.
func TestReportIsBounded(t *testing.T) {
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
	r, _ := reporter(t, &fakeAgent{})
	if !r.record(t.Context(), hostile) {
		t.Fatal("the report was not recorded")
	}
	d := describe(r)
	if n := proto.Size(d); n > 2<<20 {
		t.Errorf("the report has %d bytes", n)
	}
	if _, err := proto.Marshal(d); err != nil {
		t.Errorf("the report does not marshal: %v", err)
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
	if n := len(d.GuestInterfaces); n != MaxReportedInterfaces {
		t.Errorf("%d interfaces, want %d", n, MaxReportedInterfaces)
	}
	first := d.GuestInterfaces[0].GetIpAddresses()
	if len(first) != MaxReportedAddresses || len(first[0]) != virtv1.MaxIPAddressLength {
		t.Errorf("first interface: %d addresses, the first of %d bytes", len(first), len(first[0]))
	}
}

func TestBoundedCutsAtACharacter(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"aé", 2, "a"}, // é is two bytes: not cut in half
		{"a\xffb", 10, "a\uFFFDb"},
	} {
		if got := bounded(tt.in, tt.n); got != tt.want {
			t.Errorf("bounded(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
