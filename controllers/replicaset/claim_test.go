package replicaset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOrphansAreAdopted: a matching instance without a controller becomes
// the replica set's and counts, so nothing more is created.
func TestOrphansAreAdopted(t *testing.T) {
	rs := newRS(1)
	f := newFixture(t, DefaultBurst, rs, instance(rs, "loose", time.Hour, orphan, running("n1", true)))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	vmis := f.instances()
	if len(vmis) != 1 {
		t.Fatalf("%d instances, want the adopted one only", len(vmis))
	}
	if ref := metav1.GetControllerOf(vmis[0]); ref == nil || ref.UID != "rs-uid" {
		t.Errorf("controller of the adopted instance = %+v", ref)
	}
	if n := len(f.actions("get", "virtualmachineinstancereplicasets", "")); n != 1 {
		t.Errorf("asked the API %d times whether the replica set lives, want once before adopting", n)
	}
	if s := f.rs().Status; s.Replicas != 1 || s.ReadyReplicas != 1 {
		t.Errorf("status = %+v, want the adopted instance counted", s)
	}
}

// TestOthersInstancesAreNeverTouched: an instance that matches but has
// another controller is neither adopted nor counted nor deleted.
func TestOthersInstancesAreNeverTouched(t *testing.T) {
	rs := newRS(1)
	f := newFixture(t, DefaultBurst, rs, instance(rs, "theirs", time.Hour, controlledBy("other-uid")))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actions("patch", "virtualmachineinstances", "")) + len(f.actions("delete", "virtualmachineinstances", "")); n != 0 {
		t.Errorf("%d writes to another controller's instance", n)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")); n != 1 {
		t.Errorf("created %d, want 1: the foreign instance does not count", n)
	}
}

// TestInstancesThatStopMatchingAreReleased: relabelling an instance takes it
// out of the replica set, which keeps it running and creates another.
func TestInstancesThatStopMatchingAreReleased(t *testing.T) {
	rs := newRS(1)
	f := newFixture(t, DefaultBurst, rs, instance(rs, "web-debug", time.Hour, relabel(map[string]string{"app": "debug"})))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	var released bool
	for _, vmi := range f.instances() {
		if vmi.Name == "web-debug" {
			released = metav1.GetControllerOf(vmi) == nil
		}
	}
	if !released {
		t.Error("the relabelled instance still has the replica set as controller")
	}
	if n := len(f.actions("delete", "virtualmachineinstances", "")); n != 0 {
		t.Errorf("deleted %d: a released instance keeps running", n)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")); n != 1 {
		t.Errorf("created %d, want 1 in place of the released one", n)
	}
}

func TestNoAdoptionIntoAReplicaSetBeingDeleted(t *testing.T) {
	rs := newRS(1)
	f := newFixture(t, DefaultBurst, rs, instance(rs, "loose", time.Hour, orphan))
	// The cache still shows it alive; the API knows better.
	gone := f.rs()
	gone.DeletionTimestamp = &metav1.Time{Time: now}
	gone.Finalizers = []string{"foregroundDeletion"}
	if err := f.virt.Tracker().Update(gvr, gone, "ns"); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err == nil {
		t.Error("sync adopted nothing and reported no error; it should say why and retry")
	}
	if n := len(f.actions("patch", "virtualmachineinstances", "")); n != 0 {
		t.Errorf("patched %d instances into a replica set being deleted", n)
	}
}
