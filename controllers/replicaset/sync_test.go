package replicaset

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestScaleUpCreatesFromTheTemplate: a new replica set gets its instances
// from the template, named after it and controlled by it.
func TestScaleUpCreatesFromTheTemplate(t *testing.T) {
	f := newFixture(t, DefaultBurst, newRS(3))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	vmis := f.instances()
	if len(vmis) != 3 {
		t.Fatalf("%d instances, want 3", len(vmis))
	}
	for _, vmi := range vmis {
		if vmi.GenerateName != "web-" || vmi.Labels["app"] != "web" || vmi.Labels["tier"] != "front" ||
			vmi.Annotations["note"] != "x" || vmi.Spec.Hostname != "web" {
			t.Errorf("instance %s is not the template: %+v", vmi.Name, vmi.ObjectMeta)
		}
		ref := metav1.GetControllerOf(vmi)
		if ref == nil || ref.UID != "rs-uid" || ref.Kind != "VirtualMachineInstanceReplicaSet" ||
			ref.APIVersion != "virtualization.kubevirt.io/v1" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("instance %s controller reference = %+v", vmi.Name, ref)
		}
	}
	rs := f.rs()
	if rs.Status.Replicas != 0 || rs.Status.LabelSelector != "app=web" {
		t.Errorf("status = %+v, want 0 replicas yet and selector app=web", rs.Status)
	}
	if got := f.events(); len(got) != 3 || !strings.Contains(got[0], ReasonSuccessfulCreate) {
		t.Errorf("events = %v, want 3 %s", got, ReasonSuccessfulCreate)
	}
}

// TestExpectationsHoldUntilObserved: until the cache shows the instances it
// created, the controller creates no more, however often it syncs.
func TestExpectationsHoldUntilObserved(t *testing.T) {
	f := newFixture(t, DefaultBurst, newRS(2))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")); n != 0 {
		t.Fatalf("a sync before the creations were observed created %d more", n)
	}
	if f.ctrl.expectations.Satisfied("ns/web") {
		t.Fatal("expectations satisfied before anything was observed")
	}
	f.observe()
	f.observeRS()
	if !f.ctrl.expectations.Satisfied("ns/web") {
		t.Fatal("expectations not satisfied after both creations were observed")
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")); n != 0 {
		t.Errorf("created %d with both instances in the cache", n)
	}
	if rs := f.rs(); rs.Status.Replicas != 2 {
		t.Errorf("status.replicas = %d, want 2", rs.Status.Replicas)
	}
}

func TestBurstBoundsOneSync(t *testing.T) {
	f := newFixture(t, 2, newRS(5))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.instances()); n != 2 {
		t.Fatalf("first sync created %d, want the burst of 2", n)
	}
	f.observe()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.instances()); n != 4 {
		t.Errorf("second sync: %d instances, want 4", n)
	}
}

// TestFailingCreatesStopEarly: when the API refuses instances (quota), the
// controller learns it from one request, reports ReplicaFailure, and
// expects nothing it did not get.
func TestFailingCreatesStopEarly(t *testing.T) {
	f := newFixture(t, DefaultBurst, newRS(8))
	f.virt.PrependReactor("create", "virtualmachineinstances", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(virtv1.Resource("virtualmachineinstances"), "", errors.New("exceeded quota"))
	})
	err := f.sync()
	if !apierrors.IsForbidden(errors.Unwrap(err)) && (err == nil || !strings.Contains(err.Error(), "exceeded quota")) {
		t.Fatalf("sync error = %v, want the create's", err)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")); n != 1 {
		t.Errorf("%d creates tried, want 1 (batches stop at the first failure)", n)
	}
	if !f.ctrl.expectations.Satisfied("ns/web") {
		t.Error("expectations wait for instances that were never created")
	}
	c := f.rs().Status.Condition(virtv1.VirtualMachineInstanceReplicaSetReplicaFailure)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonFailedCreate || !strings.Contains(c.Message, "exceeded quota") {
		t.Errorf("ReplicaFailure = %+v", c)
	}

	// Once creates work again, the condition goes.
	f.virt.ReactionChain = f.virt.ReactionChain[1:]
	f.observeRS()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if c := f.rs().Status.Condition(virtv1.VirtualMachineInstanceReplicaSetReplicaFailure); c != nil {
		t.Errorf("ReplicaFailure still there after a good sync: %+v", c)
	}
}

// TestScaleDownDeletesWhatServesLeast: unscheduled, then not ready, then
// younger instances go first; deletions carry the UID precondition.
func TestScaleDownDeletesWhatServesLeast(t *testing.T) {
	rs := newRS(2)
	oldReady := instance(rs, "web-old", time.Hour, running("n1", true))
	youngReady := instance(rs, "web-young", time.Minute, running("n1", true))
	notReady := instance(rs, "web-notready", 2*time.Hour, running("n2", false))
	pending := instance(rs, "web-pending", 3*time.Hour)
	f := newFixture(t, DefaultBurst, rs, oldReady, youngReady, notReady, pending)
	rs.Spec.Replicas = ptr.To(int32(1))
	if err := f.sets.Update(rs); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	deletes := f.actions("delete", "virtualmachineinstances", "")
	var names []string
	for _, a := range deletes {
		d := a.(k8stesting.DeleteAction)
		names = append(names, d.GetName())
		if p := d.GetDeleteOptions().Preconditions; p == nil || p.UID == nil || string(*p.UID) != d.GetName()+"-uid" {
			t.Errorf("delete of %s without its UID precondition", d.GetName())
		}
	}
	if strings.Join(slices.Sorted(slices.Values(names)), ",") != "web-notready,web-pending,web-young" {
		t.Errorf("deleted %v, want the pending, the not ready and the younger ready instance", names)
	}
	if left := f.instances(); len(left) != 1 || left[0].Name != "web-old" {
		t.Errorf("left %v, want web-old", left)
	}
	if rs := f.rs(); rs.Status.Replicas != 4 || rs.Status.ReadyReplicas != 2 {
		t.Errorf("status = %d replicas, %d ready; want what the cache showed: 4, 2", rs.Status.Replicas, rs.Status.ReadyReplicas)
	}
	// The deletions are expected until the cache shows them being deleted.
	if f.ctrl.expectations.Satisfied("ns/web") {
		t.Error("expectations satisfied before the deletions were observed")
	}
	for _, vmi := range []*virtv1.VirtualMachineInstance{youngReady, notReady, pending} {
		gone := vmi.DeepCopy()
		deleting(gone)
		gone.ResourceVersion = "2"
		f.ctrl.updateVMI(vmi, gone)
	}
	if !f.ctrl.expectations.Satisfied("ns/web") {
		t.Error("expectations not satisfied once every deletion was observed")
	}
}

// TestEndedAndDeletedInstancesAreReplaced: an instance that ended or is
// being deleted no longer counts; a new one takes its place, and the ended
// one is deleted.
func TestEndedAndDeletedInstancesAreReplaced(t *testing.T) {
	rs := newRS(3)
	f := newFixture(t, DefaultBurst, rs,
		instance(rs, "web-ok", time.Hour, running("n1", true)),
		instance(rs, "web-failed", time.Hour, phase(virtv1.Failed)),
		instance(rs, "web-going", time.Hour, running("n1", true), deleting))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")); n != 2 {
		t.Errorf("created %d, want 2 replacements", n)
	}
	deletes := f.actions("delete", "virtualmachineinstances", "")
	if len(deletes) != 1 || deletes[0].(k8stesting.DeleteAction).GetName() != "web-failed" {
		t.Errorf("deletes = %v, want only web-failed", deletes)
	}
	if s := f.rs().Status; s.Replicas != 1 || s.ReadyReplicas != 1 {
		t.Errorf("status = %+v, want 1 replica, 1 ready", s)
	}
}

func TestPausedReplicaSetIsLeftAlone(t *testing.T) {
	rs := newRS(3, paused)
	f := newFixture(t, DefaultBurst, rs, instance(rs, "web-failed", time.Hour, phase(virtv1.Failed)))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")) + len(f.actions("delete", "virtualmachineinstances", "")); n != 0 {
		t.Errorf("a paused replica set made %d writes to instances", n)
	}
	c := f.rs().Status.Condition(virtv1.VirtualMachineInstanceReplicaSetReplicaPaused)
	if c == nil || c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("ReplicaPaused = %+v", c)
	}
	if got := f.events(); len(got) != 1 || !strings.Contains(got[0], ReasonPaused) {
		t.Errorf("events = %v, want %s", got, ReasonPaused)
	}

	resumed := f.rs()
	resumed.Spec.Paused = false
	if err := f.sets.Update(resumed); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")); n != 3 {
		t.Errorf("resumed: created %d, want 3", n)
	}
	if c := f.rs().Status.Condition(virtv1.VirtualMachineInstanceReplicaSetReplicaPaused); c != nil {
		t.Errorf("ReplicaPaused still there: %+v", c)
	}
}

func TestReplicaSetBeingDeletedCreatesNothing(t *testing.T) {
	f := newFixture(t, DefaultBurst, newRS(3, func(rs *virtv1.VirtualMachineInstanceReplicaSet) {
		rs.DeletionTimestamp = &metav1.Time{Time: now}
		rs.Finalizers = []string{"foregroundDeletion"}
	}))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actions("create", "virtualmachineinstances", "")); n != 0 {
		t.Errorf("created %d for a replica set being deleted", n)
	}
}

// TestStatusIsWrittenOnlyWhenItChanges: a sync that observes nothing new
// writes nothing.
func TestStatusIsWrittenOnlyWhenItChanges(t *testing.T) {
	rs := newRS(1)
	f := newFixture(t, DefaultBurst, rs, instance(rs, "web-a", time.Hour, running("n1", true)))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actions("update", "virtualmachineinstancereplicasets", "status")); n != 1 {
		t.Fatalf("first sync wrote status %d times, want 1", n)
	}
	f.observeRS()
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if len(f.virt.Actions()) != 0 {
		t.Errorf("an idle sync wrote: %v", f.virt.Actions())
	}
}

func TestDeletedReplicaSetForgetsItsExpectations(t *testing.T) {
	f := newFixture(t, DefaultBurst, newRS(2))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.sets.Delete(f.rs()); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if !f.ctrl.expectations.Satisfied("ns/web") {
		t.Error("a deleted replica set keeps its expectations: a new one of its name would wait")
	}
}

// TestStaleStatusWriteWaitsForTheCache: a status write refused for a stale
// resourceVersion is not a failure to retry with back-off; the newer
// replica set's event requeues it.
func TestStaleStatusWriteWaitsForTheCache(t *testing.T) {
	f := newFixture(t, DefaultBurst, newRS(0))
	f.virt.PrependReactor("update", "virtualmachineinstancereplicasets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewConflict(virtv1.Resource("virtualmachineinstancereplicasets"), "web", errors.New("stale"))
	})
	if err := f.sync(); err != nil {
		t.Errorf("sync = %v, want nil", err)
	}
	if n := len(f.actions("update", "virtualmachineinstancereplicasets", "status")); n != 1 {
		t.Errorf("%d status writes, want the one refused", n)
	}
}
