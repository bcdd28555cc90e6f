package hypervisor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"libvirt.org/go/libvirt"
)

// What libvirt unpacked from virDomainGetGuestInfo's typed parameters (os.*,
// hostname, if.<n>.*) of a Debian guest becomes plain values: the loopback
// left out, MACs lower case, addresses in the agent's order.
func TestGuestInfo(t *testing.T) {
	gi := &libvirt.DomainGuestInfo{
		OS: &libvirt.DomainGuestInfoOS{
			IDSet: true, ID: "debian", NameSet: true, Name: "Debian GNU/Linux",
			PrettyNameSet: true, PrettyName: "Debian GNU/Linux 12 (bookworm)",
			VersionSet: true, Version: "12 (bookworm)", VersionIDSet: true, VersionID: "12",
			KernelReleaseSet: true, KernelRelease: "6.1.0-41-cloud-amd64",
			KernelVersionSet: true, KernelVersion: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)",
			MachineSet: true, Machine: "x86_64",
		},
		HostnameSet: true, Hostname: "debian-vm",
		Interfaces: []libvirt.DomainGuestInfoInterface{
			{NameSet: true, Name: "lo", HwaddrSet: true, Hwaddr: "00:00:00:00:00:00", Addrs: []libvirt.DomainGuestInfoIPAddress{
				{TypeSet: true, Type: "ipv4", AddrSet: true, Addr: "127.0.0.1", PrefixSet: true, Prefix: 8}}},
			{NameSet: true, Name: "enp1s0", HwaddrSet: true, Hwaddr: "52:54:00:AB:CD:EF", Addrs: []libvirt.DomainGuestInfoIPAddress{
				{TypeSet: true, Type: "ipv4", AddrSet: true, Addr: "198.19.255.2", PrefixSet: true, Prefix: 24},
				{TypeSet: true, Type: "ipv6", AddrSet: true, Addr: "fe80::5054:ff:feab:cdef", PrefixSet: true, Prefix: 64}}},
			{NameSet: true, Name: "wg0"},
		},
	}
	want := GuestInfo{
		OS: GuestOS{ID: "debian", Name: "Debian GNU/Linux", PrettyName: "Debian GNU/Linux 12 (bookworm)",
			Version: "12 (bookworm)", VersionID: "12", KernelRelease: "6.1.0-41-cloud-amd64",
			KernelVersion: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)", Machine: "x86_64"},
		Hostname: "debian-vm",
		Interfaces: []GuestInterface{
			{Name: "enp1s0", MAC: "52:54:00:ab:cd:ef", Addresses: []string{"198.19.255.2", "fe80::5054:ff:feab:cdef"}},
			{Name: "wg0"},
		},
	}
	if diff := cmp.Diff(want, guestInfo(gi)); diff != "" {
		t.Errorf("guestInfo mismatch (-want +got):\n%s", diff)
	}
	// An agent that reported nothing (types it lacks are simply absent).
	if diff := cmp.Diff(GuestInfo{}, guestInfo(&libvirt.DomainGuestInfo{})); diff != "" {
		t.Errorf("guestInfo of an empty report (-want +got):\n%s", diff)
	}
}

// The test driver has no guest agent: the agent events register all the
// same, asking fails, and the timeout is not an error.
func TestGuestAgentOnTestDriver(t *testing.T) {
	c, err := Open("test:///default")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer c.Close()
	if err := c.SetAgentTimeout("test", 5*time.Second); err != nil {
		t.Errorf("SetAgentTimeout: %v", err)
	}
	if _, err := c.GuestInfo("test"); err == nil {
		t.Error("GuestInfo on the test driver succeeded; want an error")
	}
	if _, err := c.GuestInfo("no-such-domain"); !IsNotFound(err) {
		t.Errorf("GuestInfo of a missing domain: %v, want not found", err)
	}
}
