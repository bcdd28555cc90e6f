package virtualmachineinstance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtfake "kubevirt.dev/virt/generated/clientset/versioned/fake"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions"
	"kubevirt.dev/virt/internal/ownership"
	"kubevirt.dev/virt/internal/ownership/ownershiptest"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/fakelauncher"
	"kubevirt.dev/virt/node/monitor"
	"kubevirt.dev/virt/node/podfs"
)

const (
	testNode = "node-1"
	testNS   = "default"
)

var vmiGVR = virtv1.SchemeGroupVersion.WithResource("virtualmachineinstances")

// fixture runs the real controller, with its informers, against fake
// clientsets and fake launchers listening below a temporary kubelet root.
type fixture struct {
	t    *testing.T
	root string
	kube *k8sfake.Clientset
	virt *virtfake.Clientset

	statusWrites atomic.Int32
	patches      atomic.Int32
	rv           atomic.Int64

	mu        sync.Mutex
	events    []string
	recorders []*record.FakeRecorder

	// launchers are the fake launchers by pod UID.
	launchers map[types.UID]*fakelauncher.Server
	// What the running controller was handed: by its informers, by the
	// launcher watches.
	vmisHanded, podsHanded *handed
	reports                *reported

	// workMu is held while a VMI is synced: the fixture, not Run, works off
	// the controller's queue, so with workMu held nothing is being synced
	// and an empty queue means an idle controller.
	workMu sync.Mutex

	// network is the fake network preparer.
	network *fakeNetwork
	// migration, when set before start, makes the node take part in live
	// migrations, with a target informer whose handing is recorded in
	// targetsHanded.
	migration     *MigrationConfig
	targetsHanded *handed

	stop    func()
	running bool
	ctx     context.Context
	ctrl    *Controller
}

func newFixture(t *testing.T, vmis []*virtv1.VirtualMachineInstance, pods []*corev1.Pod) *fixture {
	t.Helper()
	return newFixtureGuarded(t, vmis, pods, true)
}

// newFixtureGuarded is newFixture; guard false leaves the writes unchecked
// against internal/ownership (see migration_test.go for the one reason).
func newFixtureGuarded(t *testing.T, vmis []*virtv1.VirtualMachineInstance, pods []*corev1.Pod, guard bool) *fixture {
	t.Helper()
	var kubeObjs, virtObjs []runtime.Object
	for _, p := range pods {
		kubeObjs = append(kubeObjs, p)
	}
	for _, v := range vmis {
		virtObjs = append(virtObjs, v)
	}
	f := &fixture{
		t:    t,
		root: filepath.Join(t.TempDir(), "var", "lib", "kubelet"),
		kube: k8sfake.NewClientset(kubeObjs...),
		virt: virtfake.NewClientset(virtObjs...),

		launchers: map[types.UID]*fakelauncher.Server{},
		network:   &fakeNetwork{},
	}
	f.rv.Store(100)
	f.serverLike()
	if guard {
		ownershiptest.GuardOn(t, f.virt, ownership.Handler, testNode) // runs before the server-like reactors
	}
	return f
}

// serverLike makes the fake VMIs behave like virt-apiserver's where the
// handler depends on it: every write bumps the resourceVersion and a stale
// one is a conflict; /status writes change only the status; the
// main resource keeps its status; a merge patch of the finalizers releases
// an object being deleted once none is left.
func (f *fixture) serverLike() {
	tracker := f.virt.Tracker()
	get := func(ns, name string) (*virtv1.VirtualMachineInstance, error) {
		obj, err := tracker.Get(vmiGVR, ns, name)
		if err != nil {
			return nil, err
		}
		return obj.(*virtv1.VirtualMachineInstance).DeepCopy(), nil
	}
	store := func(cur, next *virtv1.VirtualMachineInstance) (*virtv1.VirtualMachineInstance, error) {
		next.ResourceVersion = strconv.FormatInt(f.rv.Add(1), 10)
		if next.DeletionTimestamp != nil && len(next.Finalizers) == 0 {
			return next, tracker.Delete(vmiGVR, cur.Namespace, cur.Name)
		}
		return next, tracker.Update(vmiGVR, next, cur.Namespace)
	}
	f.virt.PrependReactor("update", "virtualmachineinstances", func(action k8stesting.Action) (bool, runtime.Object, error) {
		ua := action.(k8stesting.UpdateAction)
		obj := ua.GetObject().(*virtv1.VirtualMachineInstance)
		cur, err := get(ua.GetNamespace(), obj.Name)
		if err != nil {
			return true, nil, err
		}
		if obj.ResourceVersion != cur.ResourceVersion {
			return true, nil, apierrors.NewConflict(vmiGVR.GroupResource(), obj.Name, fmt.Errorf("stale resourceVersion %s, have %s", obj.ResourceVersion, cur.ResourceVersion))
		}
		next := obj.DeepCopy()
		if ua.GetSubresource() == "status" {
			f.statusWrites.Add(1)
			next = cur.DeepCopy()
			next.Status = obj.Status
		} else {
			next.Status = cur.Status
		}
		out, err := store(cur, next)
		return true, out, err
	})
	f.virt.PrependReactor("patch", "virtualmachineinstances", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pa := action.(k8stesting.PatchAction)
		if pa.GetPatchType() != types.MergePatchType || pa.GetSubresource() != "" {
			return true, nil, fmt.Errorf("fixture: only merge patches of the finalizers, got %s on %q", pa.GetPatchType(), pa.GetSubresource())
		}
		var patch struct {
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		if err := json.Unmarshal(pa.GetPatch(), &patch); err != nil {
			return true, nil, err
		}
		cur, err := get(pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		next := cur.DeepCopy()
		for k, v := range patch.Metadata {
			switch k {
			case "resourceVersion":
				var rv string
				if err := json.Unmarshal(v, &rv); err != nil {
					return true, nil, err
				}
				if rv != cur.ResourceVersion {
					return true, nil, apierrors.NewConflict(vmiGVR.GroupResource(), cur.Name, fmt.Errorf("stale resourceVersion %s, have %s", rv, cur.ResourceVersion))
				}
			case "finalizers":
				if err := json.Unmarshal(v, &next.Finalizers); err != nil {
					return true, nil, err
				}
			default:
				return true, nil, fmt.Errorf("fixture: unexpected patch of metadata.%s", k)
			}
		}
		f.patches.Add(1)
		out, err := store(cur, next)
		return true, out, err
	})
}

// start runs a controller (a handler process) unless one runs, until the
// test ends or stop is called.
func (f *fixture) start() {
	f.t.Helper()
	if f.running {
		return
	}
	f.running = true
	ctx, cancel := context.WithCancel(f.t.Context())
	kubeFactory := kubeinformers.NewSharedInformerFactory(f.kube, 0)
	virtFactory := virtinformers.NewSharedInformerFactory(f.virt, 0)
	recorder := record.NewFakeRecorder(1000)
	cfg := Config{
		NodeName: testNode,
		// The fake launchers serve as this process.
		PodFiles: podfs.Pods{KubeletRoot: f.root, LauncherUID: int64(os.Getuid())},
		Monitor: monitor.Config{
			CallTimeout: 5 * time.Second, SyncTimeout: 5 * time.Second, CallRetries: 2,
			Backoff: wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 200 * time.Millisecond},
		},
		UnreachableAfter: 2 * time.Second,
		Network:          f.network,
		Migration:        f.migration,
	}
	f.vmisHanded, f.podsHanded = newHanded(), newHanded()
	f.reports = &reported{domains: map[types.UID]*apiv1.Domain{}}
	ctrl, err := New(ctx, cfg, f.kube, f.virt,
		recordingVMIInformer{virtFactory.Virtualization().V1().VirtualMachineInstances(), f.vmisHanded},
		recordingPodInformer{kubeFactory.Core().V1().Pods(), f.podsHanded}, recorder, clock.RealClock{})
	if err != nil {
		f.t.Fatal(err)
	}
	if f.migration != nil {
		// The fake clientset ignores field selectors: the target informer
		// sees every VMI, as the main one does.
		targetFactory := virtinformers.NewSharedInformerFactory(f.virt, 0)
		f.targetsHanded = newHanded()
		if err := ctrl.WatchMigrationTargets(ctx, recordingVMIInformer{targetFactory.Virtualization().V1().VirtualMachineInstances(), f.targetsHanded}); err != nil {
			f.t.Fatal(err)
		}
		targetFactory.Start(ctx.Done())
		f.t.Cleanup(targetFactory.Shutdown)
	}
	// The same monitor as New's, whose reports are also recorded; nothing
	// watches a launcher before Run.
	ctrl.monitor = monitor.New(ctx, cfg.Monitor, clock.RealClock{}, f.reports.changed(ctrl))
	f.ctrl, f.ctx = ctrl, ctx
	kubeFactory.Start(ctx.Done())
	virtFactory.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// No workers of its own: f.work syncs instead.
		if err := ctrl.Run(ctx, 0); err != nil {
			f.t.Errorf("Run: %v", err)
		}
	}()
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		f.work(ctx, ctrl)
	}()
	f.mu.Lock()
	f.recorders = append(f.recorders, recorder)
	f.mu.Unlock()
	var once sync.Once
	f.stop = func() {
		once.Do(func() {
			f.running = false
			cancel()
			<-done
			<-worked
			kubeFactory.Shutdown()
			virtFactory.Shutdown()
		})
	}
	f.t.Cleanup(f.stop)
}

// launcher starts a fake launcher in pod's private directory.
func (f *fixture) launcher(vmi *virtv1.VirtualMachineInstance, pod *corev1.Pod) *fakelauncher.Server {
	f.t.Helper()
	dir := f.privateDir(pod)
	if n := len(layout.LauncherSocket(dir)); n <= 108 {
		f.t.Fatalf("socket path is only %d bytes; the tests must exceed a socket address", n)
	}
	l := fakelauncher.Start(f.t, dir, vmi)
	f.launchers[pod.UID] = l
	return l
}

func (f *fixture) privateDir(pod *corev1.Pod) string {
	dir := layout.HostPrivateDir(f.root, string(pod.UID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	return dir
}

// vmi is the VMI as the API has it, nil once it is gone.
func (f *fixture) vmi(name string) *virtv1.VirtualMachineInstance {
	f.t.Helper()
	v, err := f.virt.VirtualizationV1().VirtualMachineInstances(testNS).Get(f.t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

// waitTimeout bounds the waits for what the controller should do.
const waitTimeout = 10 * time.Second

// waitVMI waits up to waitTimeout for the VMI to satisfy cond and returns
// it.
func (f *fixture) waitVMI(name, what string, cond func(*virtv1.VirtualMachineInstance) bool) *virtv1.VirtualMachineInstance {
	f.t.Helper()
	var last *virtv1.VirtualMachineInstance
	err := wait.PollUntilContextTimeout(f.t.Context(), 5*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		f.collectEvents()
		last = f.vmi(name)
		return cond(last), nil
	})
	if err != nil {
		f.t.Fatalf("timed out after %s waiting for VMI %s: %s (%v); last seen: %s; events: %v", waitTimeout, name, what, err, describe(last), f.eventList())
	}
	return last
}

// waitFor waits up to waitTimeout for cond.
func (f *fixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.t.Context(), 5*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		f.collectEvents()
		return cond(), nil
	})
	if err != nil {
		f.t.Fatalf("timed out after %s waiting for %s: %v; events: %v", waitTimeout, what, err, f.eventList())
	}
}

func describe(vmi *virtv1.VirtualMachineInstance) string {
	if vmi == nil {
		return "gone"
	}
	var conds []string
	for _, c := range vmi.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return fmt.Sprintf("phase %s reason %q conditions %v finalizers %v", vmi.Status.Phase, vmi.Status.Reason, conds, vmi.Finalizers)
}

// eventList is every event recorded so far: one recorded before a write
// the test saw is in it.
func (f *fixture) eventList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.collectLocked()
	return append([]string(nil), f.events...)
}

// collectEvents takes the events out of the recorders' buffers. The waits
// call it as they poll: a recorder whose buffer is full blocks the sync
// that records.
func (f *fixture) collectEvents() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.collectLocked()
}

func (f *fixture) collectLocked() {
	for _, r := range f.recorders {
		for more := true; more; {
			select {
			case e := <-r.Events:
				f.events = append(f.events, e)
			default:
				more = false
			}
		}
	}
}

// hasEvent reports whether an event of reason was recorded.
func (f *fixture) hasEvent(reason string) bool {
	for _, e := range f.eventList() {
		if strings.Contains(e, " "+reason+" ") {
			return true
		}
	}
	return false
}

// deleteVMI marks the VMI deleted as the API server does for an object
// with finalizers.
func (f *fixture) deleteVMI(name string) {
	f.t.Helper()
	v := f.vmi(name)
	v.DeletionTimestamp = ptr.To(metav1.Now())
	v.DeletionGracePeriodSeconds = ptr.To[int64](0)
	v.ResourceVersion = strconv.FormatInt(f.rv.Add(1), 10)
	if err := f.virt.Tracker().Update(vmiGVR, v, testNS); err != nil {
		f.t.Fatal(err)
	}
}

// updatePod replaces the pod's status, as the kubelet does.
func (f *fixture) updatePod(pod *corev1.Pod, mutate func(*corev1.Pod)) {
	f.t.Helper()
	cur, err := f.kube.CoreV1().Pods(pod.Namespace).Get(f.t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	mutate(cur)
	if _, err := f.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(f.t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) deletePod(pod *corev1.Pod) {
	f.t.Helper()
	if err := f.kube.CoreV1().Pods(pod.Namespace).Delete(f.t.Context(), pod.Name, metav1.DeleteOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// scheduledVMI is a VMI virt-controller just handed to testNode.
func scheduledVMI(name string) *virtv1.VirtualMachineInstance {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNS, Name: name, UID: types.UID("vmi-" + name), ResourceVersion: "1",
			Finalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
		},
		Spec: virtv1.VirtualMachineInstanceSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](7),
			Domain: virtv1.DomainSpec{Devices: virtv1.Devices{Interfaces: []virtv1.Interface{{
				Name: "default", Model: "virtio", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}},
			}}}},
			Networks: []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}},
		},
		Status: virtv1.VirtualMachineInstanceStatus{
			Phase:                         virtv1.Scheduled,
			NodeName:                      testNode,
			ActivePods:                    map[types.UID]string{podUID(name): testNode},
			LauncherContainerImageVersion: "virt-launcher:test",
			Conditions: []virtv1.VirtualMachineInstanceCondition{
				{Type: virtv1.VirtualMachineInstancePodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			},
			PhaseTransitionTimestamps: []virtv1.VirtualMachineInstancePhaseTransitionTimestamp{
				{Phase: virtv1.Scheduling, PhaseTransitionTimestamp: t0},
				{Phase: virtv1.Scheduled, PhaseTransitionTimestamp: t0},
			},
		},
	}
}

func podUID(vmiName string) types.UID { return types.UID("pod-" + vmiName) }

// launcherPodOf is the running, ready launcher pod of vmi on testNode.
func launcherPodOf(vmi *virtv1.VirtualMachineInstance) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: vmi.Namespace, Name: "virt-launcher-" + vmi.Name, UID: podUID(vmi.Name),
			Labels: map[string]string{
				virtv1.CreatedByLabel: string(vmi.UID), virtv1.VMINameLabel: vmi.Name, virtv1.ComponentLabel: virtv1.LauncherComponent,
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, virtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: corev1.PodSpec{NodeName: testNode, Containers: []corev1.Container{{Name: layout.ComputeContainer}}},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      "198.18.0.9",
			PodIPs:     []corev1.PodIP{{IP: "198.18.0.9"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: layout.ComputeContainer, Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
}

// terminated marks the compute container exited with code.
func terminated(code int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		if code == 0 {
			p.Status.Phase = corev1.PodSucceeded
		}
		p.Status.ContainerStatuses[0].Ready = false
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}
	}
}

func condition(vmi *virtv1.VirtualMachineInstance, t virtv1.VirtualMachineInstanceConditionType) *virtv1.VirtualMachineInstanceCondition {
	for i := range vmi.Status.Conditions {
		if vmi.Status.Conditions[i].Type == t {
			return &vmi.Status.Conditions[i]
		}
	}
	return nil
}

func phaseIs(p virtv1.VirtualMachineInstancePhase, reason string) func(*virtv1.VirtualMachineInstance) bool {
	return func(v *virtv1.VirtualMachineInstance) bool {
		return v != nil && v.Status.Phase == p && v.Status.Reason == reason
	}
}

// fakeNetwork prepares the fake launcher's NICs (fakelauncher.NICs), or
// fails as told.
type fakeNetwork struct {
	mu    sync.Mutex
	calls int
	fail  []error
}

func (n *fakeNetwork) Prepare(_ context.Context, vmi *virtv1.VirtualMachineInstance, _ podfs.Dir) ([]*apiv1.InterfaceNetwork, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls++
	if len(n.fail) > 0 {
		err := n.fail[0]
		n.fail = n.fail[1:]
		return nil, err
	}
	return fakelauncher.NICs(vmi), nil
}

func (n *fakeNetwork) failNext(errs ...error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.fail = append(n.fail, errs...)
}

func (n *fakeNetwork) callCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls
}
