// Package ownershiptest lets a status writer's unit tests check every write
// the writer makes against internal/ownership, without each test asserting
// it: Guard watches the fake clientset the writer is given.
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

// Guard fails t for every VMI status write through virt that changes a field
// w does not own, comparing the written status with the one stored before.
// It only observes: the write itself goes on to the clientset's other
// reactors.
func Guard(t Reporter, virt *virtfake.Clientset, w ownership.Writer) {
	gvr := virtv1.SchemeGroupVersion.WithResource("virtualmachineinstances")
	virt.PrependReactor("update", "virtualmachineinstances", func(action k8stesting.Action) (bool, runtime.Object, error) {
		update := action.(k8stesting.UpdateAction)
		if update.GetSubresource() != "status" {
			return false, nil, nil
		}
		written := update.GetObject().(*virtv1.VirtualMachineInstance)
		stored, err := virt.Tracker().Get(gvr, written.Namespace, written.Name)
		if err != nil {
			return false, nil, nil // the clientset answers the write's error itself
		}
		old := stored.(*virtv1.VirtualMachineInstance)
		if foreign := ownership.Foreign(w, &old.Status, &written.Status); foreign != nil {
			t.Errorf("%s wrote fields of VMI %s/%s it does not own: %v (internal/ownership)", w, written.Namespace, written.Name, foreign)
		}
		return false, nil, nil
	})
}
