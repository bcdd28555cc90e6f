package vmistatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

var (
	agentOS = &apiv1.GuestOSInfo{Id: "debian", Name: "Debian GNU/Linux", PrettyName: "Debian GNU/Linux 12 (bookworm)",
		Version: "12 (bookworm)", VersionId: "12", KernelRelease: "6.1.0-41-cloud-amd64", KernelVersion: "#1 SMP", Machine: "x86_64"}
	statusOS = virtv1.VirtualMachineInstanceGuestOSInfo{ID: "debian", Name: "Debian GNU/Linux", PrettyName: "Debian GNU/Linux 12 (bookworm)",
		Version: "12 (bookworm)", VersionID: "12", KernelRelease: "6.1.0-41-cloud-amd64", KernelVersion: "#1 SMP", Machine: "x86_64"}
)

// withAgent is a running domain whose agent reports the guest's NIC (MAC
// in the guest's upper case), its private masquerade address and a bridge
// of the guest's own.
func withAgent() *apiv1.Domain {
	d := domain(apiv1.DomainState_DOMAIN_STATE_RUNNING, "booted")
	d.AgentConnected = true
	d.GuestOsInfo = agentOS
	d.GuestHostname = "vm"
	d.GuestInterfaces = []*apiv1.GuestInterface{
		{Name: "enp1s0", Mac: "52:54:00:12:34:56", IpAddresses: []string{"fe80::5054:ff:fe12:3456", "198.19.255.2"}},
		{Name: "br-guest", Mac: "02:42:c6:13:64:01", IpAddresses: []string{"198.19.100.1"}},
	}
	return d
}

func TestRunningWithGuestAgent(t *testing.T) {
	// The status Running writes for withAgent() on a scheduled VMI.
	agentStatus := func() *virtv1.VirtualMachineInstanceStatus {
		s, _ := Running(scheduled(), pod(), domain(apiv1.DomainState_DOMAIN_STATE_RUNNING, "booted"), info, t1)
		s.Conditions = append(s.Conditions, virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceAgentConnected, Status: corev1.ConditionTrue, LastTransitionTime: t1})
		s.GuestOSInfo = statusOS
		s.Interfaces[0].InterfaceName = "enp1s0"
		s.Interfaces[0].InfoSource = "domain, guest-agent"
		s.Interfaces = append(s.Interfaces, virtv1.VirtualMachineInstanceNetworkInterface{
			MAC: "02:42:c6:13:64:01", InterfaceName: "br-guest", IPAddress: "198.19.100.1", IPAddresses: []string{"198.19.100.1"}, InfoSource: "guest-agent"})
		return s
	}
	bridged := func() *virtv1.VirtualMachineInstance {
		vmi := scheduled()
		vmi.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}
		return vmi
	}
	running := func(s *virtv1.VirtualMachineInstanceStatus) *virtv1.VirtualMachineInstance {
		vmi := scheduled()
		vmi.Status = *s
		return vmi
	}

	tests := []struct {
		name string
		vmi  *virtv1.VirtualMachineInstance
		d    *apiv1.Domain
		want func(*virtv1.VirtualMachineInstanceStatus)
	}{
		{
			name: "connected: AgentConnected, guestOSInfo, the guest's name for the NIC; masquerade keeps the pod IP; the guest's own bridge follows",
			vmi:  scheduled(), d: withAgent(),
			want: func(*virtv1.VirtualMachineInstanceStatus) {},
		},
		{
			name: "the lease taken too: every source in order",
			vmi:  scheduled(),
			d: func() *apiv1.Domain {
				d := withAgent()
				d.Interfaces[0].DhcpAddress = "198.19.255.2"
				return d
			}(),
			want: func(s *virtv1.VirtualMachineInstanceStatus) { s.Interfaces[0].InfoSource = "domain, dhcp, guest-agent" },
		},
		{
			name: "bridge binding: the guest's addresses, its first IPv4 one primary",
			vmi:  bridged(),
			d: func() *apiv1.Domain {
				d := withAgent()
				d.GuestInterfaces[0].IpAddresses = []string{"fe80::5054:ff:fe12:3456", "198.18.0.7"}
				return d
			}(),
			want: func(s *virtv1.VirtualMachineInstanceStatus) {
				s.Interfaces[0].IPAddress = "198.18.0.7"
				s.Interfaces[0].IPAddresses = []string{"fe80::5054:ff:fe12:3456", "198.18.0.7"}
			},
		},
		{
			name: "bridge binding, IPv6 only: the first address primary",
			vmi:  bridged(),
			d: func() *apiv1.Domain {
				d := withAgent()
				d.GuestInterfaces[0].IpAddresses = []string{"fe80::5054:ff:fe12:3456"}
				return d
			}(),
			want: func(s *virtv1.VirtualMachineInstanceStatus) {
				s.Interfaces[0].IPAddress = "fe80::5054:ff:fe12:3456"
				s.Interfaces[0].IPAddresses = []string{"fe80::5054:ff:fe12:3456"}
			},
		},
		{
			name: "MAC addresses match whatever their case",
			vmi:  scheduled(),
			d: func() *apiv1.Domain {
				d := withAgent()
				d.Interfaces[0].Mac = "52:54:00:ab:cd:ef"
				d.GuestInterfaces[0].Mac = "52:54:00:AB:CD:EF"
				return d
			}(),
			want: func(s *virtv1.VirtualMachineInstanceStatus) { s.Interfaces[0].MAC = "52:54:00:ab:cd:ef" },
		},
		{
			name: "connected, no report yet: the condition only",
			vmi:  scheduled(),
			d: func() *apiv1.Domain {
				d := domain(apiv1.DomainState_DOMAIN_STATE_RUNNING, "booted")
				d.AgentConnected = true
				return d
			}(),
			want: func(s *virtv1.VirtualMachineInstanceStatus) {
				s.GuestOSInfo = virtv1.VirtualMachineInstanceGuestOSInfo{}
				s.Interfaces = s.Interfaces[:1]
				s.Interfaces[0].InterfaceName = ""
				s.Interfaces[0].InfoSource = "domain"
			},
		},
		{
			name: "disconnected: condition dropped, guestOSInfo kept, interfaces the domain's",
			vmi:  running(agentStatus()),
			d: func() *apiv1.Domain {
				d := domain(apiv1.DomainState_DOMAIN_STATE_RUNNING, "booted")
				d.GuestOsInfo = agentOS
				return d
			}(),
			want: func(s *virtv1.VirtualMachineInstanceStatus) {
				s.Conditions = s.Conditions[:3]
				s.Interfaces = s.Interfaces[:1]
				s.Interfaces[0].InterfaceName = ""
				s.Interfaces[0].InfoSource = "domain"
			},
		},
		{
			name: "a report without an OS keeps the one known",
			vmi:  running(agentStatus()),
			d: func() *apiv1.Domain {
				d := withAgent()
				d.GuestOsInfo = nil
				return d
			}(),
			want: func(*virtv1.VirtualMachineInstanceStatus) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := agentStatus()
			tt.want(want)
			got, _ := Running(tt.vmi, pod(), tt.d, info, t1)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Running() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunningWithGuestAgentIsStable(t *testing.T) {
	vmi := scheduled()
	vmi.Status = *runningStatus(vmi, pod(), withAgent(), info, t0)
	again, _ := Running(vmi, pod(), withAgent(), info, t1)
	if !equality.Semantic.DeepEqual(&vmi.Status, again) {
		t.Errorf("a second observation of the same agent report changed the status:\n%s", cmp.Diff(&vmi.Status, again))
	}
}

func TestEndedDropsAgentConnected(t *testing.T) {
	vmi := scheduled()
	vmi.Status = *runningStatus(vmi, pod(), withAgent(), info, t0)
	got := Ended(vmi, End{virtv1.Succeeded, virtv1.ReasonGuestShutdown, "The guest powered off"}, t1)
	if c := got.Condition(virtv1.VirtualMachineInstanceAgentConnected); c != nil {
		t.Errorf("AgentConnected = %+v after the end, want none", c)
	}
	if got.GuestOSInfo != statusOS || got.Interfaces[0].InterfaceName != "enp1s0" {
		t.Errorf("guestOSInfo or interfaces lost at the end: %+v, %+v", got.GuestOSInfo, got.Interfaces)
	}
}
