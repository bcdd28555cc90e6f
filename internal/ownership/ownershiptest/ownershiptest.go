// Package ownershiptest lets a status writer's unit tests check every write
// the writer makes against internal/ownership, without each test asserting
// it: Guard watches the fake clientset the writer is given. It runs the
// same Check as virt-apiserver's admission (apiserver/admission/
// fieldownership), so a write these tests let through is one the server
// takes.
package ownershiptest

import (
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtfake "kubevirt.dev/virt/generated/clientset/versioned/fake"
	"kubevirt.dev/virt/internal/ownership"
)

// Reporter is the part of testing.TB Guard reports through.
type Reporter interface {
	Errorf(format string, args ...any)
}

// Guard fails t for every VMI and VM status write through virt that leaves
// w's rows, comparing the written status with the one stored before. It
// only observes: the write itself goes on to the clientset's other
// reactors. For the handler, use GuardOn with its node.
func Guard(t Reporter, virt *virtfake.Clientset, w ownership.Writer) {
	GuardOn(t, virt, w, "")
}

// GuardOn is Guard for a writer whose credentials name node.
func GuardOn(t Reporter, virt *virtfake.Clientset, w ownership.Writer, node string) {
	vmis := virtv1.SchemeGroupVersion.WithResource("virtualmachineinstances")
	virt.PrependReactor("update", "virtualmachineinstances", func(action k8stesting.Action) (bool, runtime.Object, error) {
		update := action.(k8stesting.UpdateAction)
		if update.GetSubresource() != "status" {
			return false, nil, nil
		}
		written := update.GetObject().(*virtv1.VirtualMachineInstance)
		stored, err := virt.Tracker().Get(vmis, written.Namespace, written.Name)
		if err != nil {
			return false, nil, nil // the clientset answers the write's error itself
		}
		old := stored.(*virtv1.VirtualMachineInstance)
		if v := ownership.Check(w, node, &old.Status, &written.Status); v != nil {
			t.Errorf("%s wrote fields of VMI %s/%s it does not own: %v (internal/ownership)", w, written.Namespace, written.Name, v)
		}
		return false, nil, nil
	})
	vms := virtv1.SchemeGroupVersion.WithResource("virtualmachines")
	virt.PrependReactor("update", "virtualmachines", func(action k8stesting.Action) (bool, runtime.Object, error) {
		update := action.(k8stesting.UpdateAction)
		if update.GetSubresource() != "status" {
			return false, nil, nil
		}
		written := update.GetObject().(*virtv1.VirtualMachine)
		stored, err := virt.Tracker().Get(vms, written.Namespace, written.Name)
		if err != nil {
			return false, nil, nil
		}
		old := stored.(*virtv1.VirtualMachine)
		if v := ownership.CheckVM(w, &old.Status, &written.Status); v != nil {
			t.Errorf("%s wrote fields of VM %s/%s it does not own: %v (internal/ownership)", w, written.Namespace, written.Name, v)
		}
		return false, nil, nil
	})
}
