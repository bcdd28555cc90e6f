package virtualmachineinstance

import (
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/install"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apis/virtualization/validation"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// validateStatusWrites makes the fake API refuse a status write as
// virt-apiserver does (422 with the field paths), with its validation, and
// counts the refusals.
func (f *fixture) validateStatusWrites() *atomic.Int32 {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	refused := &atomic.Int32{}
	f.virt.PrependReactor("update", "virtualmachineinstances", func(action k8stesting.Action) (bool, runtime.Object, error) {
		ua := action.(k8stesting.UpdateAction)
		if ua.GetSubresource() != "status" {
			return false, nil, nil
		}
		obj := ua.GetObject().(*virtv1.VirtualMachineInstance)
		cur, err := f.virt.Tracker().Get(vmiGVR, ua.GetNamespace(), obj.Name)
		if err != nil {
			return false, nil, nil
		}
		var next, old virtualization.VirtualMachineInstance
		if err := scheme.Convert(obj, &next, nil); err != nil {
			return true, nil, err
		}
		if err := scheme.Convert(cur, &old, nil); err != nil {
			return true, nil, err
		}
		next.Spec = old.Spec // what the status strategy does
		if errs := validation.ValidateVirtualMachineInstanceStatusUpdate(&next, &old); len(errs) > 0 {
			refused.Add(1)
			return true, nil, apierrors.NewInvalid(virtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance").GroupKind(), obj.Name, errs)
		}
		return false, nil, nil
	})
	return refused
}

// TestHostileGuestReportCannotBlockStatus: a guest agent reporting an
// address that is not one, 10,000 addresses, 10,000 interfaces and 1 MiB
// strings, through the launcher's real gRPC contract, gets a capped report
// into the status; the status writes are never refused by the API's
// validation, so the VMI's phase and conditions keep being written; one
// warning event says what was dropped, however often the guest changes its
// lies.
func TestHostileGuestReportCannotBlockStatus(t *testing.T) {
	vmi := scheduledVMI("vm")
	pod := launcherPodOf(vmi)
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
	refused := f.validateStatusWrites()
	launcher := f.launcher(vmi, pod)
	f.start()
	f.waitVMI("vm", "Running", isRunning)

	mib := strings.Repeat("x", 1<<20)
	addrs := []string{"not-an-ip"}
	for i := range 10000 {
		addrs = append(addrs, fmt.Sprintf("198.19.%d.%d", i/256, i%256))
	}
	ifaces := []*apiv1.GuestInterface{{Name: mib, Mac: "52:54:00:00:01:00", IpAddresses: addrs}}
	for i := range 10000 {
		ifaces = append(ifaces, &apiv1.GuestInterface{Name: fmt.Sprintf("veth%d", i), Mac: "hello", IpAddresses: []string{"also not an ip"}})
	}
	// Three 1 MiB strings and the rest stay under gRPC's 4 MiB message.
	launcher.Agent(&apiv1.GuestOSInfo{Name: mib, PrettyName: mib, Id: "hostile"}, ifaces)

	got := f.waitVMI("vm", "the guest's report in the status", func(v *virtv1.VirtualMachineInstance) bool {
		return v != nil && v.Status.GuestOSInfo.ID == "hostile"
	})
	if c := condition(got, virtv1.VirtualMachineInstanceAgentConnected); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("AgentConnected = %+v, want True", c)
	}
	if n := len(got.Status.Interfaces); n != virtv1.MaxStatusInterfaces {
		t.Errorf("%d interfaces, want the bound %d", n, virtv1.MaxStatusInterfaces)
	}
	nic := got.Status.Interfaces[0]
	if len(nic.InterfaceName) != virtv1.MaxGuestStringLength || len(got.Status.GuestOSInfo.Name) != virtv1.MaxGuestStringLength {
		t.Errorf("interfaceName of %d bytes, guestOSInfo.name of %d: want both cut to %d",
			len(nic.InterfaceName), len(got.Status.GuestOSInfo.Name), virtv1.MaxGuestStringLength)
	}
	// Masquerade: the spec's NIC keeps the pod's address.
	if nic.IPAddress != "198.18.0.9" {
		t.Errorf("the masqueraded NIC's address %q, want the pod's", nic.IPAddress)
	}
	for i, iface := range got.Status.Interfaces {
		if len(iface.IPAddresses) > virtv1.MaxInterfaceIPAddresses || iface.MAC == "hello" {
			t.Fatalf("interfaces[%d]: %d addresses, MAC %q", i, len(iface.IPAddresses), iface.MAC)
		}
		for _, a := range iface.IPAddresses {
			if _, err := netip.ParseAddr(a); err != nil {
				t.Fatalf("interfaces[%d] has address %q", i, a)
			}
		}
	}

	// The rest of the status keeps being written.
	launcher.Event(apiv1.EventType_EVENT_TYPE_SUSPENDED, "paused", apiv1.DomainState_DOMAIN_STATE_PAUSED, "user")
	f.waitVMI("vm", "Paused", func(v *virtv1.VirtualMachineInstance) bool {
		c := condition(v, virtv1.VirtualMachineInstancePaused)
		return c != nil && c.Status == corev1.ConditionTrue
	})

	// Another lie: the status follows, the event is not repeated.
	launcher.Agent(&apiv1.GuestOSInfo{Name: mib, Id: "hostile-2"}, ifaces[:2])
	f.waitVMI("vm", "the second report in the status", func(v *virtv1.VirtualMachineInstance) bool {
		return v != nil && v.Status.GuestOSInfo.ID == "hostile-2"
	})
	if n := refused.Load(); n != 0 {
		t.Errorf("the API refused %d status writes", n)
	}
	var warned []string
	for _, e := range f.eventList() {
		if strings.Contains(e, " "+ReasonGuestReportCut+" ") {
			warned = append(warned, e)
		}
	}
	// The masqueraded NIC's own addresses are not used: the others' are
	// what is dropped.
	if len(warned) != 1 || !strings.Contains(warned[0], `"also not an ip"`) || len(warned[0]) > 2048 {
		t.Errorf("want one short %s event quoting the bad address, got %d: %.500q", ReasonGuestReportCut, len(warned), warned)
	}
}

// TestUnboundedStatusIsRefused keeps the test above honest: the fake API
// refuses what virt-apiserver refuses.
func TestUnboundedStatusIsRefused(t *testing.T) {
	vmi := scheduledVMI("vm")
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
	refused := f.validateStatusWrites()
	bad := vmi.DeepCopy()
	bad.Status.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default", IPAddresses: []string{"not-an-ip"}}}
	_, err := f.virt.VirtualizationV1().VirtualMachineInstances(testNS).UpdateStatus(t.Context(), bad, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || refused.Load() != 1 {
		t.Errorf("writing an address that is not one: %v, want 422", err)
	}
}
