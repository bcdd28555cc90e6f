package replicaset

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtfake "kubevirt.dev/virt/generated/clientset/versioned/fake"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// fixture is a controller on a fake clientset whose caches the test fills
// by hand, so a test decides exactly what the controller has seen.
type fixture struct {
	t        *testing.T
	virt     *virtfake.Clientset
	ctrl     *Controller
	recorder *record.FakeRecorder
	// sets and vmis are the controller's caches.
	sets, vmis cache.Indexer
}

func newFixture(t *testing.T, burst int, rs *virtv1.VirtualMachineInstanceReplicaSet, vmis ...*virtv1.VirtualMachineInstance) *fixture {
	t.Helper()
	objs := []runtime.Object{rs}
	for _, vmi := range vmis {
		objs = append(objs, vmi)
	}
	// NewSimpleClientset, not NewClientset: see controllers/virtualmachine.
	f := &fixture{t: t, virt: virtfake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(1000)}
	// The fake does not implement generateName; the API server does.
	var n atomic.Int32
	f.virt.PrependReactor("create", "virtualmachineinstances", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj := action.(k8stesting.CreateAction).GetObject().(*virtv1.VirtualMachineInstance)
		i := n.Add(1)
		if obj.Name == "" {
			obj.Name = fmt.Sprintf("%snew%d", obj.GenerateName, i)
		}
		obj.UID = types.UID(fmt.Sprintf("new-uid-%d", i))
		return false, nil, nil
	})
	factory := virtinformers.NewSharedInformerFactory(f.virt, 0)
	sets, vmiInformer := factory.Virtualization().V1().VirtualMachineInstanceReplicaSets(), factory.Virtualization().V1().VirtualMachineInstances()
	ctrl, err := New(t.Context(), f.virt, sets, vmiInformer, f.recorder, burst, clocktesting.NewFakeClock(now))
	if err != nil {
		t.Fatal(err)
	}
	f.ctrl = ctrl
	f.sets, f.vmis = sets.Informer().GetIndexer(), vmiInformer.Informer().GetIndexer()
	if err := f.sets.Add(rs); err != nil {
		t.Fatal(err)
	}
	for _, vmi := range vmis {
		if err := f.vmis.Add(vmi); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) sync() error {
	return f.ctrl.sync(f.t.Context(), "ns/web")
}

// rs is the replica set as the API has it.
func (f *fixture) rs() *virtv1.VirtualMachineInstanceReplicaSet {
	f.t.Helper()
	rs, err := f.virt.VirtualizationV1().VirtualMachineInstanceReplicaSets("ns").Get(f.t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return rs
}

// instances are the VMIs the API has, by name.
func (f *fixture) instances() []*virtv1.VirtualMachineInstance {
	f.t.Helper()
	list, err := f.virt.VirtualizationV1().VirtualMachineInstances("ns").List(f.t.Context(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []*virtv1.VirtualMachineInstance
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	slices.SortFunc(out, func(a, b *virtv1.VirtualMachineInstance) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// observe feeds the API's VMIs to the controller's cache and event
// handlers, as the informer would.
func (f *fixture) observe() {
	f.t.Helper()
	for _, vmi := range f.instances() {
		old, exists, _ := f.vmis.Get(vmi)
		if err := f.vmis.Update(vmi); err != nil {
			f.t.Fatal(err)
		}
		if exists {
			f.ctrl.updateVMI(old, vmi)
		} else {
			f.ctrl.addVMI(vmi)
		}
	}
}

// observeRS feeds the API's replica set to the controller's cache.
func (f *fixture) observeRS() {
	f.t.Helper()
	if err := f.sets.Update(f.rs()); err != nil {
		f.t.Fatal(err)
	}
}

// actions counts the writes of verb to resource (and subresource).
func (f *fixture) actions(verb, resource, subresource string) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range f.virt.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource && a.GetSubresource() == subresource {
			out = append(out, a)
		}
	}
	return out
}

func (f *fixture) clearActions() { f.virt.ClearActions() }

func newRS(replicas int32, mutate ...func(*virtv1.VirtualMachineInstanceReplicaSet)) *virtv1.VirtualMachineInstanceReplicaSet {
	rs := &virtv1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "rs-uid", Generation: 1, ResourceVersion: "1"},
		Spec: virtv1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &virtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}, Annotations: map[string]string{"note": "x"}},
				Spec:       virtv1.VirtualMachineInstanceSpec{Hostname: "web"},
			},
		},
	}
	for _, m := range mutate {
		m(rs)
	}
	return rs
}

func paused(rs *virtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Paused = true }

// instance is a VMI of rs named name, created age ago.
func instance(rs *virtv1.VirtualMachineInstanceReplicaSet, name string, age time.Duration, mutate ...func(*virtv1.VirtualMachineInstance)) *virtv1.VirtualMachineInstance {
	vmi := NewInstance(rs)
	vmi.Name, vmi.GenerateName = name, ""
	vmi.UID = types.UID(name + "-uid")
	vmi.ResourceVersion = "1"
	vmi.CreationTimestamp = metav1.NewTime(now.Add(-age))
	vmi.Status.Phase = virtv1.Pending
	for _, m := range mutate {
		m(vmi)
	}
	return vmi
}

func running(node string, isReady bool) func(*virtv1.VirtualMachineInstance) {
	return func(vmi *virtv1.VirtualMachineInstance) {
		vmi.Status.Phase, vmi.Status.NodeName = virtv1.Running, node
		s := corev1.ConditionFalse
		if isReady {
			s = corev1.ConditionTrue
		}
		vmi.Status.Conditions = []virtv1.VirtualMachineInstanceCondition{{Type: virtv1.VirtualMachineInstanceReady, Status: s}}
	}
}

func phase(p virtv1.VirtualMachineInstancePhase) func(*virtv1.VirtualMachineInstance) {
	return func(vmi *virtv1.VirtualMachineInstance) { vmi.Status.Phase = p }
}

func deleting(vmi *virtv1.VirtualMachineInstance) {
	vmi.DeletionTimestamp = ptr.To(metav1.NewTime(now))
}

func orphan(vmi *virtv1.VirtualMachineInstance) { vmi.OwnerReferences = nil }

func relabel(l map[string]string) func(*virtv1.VirtualMachineInstance) {
	return func(vmi *virtv1.VirtualMachineInstance) { vmi.Labels = l }
}

func controlledBy(uid types.UID) func(*virtv1.VirtualMachineInstance) {
	return func(vmi *virtv1.VirtualMachineInstance) {
		vmi.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Other", Name: "x", UID: uid, Controller: ptr.To(true)}}
	}
}

// events drains the recorder.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
