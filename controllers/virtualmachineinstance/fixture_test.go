package virtualmachineinstance

import (
	"fmt"
	"slices"
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
	"kubevirt.dev/virt/launcher/layout"
)

var testPodConfig = launcherpod.Config{LauncherImage: "virt-launcher:test", GracePeriodMargin: 15, RunAsUser: ptr.To[int64](107)}

// fixture is a controller on fake clientsets whose informer caches are filled
// by hand, so that a test decides exactly what the controller's cache lags.
type fixture struct {
	t          *testing.T
	kube       *k8sfake.Clientset
	virt       *virtfake.Clientset
	ctrl       *Controller
	vmiStore   cache.Indexer
	podStore   cache.Indexer
	claimStore cache.Indexer
	classStore cache.Indexer
	recorder   *record.FakeRecorder
	clock      *clocktesting.FakeClock
}

func newFixture(t *testing.T, vmis []*virtv1.VirtualMachineInstance, pods []*corev1.Pod) *fixture {
	t.Helper()
	var kubeObjs, virtObjs []runtime.Object
	for _, p := range pods {
		kubeObjs = append(kubeObjs, p)
	}
	for _, v := range vmis {
		virtObjs = append(virtObjs, v)
	}
	f := &fixture{
		t:        t,
		kube:     k8sfake.NewClientset(kubeObjs...),
		virt:     virtfake.NewClientset(virtObjs...),
		recorder: record.NewFakeRecorder(100),
		clock:    clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
	}
	ownershiptest.Guard(t, f.virt, ownership.VMIController)
	// The fake clientset neither names nor identifies what it creates.
	var n atomic.Int32
	f.kube.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pod := action.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		pod.UID = types.UID(fmt.Sprintf("pod-uid-%d", n.Add(1)))
		return false, nil, nil
	})
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kube, 0)
	virtFactory := virtinformers.NewSharedInformerFactory(f.virt, 0)
	podInformer := kubeFactory.Core().V1().Pods()
	vmiInformer := virtFactory.Virtualization().V1().VirtualMachineInstances()
	claimInformer := kubeFactory.Core().V1().PersistentVolumeClaims()
	classInformer := kubeFactory.Storage().V1().StorageClasses()
	ctrl, err := New(t.Context(), f.kube, f.virt, vmiInformer, podInformer, claimInformer, classInformer,
		f.recorder, Config{Pod: testPodConfig}, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	f.ctrl = ctrl
	f.vmiStore = vmiInformer.Informer().GetIndexer()
	f.podStore = podInformer.Informer().GetIndexer()
	f.claimStore = claimInformer.Informer().GetIndexer()
	f.classStore = classInformer.Informer().GetIndexer()
	for _, v := range vmis {
		f.must(f.vmiStore.Add(v))
	}
	for _, p := range pods {
		f.must(f.podStore.Add(p))
	}
	return f
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) sync(vmi *virtv1.VirtualMachineInstance) error {
	f.t.Helper()
	return f.ctrl.sync(f.t.Context(), vmi.Namespace+"/"+vmi.Name)
}

// refresh copies the API's current objects into the caches and delivers
// the pod events: the informers catching up.
func (f *fixture) refresh() {
	f.t.Helper()
	for _, obj := range f.vmiStore.List() {
		v := obj.(*virtv1.VirtualMachineInstance)
		if cur := f.vmi(v); cur != nil {
			f.must(f.vmiStore.Update(cur))
		} else {
			f.must(f.vmiStore.Delete(v))
		}
	}
	current := map[string]bool{}
	var objs []any
	for _, p := range f.pods() {
		pod := p.DeepCopy()
		current[pod.Name] = true
		objs = append(objs, pod)
		if _, exists, _ := f.podStore.Get(pod); !exists {
			f.ctrl.addPod(pod)
		}
	}
	for _, obj := range f.podStore.List() {
		if pod := obj.(*corev1.Pod); !current[pod.Name] {
			f.ctrl.deletePod(pod)
		}
	}
	f.must(f.podStore.Replace(objs, ""))
}

// vmi is vmi as the API has it now, nil if it is gone.
func (f *fixture) vmi(vmi *virtv1.VirtualMachineInstance) *virtv1.VirtualMachineInstance {
	f.t.Helper()
	got, err := f.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Get(f.t.Context(), vmi.Name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return got
}

// pods are the pods the API has now.
func (f *fixture) pods() []corev1.Pod {
	f.t.Helper()
	list, err := f.kube.CoreV1().Pods("").List(f.t.Context(), metav1.ListOptions{})
	f.must(err)
	return list.Items
}

// statusWrites counts the writes of VMI status the controller made.
func (f *fixture) statusWrites() int {
	n := 0
	for _, a := range f.virt.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// events drains the recorded events.
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

func (f *fixture) expectEvent(prefix string) {
	f.t.Helper()
	events := f.events()
	if !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, prefix) }) {
		f.t.Errorf("no event %q among %q", prefix, events)
	}
}

func newVMI(mutate ...func(*virtv1.VirtualMachineInstance)) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         "ns",
			Name:              "vmi1",
			UID:               "vmi-uid-1",
			ResourceVersion:   "1",
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
			Finalizers:        []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
		},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{Memory: &virtv1.Memory{Guest: ptr.To(resource.MustParse("128Mi"))}},
		},
		Status: virtv1.VirtualMachineInstanceStatus{Phase: virtv1.Pending},
	}
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi) // as virt-apiserver stores it
	for _, m := range mutate {
		m(vmi)
	}
	return vmi
}

// Mutations of test VMIs.
func scheduling(podUID types.UID) func(*virtv1.VirtualMachineInstance) {
	return func(v *virtv1.VirtualMachineInstance) {
		v.Status.Phase = virtv1.Scheduling
		v.Status.ActivePods = map[types.UID]string{podUID: ""}
	}
}

func handedOff(node string, phase virtv1.VirtualMachineInstancePhase) func(*virtv1.VirtualMachineInstance) {
	return func(v *virtv1.VirtualMachineInstance) {
		v.Status.Phase = phase
		v.Status.NodeName = node
		v.Status.ActivePods = map[types.UID]string{"pod-uid": node}
	}
}

func deleting(v *virtv1.VirtualMachineInstance) {
	v.DeletionTimestamp = ptr.To(metav1.NewTime(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)))
}

func withoutGuestFinalizer(v *virtv1.VirtualMachineInstance) {
	v.Finalizers = []string{virtv1.LauncherPodFinalizer}
}

func newPod(vmi *virtv1.VirtualMachineInstance, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod, err := launcherpod.New(vmi, testPodConfig)
	if err != nil {
		panic(err)
	}
	pod.UID = "pod-uid"
	pod.ResourceVersion = "1"
	pod.Status.Phase = corev1.PodPending
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

// Mutations of test pods.
// podConditionTime is when the kubelet or scheduler set a pod condition: the
// VMI's mirror of it keeps this time, not the controller's clock.
var podConditionTime = metav1.NewTime(time.Date(2025, 12, 31, 23, 59, 0, 0, time.UTC))

func podCond(t corev1.PodConditionType, s corev1.ConditionStatus, reason, msg string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: podConditionTime})
	}
}

func boundTo(node string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = node
		podCond(corev1.PodScheduled, corev1.ConditionTrue, "", "")(p)
	}
}

func running(ready bool) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		s := corev1.ConditionFalse
		if ready {
			s = corev1.ConditionTrue
		}
		podCond(corev1.PodReady, s, "", "")(p)
		containersReady(ready)(p)
	}
}

// launcherCreating is a pod whose containers the kubelet is still creating.
func launcherCreating(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}})
	}
}

// containersReady gives p running containers, the launcher Started (its
// startup probe passed) and each Ready as ready says.
func containersReady(ready bool) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		names := []string{layout.ComputeContainer}
		for _, c := range p.Spec.Containers {
			if c.Name != layout.ComputeContainer {
				names = append(names, c.Name)
			}
		}
		p.Status.ContainerStatuses = nil
		for _, n := range names {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: n, Ready: ready, Started: ptr.To(ready),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			})
		}
	}
}

func podPhase(phase corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = phase }
}

func podDeleting(p *corev1.Pod) {
	p.DeletionTimestamp = ptr.To(metav1.NewTime(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)))
}

func computeTerminated(p *corev1.Pod) {
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:  layout.ComputeContainer,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}},
	}}
}
