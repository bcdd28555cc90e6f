package migration

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
	virtfake "kubevirt.dev/virt/generated/clientset/versioned/fake"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions"
	"kubevirt.dev/virt/internal/ownership"
	"kubevirt.dev/virt/internal/ownership/ownershiptest"
)

var (
	testPodConfig = launcherpod.Config{LauncherImage: "virt-launcher:test", GracePeriodMargin: 15, RunAsUser: ptr.To[int64](107)}
	t0            = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// fixture is the controller on fake clientsets whose caches a test fills
// from the API with refresh.
type fixture struct {
	t        *testing.T
	kube     *k8sfake.Clientset
	virt     *virtfake.Clientset
	ctrl     *Controller
	stores   []storeOf
	recorder *record.FakeRecorder
	clock    *clocktesting.FakeClock
}

// storeOf is an informer's cache and how to list the API's objects for it.
type storeOf struct {
	store cache.Indexer
	list  func() []any
}

func newFixture(t *testing.T, cfg Config, objs ...runtime.Object) *fixture {
	t.Helper()
	var kubeObjs, virtObjs []runtime.Object
	for _, o := range objs {
		switch o.(type) {
		case *virtv1.VirtualMachineInstance, *virtv1.VirtualMachineInstanceMigration:
			virtObjs = append(virtObjs, o)
		default:
			kubeObjs = append(kubeObjs, o)
		}
	}
	f := &fixture{
		t:        t,
		kube:     k8sfake.NewClientset(kubeObjs...),
		virt:     virtfake.NewClientset(virtObjs...),
		recorder: record.NewFakeRecorder(1000),
		clock:    clocktesting.NewFakeClock(t0),
	}
	ownershiptest.Guard(t, f.virt, ownership.MigrationController)
	// The fake clientsets neither name nor identify what they create.
	var n atomic.Int32
	f.kube.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pod := action.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		pod.UID = types.UID(fmt.Sprintf("pod-uid-%d", n.Add(1)))
		pod.CreationTimestamp = metav1.NewTime(f.clock.Now())
		return false, nil, nil
	})
	f.virt.PrependReactor("create", "virtualmachineinstancemigrations", func(action k8stesting.Action) (bool, runtime.Object, error) {
		m := action.(k8stesting.CreateAction).GetObject().(*virtv1.VirtualMachineInstanceMigration)
		if m.Name == "" {
			m.Name = m.GenerateName + fmt.Sprint(n.Add(1))
		}
		m.UID = types.UID("uid-" + m.Name)
		m.CreationTimestamp = metav1.NewTime(f.clock.Now())
		return false, nil, nil
	})
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kube, 0)
	virtFactory := virtinformers.NewSharedInformerFactory(f.virt, 0)
	vmims := virtFactory.Virtualization().V1().VirtualMachineInstanceMigrations()
	vmis := virtFactory.Virtualization().V1().VirtualMachineInstances()
	pods := kubeFactory.Core().V1().Pods()
	nodes := kubeFactory.Core().V1().Nodes()
	pvcs := kubeFactory.Core().V1().PersistentVolumeClaims()
	if cfg.ParallelPerCluster == 0 {
		cfg = DefaultConfig(testPodConfig)
	}
	ctrl, err := New(t.Context(), f.kube, f.virt, vmims, vmis, pods, nodes, pvcs, f.recorder, cfg, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	f.ctrl = ctrl
	ctx := t.Context()
	f.stores = []storeOf{
		{vmims.Informer().GetIndexer(), func() []any {
			l, err := f.virt.VirtualizationV1().VirtualMachineInstanceMigrations("").List(ctx, metav1.ListOptions{})
			f.must(err)
			return itemsOf(l.Items)
		}},
		{vmis.Informer().GetIndexer(), func() []any {
			l, err := f.virt.VirtualizationV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
			f.must(err)
			return itemsOf(l.Items)
		}},
		{pods.Informer().GetIndexer(), func() []any {
			l, err := f.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			f.must(err)
			return itemsOf(l.Items)
		}},
		{nodes.Informer().GetIndexer(), func() []any {
			l, err := f.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			f.must(err)
			return itemsOf(l.Items)
		}},
		{pvcs.Informer().GetIndexer(), func() []any {
			l, err := f.kube.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
			f.must(err)
			return itemsOf(l.Items)
		}},
	}
	f.refresh()
	return f
}

// handedOverFixture is a fixture whose migration "mig" of the VMI "vm1" (running
// on node1) was handed to the nodes: its target pod, bound to node2 and
// running, is named in the VMI's migrationState.
func handedOverFixture(t *testing.T) (*fixture, *virtv1.VirtualMachineInstance, string) {
	t.Helper()
	vmi := runningVMI("vm1", "node1")
	f := newFixture(t, Config{}, node("node1"), node("node2"), vmi, sourcePod(vmi), newMigration("mig", "vm1", inPhase(virtv1.MigrationPending)))
	f.syncMigration("mig")
	target := launcherpod.TargetName(vmi, "uid-mig")
	f.bind(target, "node2")
	f.ready(target)
	f.syncMigration("mig")
	return f, vmi, target
}

func itemsOf[T any](items []T) []any {
	out := make([]any, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// refresh makes the caches what the API has: the informers caught up.
func (f *fixture) refresh() {
	f.t.Helper()
	for _, s := range f.stores {
		f.must(s.store.Replace(s.list(), ""))
	}
}

// syncMigration refreshes the caches and syncs the migration.
func (f *fixture) syncMigration(name string) time.Duration {
	f.t.Helper()
	f.refresh()
	after, err := f.ctrl.sync(f.t.Context(), "ns/"+name)
	f.must(err)
	return after
}

func (f *fixture) syncVMI(name string) time.Duration {
	f.t.Helper()
	f.refresh()
	after, err := f.ctrl.syncVMI(f.t.Context(), "ns/"+name)
	f.must(err)
	return after
}

func (f *fixture) migration(name string) *virtv1.VirtualMachineInstanceMigration {
	f.t.Helper()
	m, err := f.virt.VirtualizationV1().VirtualMachineInstanceMigrations("ns").Get(f.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return m
}

func (f *fixture) vmi(name string) *virtv1.VirtualMachineInstance {
	f.t.Helper()
	v, err := f.virt.VirtualizationV1().VirtualMachineInstances("ns").Get(f.t.Context(), name, metav1.GetOptions{})
	f.must(err)
	return v
}

func (f *fixture) pod(name string) *corev1.Pod {
	f.t.Helper()
	p, err := f.kube.CoreV1().Pods("ns").Get(f.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

func (f *fixture) updatePod(p *corev1.Pod) {
	f.t.Helper()
	_, err := f.kube.CoreV1().Pods(p.Namespace).Update(f.t.Context(), p, metav1.UpdateOptions{})
	f.must(err)
}

// updateVMIStatus writes a VMI's status as a node's handler would: past
// the ownership guard, which holds the controller to its row.
func (f *fixture) updateVMIStatus(name string, mutate func(*virtv1.VirtualMachineInstanceStatus)) {
	f.t.Helper()
	v := f.vmi(name)
	mutate(&v.Status)
	f.must(f.virt.Tracker().Update(virtv1.SchemeGroupVersion.WithResource("virtualmachineinstances"), v, "ns"))
}

// deleteMigration marks a migration deleted, as the API server does with a
// finalizer present.
func (f *fixture) deleteMigration(name string) {
	f.t.Helper()
	m := f.migration(name)
	m.DeletionTimestamp = ptr.To(metav1.NewTime(f.clock.Now()))
	_, err := f.virt.VirtualizationV1().VirtualMachineInstanceMigrations("ns").Update(f.t.Context(), m, metav1.UpdateOptions{})
	f.must(err)
}

// events are the recorded events, "Type Reason message".
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

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

func node(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{virtv1.SchedulableNodeLabel: "true"}},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

// runningVMI is a VMI running on nodeName in the pod sourcePod returns.
func runningVMI(name, nodeName string, mutate ...func(*virtv1.VirtualMachineInstance)) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("vmi-uid-" + name)},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain:                        virtv1.DomainSpec{Memory: &virtv1.Memory{Guest: ptr.To(resource.MustParse("128Mi"))}},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			EvictionStrategy:              ptr.To(virtv1.EvictionStrategyLiveMigrate),
		},
		Status: virtv1.VirtualMachineInstanceStatus{Phase: virtv1.Running, NodeName: nodeName,
			ActivePods: map[types.UID]string{types.UID("src-" + name): nodeName}},
	}
	for _, m := range mutate {
		m(vmi)
	}
	return vmi
}

func sourcePod(vmi *virtv1.VirtualMachineInstance) *corev1.Pod {
	pod, err := launcherpod.New(vmi, testPodConfig)
	if err != nil {
		panic(err)
	}
	pod.UID = types.UID("src-" + vmi.Name)
	pod.Spec.NodeName = vmi.Status.NodeName
	pod.Status.Phase = corev1.PodRunning
	launcherStarted(pod)
	return pod
}

// launcherStarted marks every container of p running and started, as the
// kubelet does once the launcher's startup probe passed.
func launcherStarted(p *corev1.Pod) {
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		})
	}
}

func newMigration(name, vmiName string, mutate ...func(*virtv1.VirtualMachineInstanceMigration)) *virtv1.VirtualMachineInstanceMigration {
	m := &virtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0)},
		Spec:       virtv1.VirtualMachineInstanceMigrationSpec{VMIName: vmiName},
	}
	for _, mu := range mutate {
		mu(m)
	}
	return m
}

func withFinalizer(m *virtv1.VirtualMachineInstanceMigration) {
	m.Finalizers = []string{virtv1.MigrationFinalizer}
}

func inPhase(p virtv1.VirtualMachineInstanceMigrationPhase) func(*virtv1.VirtualMachineInstanceMigration) {
	return func(m *virtv1.VirtualMachineInstanceMigration) {
		withFinalizer(m)
		m.Status.SetPhase(p, metav1.NewTime(t0))
	}
}

// bind and ready move a target pod on, as the scheduler and kubelet would.
func (f *fixture) bind(podName, nodeName string) {
	f.t.Helper()
	p := f.pod(podName)
	p.Spec.NodeName = nodeName
	f.updatePod(p)
}

func (f *fixture) ready(podName string) {
	f.t.Helper()
	p := f.pod(podName)
	p.Status.Phase = corev1.PodRunning
	launcherStarted(p)
	f.updatePod(p)
}
