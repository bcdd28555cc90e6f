package nodefence

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
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const (
	heartbeatTimeout = time.Minute
	leaseNS          = "virt-system"
)

func newNode(ready corev1.ConditionStatus, since time.Time, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node1", ResourceVersion: "7"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready,
			LastTransitionTime: metav1.NewTime(since)}}},
	}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func newLease(renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: leaseNS, Name: virtv1.HandlerLeaseName("node1")},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node1"), RenewTime: &metav1.MicroTime{Time: renewed}},
	}
}

func newVMI(name string, phase virtv1.VirtualMachineInstancePhase, fenceAfter string) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Status:     virtv1.VirtualMachineInstanceStatus{Phase: phase, NodeName: "node1"},
	}
	if fenceAfter != "" {
		vmi.Annotations = map[string]string{virtv1.FenceNodeAfterAnnotation: fenceAfter}
	}
	return vmi
}

type fixture struct {
	c        *Controller
	kube     *k8sfake.Clientset
	leases   cache.Indexer
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
}

// newFixture runs the controller on a fake clientset whose objects are
// also in the informers' caches; apiOnly are in the API only (the cache
// lags them, or holds an older version of them).
func newFixture(t *testing.T, cfg Config, cached, apiOnly []runtime.Object, vmis ...*virtv1.VirtualMachineInstance) *fixture {
	t.Helper()
	var api []runtime.Object
	for _, o := range apiOnly {
		api = append(api, o)
	}
	for _, o := range cached {
		if !slices.ContainsFunc(apiOnly, func(a runtime.Object) bool { return sameObject(a, o) }) {
			api = append(api, o)
		}
	}
	kube := k8sfake.NewClientset(api...)
	virt := virtfake.NewClientset()
	clock := clocktesting.NewFakeClock(now)
	recorder := record.NewFakeRecorder(20)
	factory := kubeinformers.NewSharedInformerFactory(kube, 0)
	nodes, leases := factory.Core().V1().Nodes(), factory.Coordination().V1().Leases()
	vmiInformer := virtinformers.NewSharedInformerFactory(virt, 0).Virtualization().V1().VirtualMachineInstances()
	cfg.HeartbeatTimeout, cfg.LeaseNamespace = heartbeatTimeout, leaseNS
	c, err := New(t.Context(), kube, nodes, leases, vmiInformer, recorder, cfg, clock)
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
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, vmi := range vmis {
		if err := vmiInformer.Informer().GetIndexer().Add(vmi); err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{c: c, kube: kube, leases: leases.Informer().GetIndexer(), clock: clock, recorder: recorder}
}

func sameObject(a, b runtime.Object) bool {
	am, bm := a.(metav1.Object), b.(metav1.Object)
	_, an := a.(*corev1.Node)
	_, bn := b.(*corev1.Node)
	return an == bn && am.GetNamespace() == bm.GetNamespace() && am.GetName() == bm.GetName()
}

// fenced reports whether the Node in the API carries the out-of-service
// taint, failing on any other change of its taints.
func (f *fixture) fenced(t *testing.T) bool {
	t.Helper()
	n, err := f.kube.CoreV1().Nodes().Get(t.Context(), "node1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, taint := range n.Spec.Taints {
		if taint.Key == corev1.TaintNodeOutOfService {
			if taint.Value != "nodeshutdown" || taint.Effect != corev1.TaintEffectNoExecute || found {
				t.Errorf("taints %+v", n.Spec.Taints)
			}
			found = true
		}
	}
	return found
}

func (f *fixture) nodeWrites() int {
	n := 0
	for _, a := range f.kube.Actions() {
		if a.Matches("update", "nodes") || a.Matches("patch", "nodes") {
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

func TestFence(t *testing.T) {
	longAgo := now.Add(-time.Hour)
	stale, fresh := newLease(longAgo), newLease(now.Add(-10*time.Second))
	notReady := newNode(corev1.ConditionUnknown, longAgo)
	cluster90 := Config{After: 90 * time.Second, HonorAnnotations: true}
	off := Config{HonorAnnotations: true}
	tests := []struct {
		name       string
		cfg        Config
		cached     []runtime.Object
		apiOnly    []runtime.Object
		vmis       []*virtv1.VirtualMachineInstance
		wantFenced bool
		wantEvents []string // prefixes, in any order
	}{{
		name:   "NotReady and silent for an hour, cluster setting 90s: fenced, the Node and the VMI told",
		cfg:    cluster90,
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "")},
		wantFenced: true, wantEvents: []string{"Warning NodeFenced", "Warning NodeFenced"},
	}, {
		name:   "Ready, handler silent for an hour: never fenced",
		cfg:    cluster90,
		cached: []runtime.Object{newNode(corev1.ConditionTrue, longAgo), stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "1s")},
	}, {
		name:   "NotReady for an hour, the handler heartbeats: never fenced",
		cfg:    cluster90,
		cached: []runtime.Object{notReady, fresh}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "1s")},
	}, {
		name:   "the cache says silent, the API has a fresh renewal: not fenced",
		cfg:    cluster90,
		cached: []runtime.Object{notReady, stale}, apiOnly: []runtime.Object{fresh},
		vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "")},
	}, {
		name:   "NotReady (False) and no Lease at all: fenced",
		cfg:    cluster90,
		cached: []runtime.Object{newNode(corev1.ConditionFalse, longAgo)}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "")},
		wantFenced: true, wantEvents: []string{"Warning NodeFenced", "Warning NodeFenced"},
	}, {
		name:   "a Node that never reported Ready is not NotReady",
		cfg:    cluster90,
		cached: []runtime.Object{newNode(corev1.ConditionTrue, longAgo, func(n *corev1.Node) { n.Status.Conditions = nil }), stale},
		vmis:   []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "")},
	}, {
		name:   "the default (off) and no annotation: never fenced",
		cfg:    off,
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "")},
	}, {
		name:   "off in the cluster, a VMI asks 30s: fenced",
		cfg:    off,
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "30s")},
		wantFenced: true, wantEvents: []string{"Warning NodeFenced", "Warning NodeFenced"},
	}, {
		name:   "90s in the cluster, the only VMI says never: not fenced",
		cfg:    cluster90,
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, virtv1.FenceNodeNever)},
	}, {
		name:   "90s in the cluster, the only VMI says 0s: not fenced",
		cfg:    cluster90,
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "0s")},
	}, {
		name:       "one VMI says never, another asks 30s: the smallest ask wins, both told",
		cfg:        off,
		cached:     []runtime.Object{notReady, stale},
		vmis:       []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, virtv1.FenceNodeNever), newVMI("b", virtv1.Scheduled, "30s")},
		wantFenced: true, wantEvents: []string{"Warning NodeFenced", "Warning NodeFenced", "Warning NodeFenced"},
	}, {
		name:   "an ended VMI asks for nothing",
		cfg:    off,
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Failed, "30s")},
	}, {
		name:   "no VMI on the node: nothing to fence for",
		cfg:    cluster90,
		cached: []runtime.Object{notReady, stale},
	}, {
		name:   "an invalid annotation asks for nothing and says so",
		cfg:    off,
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "soon")},
		wantEvents: []string{"Warning InvalidFenceNodeAfter"},
	}, {
		name:   "annotations not honored: a VMI's 30s counts for nothing",
		cfg:    Config{},
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "30s")},
	}, {
		name:   "annotations not honored: a VMI's never does not stop the cluster's 90s",
		cfg:    Config{After: 90 * time.Second},
		cached: []runtime.Object{notReady, stale}, vmis: []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, virtv1.FenceNodeNever)},
		wantFenced: true, wantEvents: []string{"Warning NodeFenced", "Warning NodeFenced"},
	}, {
		name: "out of service already (its administrator's taint): nothing written",
		cfg:  cluster90,
		cached: []runtime.Object{newNode(corev1.ConditionUnknown, longAgo, func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}}
		}), stale},
		vmis:       []*virtv1.VirtualMachineInstance{newVMI("a", virtv1.Running, "")},
		wantFenced: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg, tt.cached, tt.apiOnly, tt.vmis...)
			writesBefore := f.nodeWrites()
			if err := f.c.sync(t.Context(), "node1"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if got := f.fenced(t); got != tt.wantFenced {
				t.Errorf("fenced: %t, want %t", got, tt.wantFenced)
			}
			wantWrites := 0
			if slices.Contains(tt.wantEvents, "Warning NodeFenced") {
				wantWrites = 1
			}
			if n := f.nodeWrites() - writesBefore; n != wantWrites {
				t.Errorf("%d Node writes, want %d", n, wantWrites)
			}
			events := f.events()
			if len(events) != len(tt.wantEvents) {
				t.Fatalf("events %q, want %d: %q", events, len(tt.wantEvents), tt.wantEvents)
			}
			for i, e := range events {
				if !strings.HasPrefix(e, tt.wantEvents[i]) {
					t.Errorf("event %q, want %q", e, tt.wantEvents[i])
				}
				if strings.HasPrefix(e, "Warning NodeFenced") && !strings.Contains(e, "node node1 fenced: NotReady since") {
					t.Errorf("event %q does not say why", e)
				}
			}
		})
	}
}

// TestFenceTimeline walks a node through an outage on a fake clock: the
// node is fenced only once it has been NotReady and silent, both, for
// longer than its fence-after, and is looked at again by itself when that
// time comes.
func TestFenceTimeline(t *testing.T) {
	// The kubelet stopped at now-40s: NotReady since now. The handler
	// last renewed at now-10s: silent (stale) from now+50s. Dead from
	// now+50s; 90s later, at now+140s, fenced.
	f := newFixture(t, Config{After: 90 * time.Second, HonorAnnotations: true},
		[]runtime.Object{newNode(corev1.ConditionUnknown, now), newLease(now.Add(-10 * time.Second))}, nil,
		newVMI("a", virtv1.Running, ""))
	step := func(d time.Duration, wantFenced bool) {
		t.Helper()
		f.clock.Step(d)
		if err := f.c.sync(t.Context(), "node1"); err != nil {
			t.Fatal(err)
		}
		if got := f.fenced(t); got != wantFenced {
			t.Fatalf("at now+%s: fenced %t, want %t", f.clock.Since(now), got, wantFenced)
		}
	}
	step(0, false)
	// Looked at again when it is due, with nothing else happening.
	if n := f.c.queue.Len(); n != 0 {
		t.Fatalf("%d keys queued before the node is due", n)
	}
	f.clock.Step(141 * time.Second)
	if err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return f.c.queue.Len() > 0, nil
	}); err != nil {
		t.Fatalf("the node was not requeued for when it is due: %v", err)
	}
	f.clock.SetTime(now)
	step(139*time.Second, false)
	if events := f.events(); len(events) != 0 {
		t.Fatalf("events before the node was fenced: %q", events)
	}
	step(2*time.Second, true)
	if events := f.events(); len(events) != 2 {
		t.Errorf("events %q, want one on the Node and one on the VMI", events)
	}

	// A second node whose handler renews again within the fence-after
	// starts over: the time counts from its next silence.
	f = newFixture(t, Config{After: 90 * time.Second, HonorAnnotations: true},
		[]runtime.Object{newNode(corev1.ConditionUnknown, now), newLease(now.Add(-10 * time.Second))}, nil,
		newVMI("a", virtv1.Running, ""))
	step(100*time.Second, false)
	renewed := newLease(f.clock.Now())
	if err := f.leases.Update(renewed); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kube.CoordinationV1().Leases(leaseNS).Update(t.Context(), renewed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	step(100*time.Second, false) // silent again since 40s only
	step(51*time.Second, true)   // stale at +60s, 90s later: +150s from the renewal
}

func TestParseFenceAfter(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"90s", 90 * time.Second, false},
		{" 2m ", 2 * time.Minute, false},
		{"never", 0, false},
		{"0", 0, false},
		{"0s", 0, false},
		{"-1s", 0, true},
		{"soon", 0, true},
		{"", 0, true},
	} {
		got, err := ParseFenceAfter(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseFenceAfter(%q) = %s, %v; want %s, error %t", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
