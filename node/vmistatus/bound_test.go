package vmistatus

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// runningStatus is Running's status, for tests that do not look at what was
// dropped.
func runningStatus(vmi *virtv1.VirtualMachineInstance, pod *corev1.Pod, d *apiv1.Domain, info *apiv1.InfoResponse, now metav1.Time) *virtv1.VirtualMachineInstanceStatus {
	s, _ := Running(vmi, pod, d, info, now)
	return s
}

// manyAddresses are n distinct valid addresses in 198.18.0.0/15.
func manyAddresses(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("198.19.%d.%d", i/256, i%256)
	}
	return out
}

// hostile is withAgent() whose agent lies in every way a report can.
func hostile() *apiv1.Domain {
	mib := strings.Repeat("x", 1<<20)
	d := withAgent()
	d.Reason = mib // the launcher's word, quoted in a condition when paused
	d.GuestOsInfo = &apiv1.GuestOSInfo{Id: mib, Name: mib, PrettyName: mib, Version: mib, VersionId: mib,
		KernelRelease: mib, KernelVersion: mib, Machine: "x86_64\xff"}
	d.GuestInterfaces[0].Name = mib
	d.GuestInterfaces[0].IpAddresses = append([]string{"not-an-ip", "198.19.255.2\x00", "fe80::1%" + mib}, manyAddresses(10000)...)
	d.GuestInterfaces[1].Mac = "hello"
	for i := range 10000 {
		d.GuestInterfaces = append(d.GuestInterfaces, &apiv1.GuestInterface{
			Name: fmt.Sprintf("veth%d", i), Mac: fmt.Sprintf("02:00:00:00:%02x:%02x", i/256, i%256), IpAddresses: []string{"198.18.0.1"}})
	}
	return d
}

// withinBounds fails t for every value of s that virt-apiserver's validation
// of the same bounds would refuse.
func withinBounds(t *testing.T, s *virtv1.VirtualMachineInstanceStatus) {
	t.Helper()
	if len(s.Interfaces) > virtv1.MaxStatusInterfaces {
		t.Errorf("%d interfaces, bound %d", len(s.Interfaces), virtv1.MaxStatusInterfaces)
	}
	for i, iface := range s.Interfaces {
		if iface.IPAddress != "" && !validAddress(iface.IPAddress) {
			t.Errorf("interfaces[%d].ipAddress %.80q is not an address", i, iface.IPAddress)
		}
		if len(iface.IPAddresses) > virtv1.MaxInterfaceIPAddresses {
			t.Errorf("interfaces[%d] has %d addresses, bound %d", i, len(iface.IPAddresses), virtv1.MaxInterfaceIPAddresses)
		}
		for j, a := range iface.IPAddresses {
			if !validAddress(a) {
				t.Errorf("interfaces[%d].ipAddresses[%d] %.80q is not an address", i, j, a)
			}
		}
		if len(iface.InterfaceName) > virtv1.MaxGuestStringLength || !utf8.ValidString(iface.InterfaceName) {
			t.Errorf("interfaces[%d].interfaceName has %d bytes", i, len(iface.InterfaceName))
		}
		if iface.MAC != "" && boundMAC(iface.MAC, &Dropped{}) == "" {
			t.Errorf("interfaces[%d].mac %q is not a MAC", i, iface.MAC)
		}
	}
	os := s.GuestOSInfo
	for _, f := range []string{os.Name, os.KernelRelease, os.Version, os.PrettyName, os.VersionID, os.KernelVersion, os.Machine, os.ID} {
		if len(f) > virtv1.MaxGuestStringLength || !utf8.ValidString(f) {
			t.Errorf("a guestOSInfo field has %d bytes or is not UTF-8", len(f))
		}
	}
	for _, c := range s.Conditions {
		if len(c.Message) > virtv1.MaxConditionMessageLength || len(c.Reason) > virtv1.MaxConditionReasonLength {
			t.Errorf("condition %s: reason of %d bytes, message of %d", c.Type, len(c.Reason), len(c.Message))
		}
	}
}

func TestRunningBoundsAHostileReport(t *testing.T) {
	for _, state := range []apiv1.DomainState{apiv1.DomainState_DOMAIN_STATE_RUNNING, apiv1.DomainState_DOMAIN_STATE_PAUSED} {
		t.Run(state.String(), func(t *testing.T) {
			d := hostile()
			d.State = state
			vmi := scheduled()
			vmi.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}
			s, dropped := Running(vmi, pod(), d, info, t1)
			withinBounds(t, s)

			// The rest of the status is written as for any guest.
			if s.Phase != virtv1.Running {
				t.Errorf("phase %s, want Running", s.Phase)
			}
			if c := s.Condition(virtv1.VirtualMachineInstanceAgentConnected); c == nil || c.Status != corev1.ConditionTrue {
				t.Errorf("AgentConnected = %v, want True", c)
			}
			nic := s.Interfaces[0]
			if nic.Name != "default" || nic.MAC != "52:54:00:12:34:56" || nic.InterfaceName != strings.Repeat("x", virtv1.MaxGuestStringLength) {
				t.Errorf("the spec's NIC: %+v", nic)
			}
			// The garbage is gone, the first 16 real addresses stay; the
			// primary is the first valid IPv4 one.
			if nic.IPAddress != "198.19.0.0" || len(nic.IPAddresses) != virtv1.MaxInterfaceIPAddresses || nic.IPAddresses[0] != "198.19.0.0" {
				t.Errorf("the spec's NIC has primary %q and %d addresses starting %v", nic.IPAddress, len(nic.IPAddresses), nic.IPAddresses[:1])
			}
			if s.Interfaces[1].MAC != "" || s.Interfaces[1].InterfaceName != "br-guest" {
				t.Errorf("the guest's bridge with a MAC that is none: %+v", s.Interfaces[1])
			}
			if len(s.Interfaces) != virtv1.MaxStatusInterfaces {
				t.Errorf("%d interfaces, want the bound %d filled", len(s.Interfaces), virtv1.MaxStatusInterfaces)
			}
			if s.GuestOSInfo.Machine != "x86_64\uFFFD" {
				t.Errorf("guestOSInfo.machine %q: want its invalid byte replaced", s.GuestOSInfo.Machine)
			}

			want := Dropped{Addresses: 3, MACs: 1, ExtraAddresses: 10000 - virtv1.MaxInterfaceIPAddresses,
				ExtraInterfaces: 10000 - (maxGuestInterfacesRead - 2) + (maxGuestInterfacesRead - virtv1.MaxStatusInterfaces), Cut: 9}
			if state == apiv1.DomainState_DOMAIN_STATE_PAUSED {
				want.Cut += 2 // the libvirt reason in the Ready and Paused messages
			}
			got := dropped
			got.Examples = nil
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("dropped %+v, want %+v", got, want)
			}
			msg := dropped.String()
			if len(msg) > 1024 || !strings.Contains(msg, `"not-an-ip"`) || !strings.Contains(msg, "3 addresses that are not IP addresses") {
				t.Errorf("event message (%d bytes): %.300s", len(msg), msg)
			}
		})
	}
}

func TestRunningDropsNothingFromASaneReport(t *testing.T) {
	_, dropped := Running(scheduled(), pod(), withAgent(), info, t1)
	if !dropped.Empty() || dropped.String() != "" {
		t.Errorf("a sane report lost %+v: %s", dropped, dropped.String())
	}
}

// TestRunningKeepsValidPrimary: an IPv6-only interface whose first
// address is garbage gets its first valid address as primary.
func TestRunningKeepsValidPrimary(t *testing.T) {
	d := withAgent()
	d.GuestInterfaces[1].IpAddresses = []string{"garbage", "fd00::1"}
	s, dropped := Running(scheduled(), pod(), d, info, t1)
	if got := s.Interfaces[1]; got.IPAddress != "fd00::1" || len(got.IPAddresses) != 1 {
		t.Errorf("guest bridge: %+v", got)
	}
	if dropped.Addresses != 1 || len(dropped.Examples) != 1 || dropped.Examples[0] != `"garbage"` {
		t.Errorf("dropped %+v", dropped)
	}
}

func TestEndedBoundsTheLaunchersMessage(t *testing.T) {
	vmi := scheduled()
	vmi.Status = *runningStatus(vmi, pod(), withAgent(), info, t0)
	s := Ended(vmi, SyncFailed(fmt.Errorf("%s", strings.Repeat("é", 1<<20))), t1)
	withinBounds(t, s)
	if s.Phase != virtv1.Failed {
		t.Errorf("phase %s, want Failed", s.Phase)
	}
}

func TestTruncateKeepsCharacters(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"}, // é is two bytes: not split
		{"éé", 3, "é"},
		{"", 0, ""},
	} {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
