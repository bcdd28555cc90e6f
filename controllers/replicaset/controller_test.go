package replicaset

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

var gvr = virtv1.SchemeGroupVersion.WithResource("virtualmachineinstancereplicasets")

// TestEventsReachTheOwner: instance events requeue the replica set that
// controls the instance (and only if it is that replica set, by UID), and an
// orphan's the replica sets that select it.
func TestEventsReachTheOwner(t *testing.T) {
	rs := newRS(1)
	tests := []struct {
		name  string
		event func(f *fixture)
		want  int
	}{
		{"own instance added", func(f *fixture) { f.ctrl.addVMI(instance(rs, "a", time.Minute)) }, 1},
		{"orphan added", func(f *fixture) { f.ctrl.addVMI(instance(rs, "a", time.Minute, orphan)) }, 1},
		{"unrelated orphan added", func(f *fixture) {
			f.ctrl.addVMI(instance(rs, "a", time.Minute, orphan, relabel(map[string]string{"app": "db"})))
		}, 0},
		{"instance of a former replica set of the name", func(f *fixture) {
			vmi := instance(rs, "a", time.Minute)
			vmi.OwnerReferences[0].UID = "old-rs-uid"
			f.ctrl.addVMI(vmi)
		}, 0},
		{"resync", func(f *fixture) { vmi := instance(rs, "a", time.Minute); f.ctrl.updateVMI(vmi, vmi) }, 0},
		{"own instance deleted", func(f *fixture) {
			f.ctrl.deleteVMI(cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: instance(rs, "a", time.Minute)})
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, DefaultBurst, rs)
			tc.event(f)
			if got := f.ctrl.queue.Len(); got != tc.want {
				t.Errorf("queue length = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestNewInstanceIsTheTemplate: the instance owns copies, not the
// template's maps.
func TestNewInstanceIsTheTemplate(t *testing.T) {
	rs := newRS(1)
	vmi := NewInstance(rs)
	vmi.Labels["x"] = "y"
	vmi.Spec.Hostname = "changed"
	if _, ok := rs.Spec.Template.ObjectMeta.Labels["x"]; ok || rs.Spec.Template.Spec.Hostname != "web" {
		t.Error("changing the instance changed the template")
	}
}
