package validation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestStatusGuestReportBounds: a status write whose guest report passes the
// bounds virt-handler cuts to (apis/virtualization/v1) is refused at the
// field's path, one at the bound is accepted, and a status stored beyond
// them does not block a write that leaves that part as it was.
func TestStatusGuestReportBounds(t *testing.T) {
	running := func() *virtualization.VirtualMachineInstance {
		v := validVMI()
		v.ResourceVersion = "1"
		v.Status.SetPhase(virtualization.Running, "", metav1.Unix(100, 0))
		v.Status.NodeName = "node-1"
		v.Status.Interfaces = []virtualization.VirtualMachineInstanceNetworkInterface{{
			Name: "default", MAC: "52:54:00:12:34:56", IPAddress: "198.18.0.7", IPAddresses: []string{"198.18.0.7"}}}
		return v
	}
	addrs := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("198.19.%d.%d", i/256, i%256))
		}
		return out
	}
	ifaces := func(n int) []virtualization.VirtualMachineInstanceNetworkInterface {
		out := make([]virtualization.VirtualMachineInstanceNetworkInterface, n)
		for i := range out {
			out[i].InterfaceName = fmt.Sprintf("veth%d", i)
		}
		return out
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name      string
		mutate    func(*virtualization.VirtualMachineInstanceStatus)
		wantPaths []string
	}{
		{"within the bounds", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Interfaces = ifaces(virtv1.MaxStatusInterfaces)
			s.Interfaces[0].IPAddresses = addrs(virtv1.MaxInterfaceIPAddresses)
			s.Interfaces[0].InterfaceName = long(virtv1.MaxGuestStringLength)
			s.GuestOSInfo.PrettyName = long(virtv1.MaxGuestStringLength)
		}, nil},
		{"an address that is not one", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Interfaces[0].IPAddresses = []string{"198.18.0.7", "not-an-ip"}
		}, []string{"status.interfaces[0].ipAddresses[1]"}},
		{"a primary address that is not one", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Interfaces[0].IPAddress = "hello"
		}, []string{"status.interfaces[0].ipAddress"}},
		{"a long address with a zone", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Interfaces[0].IPAddresses = []string{"fe80::1%" + long(1<<20)}
		}, []string{"status.interfaces[0].ipAddresses[0]"}},
		{"10,000 addresses", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Interfaces[0].IPAddresses = addrs(10000)
		}, []string{"status.interfaces[0].ipAddresses"}},
		{"too many interfaces", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Interfaces = ifaces(virtv1.MaxStatusInterfaces + 1)
		}, []string{"status.interfaces"}},
		{"a MAC that is none", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Interfaces[0].MAC = "hello"
		}, []string{"status.interfaces[0].mac"}},
		{"a 1 MiB interface name", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Interfaces[0].InterfaceName = long(1 << 20)
		}, []string{"status.interfaces[0].interfaceName"}},
		{"1 MiB OS strings", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.GuestOSInfo.Name = long(1 << 20)
			s.GuestOSInfo.KernelVersion = long(virtv1.MaxGuestStringLength + 1)
		}, []string{"status.guestOSInfo.name", "status.guestOSInfo.kernelVersion"}},
		{"an OS string that is not UTF-8", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.GuestOSInfo.Machine = "x86_64\xff"
		}, []string{"status.guestOSInfo.machine"}},
		{"a 1 MiB condition message", func(s *virtualization.VirtualMachineInstanceStatus) {
			s.Conditions = append(s.Conditions, virtualization.VirtualMachineInstanceCondition{
				Type: "Ready", Status: corev1.ConditionFalse, Reason: long(virtv1.MaxConditionReasonLength + 1), Message: long(1 << 20)})
		}, []string{"status.conditions[0].reason", "status.conditions[0].message"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := running()
			next := old.DeepCopy()
			tt.mutate(&next.Status)
			errs := ValidateVirtualMachineInstanceStatusUpdate(next, old)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if len(e.Error()) > 1024 {
					t.Errorf("an error of %d bytes: the answer quotes what it refuses at length", len(e.Error()))
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.wantPaths, ",") {
				t.Errorf("error paths = %v, want %v", got, tt.wantPaths)
			}
			if len(tt.wantPaths) == 0 {
				return
			}
			// Stored like that (before the bound existed), it blocks
			// nothing: a write of the phase alone goes through.
			stored := next.DeepCopy()
			ended := stored.DeepCopy()
			ended.Status.SetPhase(virtualization.Succeeded, "GuestShutdown", metav1.Unix(200, 0))
			if errs := ValidateVirtualMachineInstanceStatusUpdate(ended, stored); len(errs) != 0 {
				t.Errorf("ending a VMI stored beyond the bounds: %v", errs.ToAggregate())
			}
		})
	}
}
