package nodehealth

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtfake "kubevirt.dev/virt/generated/clientset/versioned/fake"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions"
	"kubevirt.dev/virt/internal/ownership"
	"kubevirt.dev/virt/internal/ownership/ownershiptest"
	"kubevirt.dev/virt/launcher/layout"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const (
	timeout = time.Minute
	leaseNS = "virt-system"
)

func newNode(mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", Labels: map[string]string{virtv1.SchedulableNodeLabel: "true"}}}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func outOfService(n *corev1.Node) {
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute})
}

func newLease(renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: leaseNS, Name: "virt-handler-node1"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node1"), LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime: &metav1.MicroTime{Time: renewed}},
	}
}

func newVMI(phase virtv1.VirtualMachineInstancePhase, mutate ...func(*virtv1.VirtualMachineInstance)) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vmi1", UID: "uid1", ResourceVersion: "5",
			Finalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer}},
		Status: virtv1.VirtualMachineInstanceStatus{Phase: phase, NodeName: "node1",
			Conditions: []virtv1.VirtualMachineInstanceCondition{{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}}},
	}
	for _, m := range mutate {
		m(vmi)
	}
	return vmi
}

func deleting(v *virtv1.VirtualMachineInstance) {
	v.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Second)))
}

func marked(v *virtv1.VirtualMachineInstance) {
	v.Status.Conditions = append(v.Status.Conditions, virtv1.VirtualMachineInstanceCondition{
		Type: virtv1.VirtualMachineInstanceNodeUnresponsive, Status: corev1.ConditionTrue, Reason: virtv1.ReasonHeartbeatStale,
	})
}

// launcher is a launcher pod of vmi1 on node in phase.
func launcher(name, node string, phase corev1.PodPhase, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("pod-" + name),
			Labels: map[string]string{virtv1.CreatedByLabel: "uid1", virtv1.ComponentLabel: virtv1.LauncherComponent},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: virtv1.SchemeGroupVersion.String(), Kind: "VirtualMachineInstance",
				Name: "vmi1", UID: "uid1", Controller: ptr.To(true)}}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func computeExited(p *corev1.Pod) {
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: layout.ComputeContainer,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}}}
}

func podDeleting(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(now)) }

type fixture struct {
	c        *Controller
	kube     *k8sfake.Clientset
	leases   cache.Indexer
	virt     *virtfake.Clientset
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
}

// newFixture runs the controller on fake clientsets. cached objects are in
// the clientsets and the informers' caches; apiOnly only in the clientsets
// (the cache lags).
func newFixture(t *testing.T, vmi *virtv1.VirtualMachineInstance, cached, apiOnly []runtime.Object) *fixture {
	t.Helper()
	kube := k8sfake.NewClientset(append(slices.Clone(cached), apiOnly...)...)
	virt := virtfake.NewClientset(vmi)
	ownershiptest.Guard(t, virt, ownership.NodeHealth)
	clock := clocktesting.NewFakeClock(now)
	recorder := record.NewFakeRecorder(10)
	factory := kubeinformers.NewSharedInformerFactory(kube, 0)
	nodes, leases, pods := factory.Core().V1().Nodes(), factory.Coordination().V1().Leases(), factory.Core().V1().Pods()
	vmis := virtinformers.NewSharedInformerFactory(virt, 0).Virtualization().V1().VirtualMachineInstances()
	c, err := New(t.Context(), kube, virt, nodes, leases, leaseNS, pods, vmis, recorder, timeout, clock)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range cached {
		var err error
		switch obj.(type) {
		case *corev1.Node:
			err = nodes.Informer().GetIndexer().Add(obj)
		case *coordinationv1.Lease:
			err = leases.Informer().GetIndexer().Add(obj)
		case *corev1.Pod:
			err = pods.Informer().GetIndexer().Add(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := vmis.Informer().GetIndexer().Add(vmi); err != nil {
		t.Fatal(err)
	}
	return &fixture{c: c, kube: kube, leases: leases.Informer().GetIndexer(), virt: virt, clock: clock, recorder: recorder}
}

func (f *fixture) vmi(t *testing.T) *virtv1.VirtualMachineInstance {
	t.Helper()
	got, err := f.virt.VirtualizationV1().VirtualMachineInstances("ns").Get(t.Context(), "vmi1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// writes counts the writes to VMIs so far.
func (f *fixture) writes() int {
	n := 0
	for _, a := range f.virt.Actions() {
		if a.GetVerb() == "update" || a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

func (f *fixture) events() []string {
	var events []string
	for {
		select {
		case e := <-f.recorder.Events:
			events = append(events, e)
		default:
			return events
		}
	}
}

func TestUnresponsiveNode(t *testing.T) {
	fresh, stale := newLease(now.Add(-10*time.Second)), newLease(now.Add(-2*time.Minute))
	running := launcher("virt-launcher-vmi1-a", "node1", corev1.PodRunning)
	keep := []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer}
	tests := []struct {
		name           string
		vmi            *virtv1.VirtualMachineInstance
		cached         []runtime.Object
		apiOnly        []runtime.Object
		wantPhase      virtv1.VirtualMachineInstancePhase
		wantReason     string
		wantCondition  bool
		wantFinalizers []string
		wantEvent      string // prefix of the one event, "" for none
		wantRequeue    bool
	}{{
		name:      "fresh Lease: nothing happens, the node is looked at again when it would go stale",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(), fresh, running},
		wantPhase: virtv1.Running, wantFinalizers: keep, wantRequeue: true,
	}, {
		name:      "stale Lease, launcher pod running: the VMI keeps running with the condition",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(), stale, running},
		wantPhase: virtv1.Running, wantCondition: true, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "no Lease, launcher pod running: condition only",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(), running},
		wantPhase: virtv1.Running, wantCondition: true, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "stale Lease, a Scheduled VMI's pod running: condition only",
		vmi:       newVMI(virtv1.Scheduled),
		cached:    []runtime.Object{newNode(), stale, running},
		wantPhase: virtv1.Scheduled, wantCondition: true, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "stale Lease, launcher pod being deleted (no kubelet confirmed it): condition only",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(), stale, launcher("virt-launcher-vmi1-a", "node1", corev1.PodRunning, podDeleting)},
		wantPhase: virtv1.Running, wantCondition: true, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "stale Lease, the pod not in the cache yet but in the API: not failed",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(), stale},
		apiOnly:   []runtime.Object{running},
		wantPhase: virtv1.Running, wantCondition: true, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "already marked: no second write, no second event",
		vmi:       newVMI(virtv1.Running, marked),
		cached:    []runtime.Object{newNode(), stale, running},
		wantPhase: virtv1.Running, wantCondition: true, wantFinalizers: keep,
	}, {
		name:      "the handler beats again: the condition goes",
		vmi:       newVMI(virtv1.Running, marked),
		cached:    []runtime.Object{newNode(), fresh, running},
		wantPhase: virtv1.Running, wantFinalizers: keep, wantEvent: "Normal NodeResponsive", wantRequeue: true,
	}, {
		name:      "stale Lease, no launcher pod left: Failed",
		vmi:       newVMI(virtv1.Running, marked),
		cached:    []runtime.Object{newNode(), stale},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonNodeUnresponsive, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "stale Lease, launcher pod Failed: Failed",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(), stale, launcher("virt-launcher-vmi1-a", "node1", corev1.PodFailed)},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonNodeUnresponsive, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "stale Lease, compute container terminated: Failed",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(), stale, launcher("virt-launcher-vmi1-a", "node1", corev1.PodRunning, computeExited)},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonNodeUnresponsive, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "stale Lease, the only running launcher pod is on another node: Failed",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(), stale, launcher("virt-launcher-vmi1-b", "node2", corev1.PodRunning)},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonNodeUnresponsive, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "stale Lease on an out-of-service node: Failed although the pod says Running",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(outOfService), stale, running},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonNodeUnresponsive, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "fresh Lease on an out-of-service node: the handler runs, nothing happens",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{newNode(outOfService), fresh, running},
		wantPhase: virtv1.Running, wantFinalizers: keep, wantRequeue: true,
	}, {
		name:      "a deleted Node: Failed although the pod says Running",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{fresh, running},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonNodeUnresponsive, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "a Node not in the cache yet but in the API is not deleted",
		vmi:       newVMI(virtv1.Running),
		cached:    []runtime.Object{fresh, running},
		apiOnly:   []runtime.Object{newNode()},
		wantPhase: virtv1.Running, wantFinalizers: keep, wantRequeue: true,
	}, {
		name:      "a VMI being deleted whose launcher may run keeps the guest-shutdown finalizer for its handler",
		vmi:       newVMI(virtv1.Running, deleting),
		cached:    []runtime.Object{newNode(), stale, running},
		wantPhase: virtv1.Running, wantCondition: true, wantFinalizers: keep, wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "a VMI being deleted whose launcher is gone: Failed, the finalizer goes",
		vmi:       newVMI(virtv1.Running, deleting),
		cached:    []runtime.Object{newNode(), stale},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonNodeUnresponsive, wantFinalizers: []string{virtv1.LauncherPodFinalizer},
		wantEvent: "Warning NodeUnresponsive",
	}, {
		name:      "an ended VMI being deleted on a stale node keeps its phase, loses the finalizer",
		vmi:       newVMI(virtv1.Succeeded, deleting),
		cached:    []runtime.Object{newNode(), stale, running},
		wantPhase: virtv1.Succeeded, wantFinalizers: []string{virtv1.LauncherPodFinalizer},
	}, {
		name:      "an ended VMI not being deleted is left alone",
		vmi:       newVMI(virtv1.Failed, func(v *virtv1.VirtualMachineInstance) { v.Status.Reason = virtv1.ReasonGuestCrashed }),
		cached:    []runtime.Object{newNode(), stale},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonGuestCrashed, wantFinalizers: keep,
	}, {
		name:      "an ended VMI that kept the condition loses it when the handler beats again",
		vmi:       newVMI(virtv1.Failed, marked, func(v *virtv1.VirtualMachineInstance) { v.Status.Reason = virtv1.ReasonGuestCrashed }),
		cached:    []runtime.Object{newNode(), fresh},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonGuestCrashed, wantFinalizers: keep, wantEvent: "Normal NodeResponsive", wantRequeue: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.vmi, tt.cached, tt.apiOnly)
			if err := f.c.sync(t.Context(), "node1"); err != nil {
				t.Fatalf("sync: %v", err)
			}

			got := f.vmi(t)
			if got.Status.Phase != tt.wantPhase || got.Status.Reason != tt.wantReason {
				t.Errorf("phase %s reason %q, want %s %q", got.Status.Phase, got.Status.Reason, tt.wantPhase, tt.wantReason)
			}
			if !slices.Equal(got.Finalizers, tt.wantFinalizers) {
				t.Errorf("finalizers %v, want %v", got.Finalizers, tt.wantFinalizers)
			}
			cond := got.Status.Condition(virtv1.VirtualMachineInstanceNodeUnresponsive)
			if gotCond := cond != nil; gotCond != tt.wantCondition {
				t.Errorf("NodeUnresponsive condition %+v, want it: %t", cond, tt.wantCondition)
			}
			if cond != nil && (cond.Status != corev1.ConditionTrue || cond.Reason != virtv1.ReasonHeartbeatStale) {
				t.Errorf("NodeUnresponsive condition %+v, want True/%s", cond, virtv1.ReasonHeartbeatStale)
			}
			if cond != nil && tt.wantEvent != "" && !strings.Contains(cond.Message, "node node1 is unresponsive") {
				t.Errorf("condition message %q does not say why", cond.Message)
			}
			if tt.wantReason == virtv1.ReasonNodeUnresponsive {
				ready := got.Status.Condition(virtv1.VirtualMachineInstanceReady)
				if ready == nil || ready.Status != corev1.ConditionFalse {
					t.Errorf("Ready condition of a VMI failed on an unresponsive node: %+v", ready)
				}
			}
			events := f.events()
			switch {
			case tt.wantEvent == "" && len(events) != 0:
				t.Errorf("events %q, want none", events)
			case tt.wantEvent != "" && (len(events) != 1 || !strings.HasPrefix(events[0], tt.wantEvent)):
				t.Errorf("events %q, want one %q", events, tt.wantEvent)
			}

			// A second look at an unchanged world (the cache caught up)
			// writes nothing and says nothing.
			if err := f.c.vmiIndexer.Update(got); err != nil {
				t.Fatal(err)
			}
			writes := f.writes()
			if err := f.c.sync(t.Context(), "node1"); err != nil {
				t.Fatalf("second sync: %v", err)
			}
			if n := f.writes(); n != writes {
				t.Errorf("the second sync wrote the VMI %d times", n-writes)
			}
			if events := f.events(); len(events) != 0 {
				t.Errorf("the second sync sent events %q", events)
			}
			for f.c.queue.Len() > 0 { // the second sync's requeue is not the one below
				key, _ := f.c.queue.Get()
				f.c.queue.Done(key)
			}

			if tt.wantRequeue {
				// The node is due again 50 s + 1 s from now, and not before:
				// the fake clock moves only when stepped. The queue's delay
				// loop notices the step on its own goroutine.
				if n := f.c.queue.Len(); n != 0 {
					t.Fatalf("%d keys queued before the Lease went stale", n)
				}
				f.clock.Step(51 * time.Second)
				err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
					return f.c.queue.Len() > 0, nil
				})
				if err != nil || f.c.queue.Len() != 1 {
					t.Errorf("node not requeued for when its Lease goes stale: %d keys queued (%v)", f.c.queue.Len(), err)
				}
			}
		})
	}
}

// TestOutage walks one VMI through a handler outage: beats, stops beating
// (condition, guest left running), beats again (condition gone, still
// Running), and stops again until its pod ends (Failed).
func TestOutage(t *testing.T) {
	running := launcher("virt-launcher-vmi1-a", "node1", corev1.PodRunning)
	f := newFixture(t, newVMI(virtv1.Running), []runtime.Object{newNode(), newLease(now), running}, nil)
	step := func(d time.Duration, wantPhase virtv1.VirtualMachineInstancePhase, wantCondition bool) {
		t.Helper()
		f.clock.Step(d)
		if err := f.c.sync(t.Context(), "node1"); err != nil {
			t.Fatal(err)
		}
		got := f.vmi(t)
		// The informer cache follows the API, as it would.
		if err := f.c.vmiIndexer.Update(got); err != nil {
			t.Fatal(err)
		}
		cond := got.Status.Condition(virtv1.VirtualMachineInstanceNodeUnresponsive) != nil
		if got.Status.Phase != wantPhase || cond != wantCondition {
			t.Fatalf("after %s: phase %s, condition %t; want %s, %t", d, got.Status.Phase, cond, wantPhase, wantCondition)
		}
	}
	step(30*time.Second, virtv1.Running, false)
	step(2*timeout, virtv1.Running, true)
	// The handler is back.
	renewed := newLease(f.clock.Now())
	if err := f.leases.Update(renewed); err != nil {
		t.Fatal(err)
	}
	step(time.Second, virtv1.Running, false)
	step(2*timeout, virtv1.Running, true)
	// The launcher ends while the handler is away.
	ended := running.DeepCopy()
	ended.Status.Phase = corev1.PodFailed
	if err := f.c.podIndexer.Update(ended); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kube.CoreV1().Pods("ns").UpdateStatus(t.Context(), ended, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	step(time.Second, virtv1.Failed, false)
}
