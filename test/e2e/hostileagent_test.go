package e2e

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestHostileGuestAgent: a guest whose agent lies (the test guest's
// virt.hostileagent=1: an address that is not an IP, an interface with
// 10,000 addresses, 1,003 interfaces, a MAC that is not one, 1 MiB
// strings) gets its report cut on the way into the VMI's status: the
// interfaces within the API's bounds, no address that is not an IP, a
// GuestReportCut warning event, and the rest of the status (the phase, the
// Paused condition set and cleared through the API) still written.
func TestHostileGuestAgent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vmi.Name = "hostileagent"
	kb := vmi.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs = strings.ReplaceAll(kb.KernelArgs, "vmi-tiny", vmi.Name) + " virt.hostileagent=1"
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.WaitVMIRunning(ctx, ns, vmi.Name); err != nil {
		t.Fatal(err)
	}
	// The agent's first report follows its connection at once; the
	// handler writes it with the next status.
	got, err := cluster.WaitVMI(ctx, ns, vmi.Name, 2*time.Minute, "AgentConnected with the agent's interfaces",
		func(v *virtv1.VirtualMachineInstance) (bool, error) {
			if framework.Condition(v, virtv1.VirtualMachineInstanceAgentConnected) != corev1.ConditionTrue {
				return false, nil
			}
			for _, i := range v.Status.Interfaces {
				if i.Name == "eth-many" || i.InterfaceName == "eth-many" {
					return true, nil
				}
			}
			return false, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	checkCappedInterfaces(t, got)

	// A later status write still goes through: pause and unpause set and
	// clear the Paused condition, and the phase stays Running.
	c := cluster.Virt
	if err := put(ctx, c, ns, "virtualmachineinstances", vmi.Name, "pause", &virtv1.PauseOptions{}); err != nil {
		t.Fatalf("pause: %v", err)
	}
	if _, err := cluster.WaitVMI(ctx, ns, vmi.Name, time.Minute, "Paused condition True", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return framework.Condition(v, virtv1.VirtualMachineInstancePaused) == corev1.ConditionTrue, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, c, ns, "virtualmachineinstances", vmi.Name, "unpause", &virtv1.UnpauseOptions{}); err != nil {
		t.Fatalf("unpause: %v", err)
	}
	after, err := cluster.WaitVMI(ctx, ns, vmi.Name, time.Minute, "Paused condition gone", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return framework.Condition(v, virtv1.VirtualMachineInstancePaused) != corev1.ConditionTrue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if after.Status.Phase != virtv1.Running {
		t.Errorf("after pause and unpause the VMI is %s, want Running", after.Status.Phase)
	}
	// The agent reports again after the resume (it is polled every 10 s):
	// the status stays within bounds.
	checkCappedInterfaces(t, after)

	// The node says it cut the report.
	if err := framework.WaitFor(ctx, time.Minute, "a GuestReportCut event", func(ctx context.Context) (bool, error) {
		events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(got.UID)})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == "GuestReportCut" && e.Type == corev1.EventTypeWarning {
				t.Logf("event: %s", e.Message)
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Error(err)
	}
}

// checkCappedInterfaces fails the test unless vmi's status interfaces are
// within the API's bounds and carry only IP addresses.
func checkCappedInterfaces(t *testing.T, vmi *virtv1.VirtualMachineInstance) {
	t.Helper()
	ifaces := vmi.Status.Interfaces
	t.Logf("status.interfaces: %d", len(ifaces))
	if len(ifaces) > virtv1.MaxStatusInterfaces {
		t.Errorf("status has %d interfaces, more than %d", len(ifaces), virtv1.MaxStatusInterfaces)
	}
	for _, i := range ifaces {
		if len(i.IPAddresses) > virtv1.MaxInterfaceIPAddresses {
			t.Errorf("interface %.20q has %d addresses, more than %d", i.Name, len(i.IPAddresses), virtv1.MaxInterfaceIPAddresses)
		}
		for _, s := range []string{i.Name, i.InterfaceName, i.MAC} {
			if len(s) > virtv1.MaxGuestStringLength {
				t.Errorf("interface string of %d bytes, more than %d", len(s), virtv1.MaxGuestStringLength)
			}
		}
		for _, a := range append([]string{i.IPAddress}, i.IPAddresses...) {
			if a == "" {
				continue
			}
			if _, err := netip.ParseAddr(a); err != nil {
				t.Errorf("interface %.20q has address %q, which is not an IP", i.Name, a)
			}
		}
	}
}
