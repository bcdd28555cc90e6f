package virtualmachine

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"kubevirt.dev/virt/internal/ownership"
	"kubevirt.dev/virt/internal/ownership/ownershiptest"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t        *testing.T
	virt     *virtfake.Clientset
	factory  virtinformers.SharedInformerFactory
	ctrl     *Controller
	recorder *record.FakeRecorder
	clock    *clocktesting.FakeClock
	// vms and vmis are the controller's caches.
	vms, vmis cache.Indexer
}

func newFixture(t *testing.T, vm *virtv1.VirtualMachine, vmi *virtv1.VirtualMachineInstance) *fixture {
	t.Helper()
	objs := []runtime.Object{vm}
	if vmi != nil {
		objs = append(objs, vmi)
	}
	// NewSimpleClientset, not NewClientset: the field manager of the latter
	// cannot convert VMIs on create while generated/applyconfiguration's
	// schema names its types by Go package (dev.kubevirt.virt.apis...)
	// rather than by their OpenAPI model names (io.kubevirt...).
	f := &fixture{t: t, virt: virtfake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(100), clock: clocktesting.NewFakeClock(now)}
	ownershiptest.Guard(t, f.virt, ownership.VMController)
	var n atomic.Int32
	f.virt.PrependReactor("create", "virtualmachineinstances", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj := action.(k8stesting.CreateAction).GetObject().(*virtv1.VirtualMachineInstance)
		obj.UID = types.UID(fmt.Sprintf("new-vmi-uid-%d", n.Add(1)))
		return false, nil, nil
	})
	factory := virtinformers.NewSharedInformerFactory(f.virt, 0)
	vms, vmis := factory.Virtualization().V1().VirtualMachines(), factory.Virtualization().V1().VirtualMachineInstances()
	f.factory = factory
	sizes := NewInstancetypes(f.virt, factory.Virtualization().V1())
	ctrl, err := New(t.Context(), f.virt, vms, vmis, sizes, f.recorder, Backoff{Base: 10 * time.Second, Max: time.Minute, Window: time.Minute}, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	f.ctrl = ctrl
	f.vms, f.vmis = vms.Informer().GetIndexer(), vmis.Informer().GetIndexer()
	if err := vms.Informer().GetIndexer().Add(vm); err != nil {
		t.Fatal(err)
	}
	if vmi != nil {
		if err := vmis.Informer().GetIndexer().Add(vmi); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) sync(vm *virtv1.VirtualMachine) error {
	return f.ctrl.sync(f.t.Context(), vm.Namespace+"/"+vm.Name)
}

func (f *fixture) vm() *virtv1.VirtualMachine {
	f.t.Helper()
	vm, err := f.virt.VirtualizationV1().VirtualMachines("ns").Get(f.t.Context(), "vm1", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return vm
}

// vmi is the VM's instance as the API has it, nil if none.
func (f *fixture) vmi() *virtv1.VirtualMachineInstance {
	vmi, err := f.virt.VirtualizationV1().VirtualMachineInstances("ns").Get(f.t.Context(), "vm1", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return vmi
}

func (f *fixture) writes(verb, resource string) int {
	n := 0
	for _, a := range f.virt.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

func newVM(strategy virtv1.VirtualMachineRunStrategy, mutate ...func(*virtv1.VirtualMachine)) *virtv1.VirtualMachine {
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm1", UID: "vm-uid", Generation: 1, ResourceVersion: "1"},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(strategy),
			Template: &virtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "x"}},
				Spec:       virtv1.VirtualMachineInstanceSpec{Hostname: "web"},
			},
		},
	}
	for _, m := range mutate {
		m(vm)
	}
	return vm
}

// synced marks a VM as seen by the controller before.
func synced(p virtv1.VirtualMachinePrintableStatus) func(*virtv1.VirtualMachine) {
	return func(vm *virtv1.VirtualMachine) { vm.Status.PrintableStatus = p }
}

func failures(n int32, retryAfter time.Time) func(*virtv1.VirtualMachine) {
	return func(vm *virtv1.VirtualMachine) {
		vm.Status.StartFailure = &virtv1.VirtualMachineStartFailure{
			ConsecutiveFailCount: n, LastFailedVMIUID: "old-uid", RetryAfterTimestamp: ptr.To(metav1.NewTime(retryAfter)),
		}
	}
}

func instance(vm *virtv1.VirtualMachine, phase virtv1.VirtualMachineInstancePhase, mutate ...func(*virtv1.VirtualMachineInstance)) *virtv1.VirtualMachineInstance {
	vmi, err := NewInstance(vm)
	if err != nil {
		panic(err)
	}
	vmi.UID = "vmi-uid"
	vmi.ResourceVersion = "1"
	vmi.Status.Phase = phase
	vmi.Status.PhaseTransitionTimestamps = []virtv1.VirtualMachineInstancePhaseTransitionTimestamp{
		{Phase: virtv1.Pending, PhaseTransitionTimestamp: metav1.NewTime(now.Add(-10 * time.Minute))},
	}
	for _, m := range mutate {
		m(vmi)
	}
	return vmi
}

// ranFor records that the instance entered Running d before now, and
// entered its current phase (if final) now.
func ranFor(d time.Duration) func(*virtv1.VirtualMachineInstance) {
	return func(vmi *virtv1.VirtualMachineInstance) {
		ts := append(vmi.Status.PhaseTransitionTimestamps,
			virtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: virtv1.Running, PhaseTransitionTimestamp: metav1.NewTime(now.Add(-d))})
		if vmi.Status.Phase.IsFinal() {
			ts = append(ts, virtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: vmi.Status.Phase, PhaseTransitionTimestamp: metav1.NewTime(now)})
		}
		vmi.Status.PhaseTransitionTimestamps = ts
	}
}

func vmiCond(t virtv1.VirtualMachineInstanceConditionType, s corev1.ConditionStatus, reason string) func(*virtv1.VirtualMachineInstance) {
	return func(vmi *virtv1.VirtualMachineInstance) {
		vmi.Status.Conditions = append(vmi.Status.Conditions, virtv1.VirtualMachineInstanceCondition{Type: t, Status: s, Reason: reason})
	}
}

// migrating gives the instance a started migration, still running or
// ended.
func migrating(running bool) func(*virtv1.VirtualMachineInstance) {
	return func(vmi *virtv1.VirtualMachineInstance) {
		ms := &virtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m-uid", StartTimestamp: ptr.To(metav1.NewTime(now.Add(-time.Second)))}
		if !running {
			ms.EndTimestamp, ms.Completed = ptr.To(metav1.NewTime(now)), true
		}
		vmi.Status.MigrationState = ms
	}
}

func vmiReason(reason string) func(*virtv1.VirtualMachineInstance) {
	return func(vmi *virtv1.VirtualMachineInstance) { vmi.Status.Reason = reason }
}

func vmiDeleting(vmi *virtv1.VirtualMachineInstance) {
	vmi.DeletionTimestamp = ptr.To(metav1.NewTime(now))
}

func notOwned(vmi *virtv1.VirtualMachineInstance) {
	vmi.OwnerReferences = nil
}

// outcome of one sync on the instance.
type outcome int

const (
	kept outcome = iota
	created
	deleted
	none
)

func TestRunStrategies(t *testing.T) {
	type tc struct {
		name      string
		vm        *virtv1.VirtualMachine
		vmi       func(*virtv1.VirtualMachine) *virtv1.VirtualMachineInstance
		want      outcome
		printable virtv1.VirtualMachinePrintableStatus
		ready     bool
		// failCount is status.startFailure.consecutiveFailCount, 0 for none.
		failCount int32
		retryIn   time.Duration
		// foreign: the VMI of the VM's name is not the VM's.
		foreign bool
	}
	inst := func(phase virtv1.VirtualMachineInstancePhase, m ...func(*virtv1.VirtualMachineInstance)) func(*virtv1.VirtualMachine) *virtv1.VirtualMachineInstance {
		return func(vm *virtv1.VirtualMachine) *virtv1.VirtualMachineInstance { return instance(vm, phase, m...) }
	}
	tests := []tc{
		{name: "Always without instance creates one", vm: newVM(virtv1.RunStrategyAlways), want: created, printable: virtv1.VirtualMachineStatusStarting},
		{name: "running: true is Always", vm: newVM("", func(vm *virtv1.VirtualMachine) { vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr.To(true) }),
			want: created, printable: virtv1.VirtualMachineStatusStarting},
		{name: "running: false is Halted", vm: newVM("", func(vm *virtv1.VirtualMachine) { vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr.To(false) }),
			vmi: inst(virtv1.Running), want: deleted, printable: virtv1.VirtualMachineStatusStopping},
		{name: "Halted without instance stays stopped", vm: newVM(virtv1.RunStrategyHalted), want: none, printable: virtv1.VirtualMachineStatusStopped},
		{name: "Halted deletes a running instance", vm: newVM(virtv1.RunStrategyHalted), vmi: inst(virtv1.Running, ranFor(time.Hour)),
			want: deleted, printable: virtv1.VirtualMachineStatusStopping},
		{name: "Halted clears the crash loop", vm: newVM(virtv1.RunStrategyHalted, failures(3, now.Add(time.Minute))),
			want: none, printable: virtv1.VirtualMachineStatusStopped},
		{name: "Always restarts an instance that shut down", vm: newVM(virtv1.RunStrategyAlways), vmi: inst(virtv1.Succeeded, ranFor(time.Hour)),
			want: deleted, printable: virtv1.VirtualMachineStatusStopping},
		{name: "Always restarts an instance that failed after running long", vm: newVM(virtv1.RunStrategyAlways),
			vmi: inst(virtv1.Failed, ranFor(time.Hour)), want: deleted, printable: virtv1.VirtualMachineStatusStopping},
		{name: "an instance failing before it ran starts the back-off", vm: newVM(virtv1.RunStrategyAlways),
			vmi: inst(virtv1.Failed), want: deleted, printable: virtv1.VirtualMachineStatusCrashLoopBackOff, failCount: 1, retryIn: 10 * time.Second},
		{name: "an instance failing soon after it ran doubles the back-off", vm: newVM(virtv1.RunStrategyAlways, failures(2, now.Add(-time.Minute))),
			vmi: inst(virtv1.Failed, ranFor(5*time.Second)), want: deleted, printable: virtv1.VirtualMachineStatusCrashLoopBackOff, failCount: 3, retryIn: 40 * time.Second},
		{name: "the back-off is capped", vm: newVM(virtv1.RunStrategyAlways, failures(9, now.Add(-time.Minute))),
			vmi: inst(virtv1.Failed), want: deleted, printable: virtv1.VirtualMachineStatusCrashLoopBackOff, failCount: 10, retryIn: time.Minute},
		{name: "no instance during the back-off", vm: newVM(virtv1.RunStrategyAlways, failures(1, now.Add(5*time.Second))),
			want: none, printable: virtv1.VirtualMachineStatusCrashLoopBackOff, failCount: 1, retryIn: 5 * time.Second},
		{name: "the next instance after the back-off", vm: newVM(virtv1.RunStrategyAlways, failures(1, now.Add(-time.Second))),
			want: created, printable: virtv1.VirtualMachineStatusStarting, failCount: 1, retryIn: -time.Second},
		{name: "an instance that runs long enough ends the crash loop", vm: newVM(virtv1.RunStrategyAlways, failures(4, now.Add(-time.Hour))),
			vmi:  inst(virtv1.Running, ranFor(2*time.Minute), vmiCond(virtv1.VirtualMachineInstanceReady, corev1.ConditionTrue, "")),
			want: kept, printable: virtv1.VirtualMachineStatusRunning, ready: true},
		{name: "an instance that ran briefly keeps the count", vm: newVM(virtv1.RunStrategyAlways, failures(4, now.Add(-time.Minute))),
			vmi: inst(virtv1.Running, ranFor(10*time.Second)), want: kept, printable: virtv1.VirtualMachineStatusRunning, failCount: 4, retryIn: -time.Minute},
		{name: "RerunOnFailure leaves an instance that shut down", vm: newVM(virtv1.RunStrategyRerunOnFailure),
			vmi: inst(virtv1.Succeeded, ranFor(time.Hour)), want: kept, printable: virtv1.VirtualMachineStatusStopped},
		{name: "RerunOnFailure restarts a failed instance", vm: newVM(virtv1.RunStrategyRerunOnFailure),
			vmi: inst(virtv1.Failed), want: deleted, printable: virtv1.VirtualMachineStatusCrashLoopBackOff, failCount: 1, retryIn: 10 * time.Second},
		{name: "RerunOnFailure restarts an instance whose pod was evicted, without back-off", vm: newVM(virtv1.RunStrategyRerunOnFailure),
			vmi: inst(virtv1.Failed, ranFor(5*time.Second), vmiReason(virtv1.ReasonPodTerminated)), want: deleted, printable: virtv1.VirtualMachineStatusStopping},
		{name: "Always restarts an instance whose node was lost, without back-off", vm: newVM(virtv1.RunStrategyAlways, failures(2, now.Add(-time.Minute))),
			vmi: inst(virtv1.Failed, vmiReason(virtv1.ReasonNodeUnresponsive)), want: deleted, printable: virtv1.VirtualMachineStatusStopping},
		{name: "Manual leaves an instance whose pod was evicted", vm: newVM(virtv1.RunStrategyManual, synced(virtv1.VirtualMachineStatusRunning)),
			vmi: inst(virtv1.Failed, ranFor(time.Hour), vmiReason(virtv1.ReasonPodTerminated)), want: kept, printable: virtv1.VirtualMachineStatusStopped},
		{name: "RerunOnFailure without instance creates one", vm: newVM(virtv1.RunStrategyRerunOnFailure), want: created, printable: virtv1.VirtualMachineStatusStarting},
		{name: "Manual starts a new VM", vm: newVM(virtv1.RunStrategyManual), want: created, printable: virtv1.VirtualMachineStatusStarting},
		{name: "Manual does not restart", vm: newVM(virtv1.RunStrategyManual, synced(virtv1.VirtualMachineStatusStopped)),
			want: none, printable: virtv1.VirtualMachineStatusStopped},
		{name: "Manual leaves a failed instance", vm: newVM(virtv1.RunStrategyManual, synced(virtv1.VirtualMachineStatusRunning)),
			vmi: inst(virtv1.Failed), want: kept, printable: virtv1.VirtualMachineStatusStopped},
		{name: "an instance being deleted is waited for", vm: newVM(virtv1.RunStrategyAlways), vmi: inst(virtv1.Running, vmiDeleting),
			want: kept, printable: virtv1.VirtualMachineStatusStopping},
		{name: "a VM being deleted deletes its instance", vm: newVM(virtv1.RunStrategyAlways, func(vm *virtv1.VirtualMachine) {
			vm.DeletionTimestamp = ptr.To(metav1.NewTime(now))
			vm.Finalizers = []string{"foregroundDeletion"}
		}), vmi: inst(virtv1.Running), want: deleted, printable: virtv1.VirtualMachineStatusTerminating},
		{name: "a foreign VMI of the same name is left alone", vm: newVM(virtv1.RunStrategyHalted), vmi: inst(virtv1.Running, notOwned),
			want: kept, printable: virtv1.VirtualMachineStatusStopped, foreign: true},
		{name: "Starting while scheduling", vm: newVM(virtv1.RunStrategyAlways), vmi: inst(virtv1.Scheduling),
			want: kept, printable: virtv1.VirtualMachineStatusStarting},
		{name: "an unschedulable instance", vm: newVM(virtv1.RunStrategyAlways),
			vmi:  inst(virtv1.Scheduling, vmiCond(virtv1.VirtualMachineInstancePodScheduled, corev1.ConditionFalse, virtv1.ReasonUnschedulable)),
			want: kept, printable: virtv1.VirtualMachineStatusUnschedulable},
		{name: "Starting once scheduled", vm: newVM(virtv1.RunStrategyAlways), vmi: inst(virtv1.Scheduled), want: kept, printable: virtv1.VirtualMachineStatusStarting},
		{name: "a paused instance", vm: newVM(virtv1.RunStrategyAlways),
			vmi:  inst(virtv1.Running, ranFor(time.Hour), vmiCond(virtv1.VirtualMachineInstancePaused, corev1.ConditionTrue, "")),
			want: kept, printable: virtv1.VirtualMachineStatusPaused},
		{name: "a migrating instance, paused for the copy", vm: newVM(virtv1.RunStrategyAlways),
			vmi:  inst(virtv1.Running, ranFor(time.Hour), vmiCond(virtv1.VirtualMachineInstancePaused, corev1.ConditionTrue, ""), migrating(true)),
			want: kept, printable: virtv1.VirtualMachineStatusMigrating},
		{name: "a migrated instance: running again", vm: newVM(virtv1.RunStrategyAlways),
			vmi: inst(virtv1.Running, ranFor(time.Hour), migrating(false)), want: kept, printable: virtv1.VirtualMachineStatusRunning},
		{name: "an instance in Unknown", vm: newVM(virtv1.RunStrategyAlways), vmi: inst(virtv1.Unknown), want: kept, printable: virtv1.VirtualMachineStatusUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var vmi *virtv1.VirtualMachineInstance
			if tt.vmi != nil {
				vmi = tt.vmi(tt.vm)
			}
			f := newFixture(t, tt.vm, vmi)
			if err := f.sync(tt.vm); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got := f.vmi()
			expectInstance(t, tt.want, vmi, got)
			if n := f.writes("create", "virtualmachineinstances"); (tt.want == created) != (n == 1) || n > 1 {
				t.Errorf("%d instance creations", n)
			}
			status := f.vm().Status
			if status.PrintableStatus != tt.printable {
				t.Errorf("printableStatus %s, want %s", status.PrintableStatus, tt.printable)
			}
			if status.Ready != tt.ready {
				t.Errorf("ready %v, want %v", status.Ready, tt.ready)
			}
			if wantCreated := !tt.foreign && (tt.want == created || tt.want == kept || tt.want == deleted); status.Created != wantCreated {
				t.Errorf("created %v, want %v", status.Created, wantCreated)
			}
			sf := status.StartFailure
			switch {
			case tt.failCount == 0 && sf != nil:
				t.Errorf("startFailure %+v, want none", sf)
			case tt.failCount != 0 && (sf == nil || sf.ConsecutiveFailCount != tt.failCount || sf.RetryAfterTimestamp == nil ||
				!sf.RetryAfterTimestamp.Time.Equal(now.Add(tt.retryIn))):
				t.Errorf("startFailure %+v, want %d failures and a retry in %s", sf, tt.failCount, tt.retryIn)
			}
			if status.ObservedGeneration != tt.vm.Generation {
				t.Errorf("observedGeneration %d", status.ObservedGeneration)
			}
		})
	}
}

func TestNewInstance(t *testing.T) {
	vm := newVM(virtv1.RunStrategyAlways)
	vmi, err := NewInstance(vm)
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Name != "vm1" || vmi.Namespace != "ns" || vmi.Labels["app"] != "web" || vmi.Labels[virtv1.VMNameLabel] != "vm1" ||
		vmi.Annotations["note"] != "x" || vmi.Spec.Hostname != "web" {
		t.Errorf("instance does not follow the template: %+v", vmi.ObjectMeta)
	}
	if !metav1.IsControlledBy(vmi, vm) || !ptr.Deref(vmi.OwnerReferences[0].BlockOwnerDeletion, false) {
		t.Errorf("instance not controlled by the VM: %+v", vmi.OwnerReferences)
	}
	again, _ := NewInstance(vm)
	other, _ := NewInstance(newVM(virtv1.RunStrategyAlways, func(vm *virtv1.VirtualMachine) { vm.UID = "other" }))
	uuid := vmi.Spec.Domain.Firmware.UUID
	if uuid == "" || uuid == vm.UID || uuid != again.Spec.Domain.Firmware.UUID || uuid == other.Spec.Domain.Firmware.UUID {
		t.Errorf("firmware UUID %q is not a stable function of the VM's UID", uuid)
	}
	if vm.Spec.Template.Spec.Domain.Firmware != nil {
		t.Errorf("NewInstance changed the VM's template")
	}
	set := newVM(virtv1.RunStrategyAlways, func(vm *virtv1.VirtualMachine) {
		vm.Spec.Template.Spec.Domain.Firmware = &virtv1.Firmware{UUID: "5f1d-given"}
	})
	if vmi, _ := NewInstance(set); vmi.Spec.Domain.Firmware.UUID != "5f1d-given" {
		t.Errorf("the template's firmware UUID was replaced")
	}
	// The fencing policy reads the VMI: the VM's fence-after reaches it,
	// unless the template sets its own.
	fenced := newVM(virtv1.RunStrategyAlways, func(vm *virtv1.VirtualMachine) {
		vm.Annotations = map[string]string{virtv1.FenceNodeAfterAnnotation: "90s"}
	})
	if vmi, _ := NewInstance(fenced); vmi.Annotations[virtv1.FenceNodeAfterAnnotation] != "90s" || vmi.Annotations["note"] != "x" {
		t.Errorf("the VM's fence-after did not reach its instance: %v", vmi.Annotations)
	}
	fenced.Spec.Template.ObjectMeta.Annotations = map[string]string{virtv1.FenceNodeAfterAnnotation: virtv1.FenceNodeNever}
	if vmi, _ := NewInstance(fenced); vmi.Annotations[virtv1.FenceNodeAfterAnnotation] != virtv1.FenceNodeNever {
		t.Errorf("the template's fence-after was replaced by the VM's: %v", vmi.Annotations)
	}
	if fenced.Spec.Template.ObjectMeta.Annotations[virtv1.FenceNodeAfterAnnotation] != virtv1.FenceNodeNever {
		t.Errorf("NewInstance changed the VM's template annotations")
	}
	if _, err := NewInstance(newVM(virtv1.RunStrategyAlways, func(vm *virtv1.VirtualMachine) { vm.Spec.Template = nil })); err == nil {
		t.Errorf("no error for a VM without a template")
	}
}

// TestNoWriteWithoutChange: a second sync of an unchanged world writes nothing.
func TestNoWriteWithoutChange(t *testing.T) {
	vm := newVM(virtv1.RunStrategyAlways)
	vmi := instance(vm, virtv1.Running, ranFor(time.Hour), vmiCond(virtv1.VirtualMachineInstanceReady, corev1.ConditionTrue, ""))
	f := newFixture(t, vm, vmi)
	if err := f.sync(vm); err != nil {
		t.Fatal(err)
	}
	written := f.vm()
	f2 := newFixture(t, written, vmi)
	if err := f2.sync(written); err != nil {
		t.Fatal(err)
	}
	if n := f2.writes("update", "virtualmachines"); n != 0 {
		t.Errorf("%d VM status writes on a re-sync, want 0", n)
	}
	if n := f.writes("update", "virtualmachines"); n != 1 {
		t.Errorf("%d VM status writes on the first sync, want 1", n)
	}
}

func TestForeignVMICondition(t *testing.T) {
	vm := newVM(virtv1.RunStrategyAlways)
	f := newFixture(t, vm, instance(vm, virtv1.Running, notOwned))
	if err := f.sync(vm); err != nil {
		t.Fatal(err)
	}
	c := f.vm().Status.Condition(virtv1.VirtualMachineFailure)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != reasonVMIExists {
		t.Errorf("Failure condition %+v, want VMIExists", c)
	}
}

func TestCrashLoopEvent(t *testing.T) {
	vm := newVM(virtv1.RunStrategyAlways)
	f := newFixture(t, vm, instance(vm, virtv1.Failed))
	if err := f.sync(vm); err != nil {
		t.Fatal(err)
	}
	var events []string
	for len(f.recorder.Events) > 0 {
		events = append(events, <-f.recorder.Events)
	}
	joined := strings.Join(events, "\n")
	if !strings.Contains(joined, "Warning CrashLoopBackOff") || !strings.Contains(joined, "Normal SuccessfulDelete") {
		t.Errorf("events %q, want a crash-loop warning and the deletion", events)
	}
}

// TestRestartEvent: the VM says why it gets a new instance, with the old
// one's reason, before the old one goes.
func TestRestartEvent(t *testing.T) {
	vm := newVM(virtv1.RunStrategyAlways)
	vmi := instance(vm, virtv1.Failed, ranFor(time.Hour), vmiReason(virtv1.ReasonPodTerminated),
		vmiCond(virtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, virtv1.ReasonPodTerminated))
	vmi.Status.Conditions[0].Message = "The launcher pod virt-launcher-vm1-x was evicted (Eviction API: evicting); the guest powered off"
	f := newFixture(t, vm, vmi)
	if err := f.sync(vm); err != nil {
		t.Fatal(err)
	}
	var events []string
	for len(f.recorder.Events) > 0 {
		events = append(events, <-f.recorder.Events)
	}
	want := "Normal Restarting Instance vm1 (uid vmi-uid) ended Failed (PodTerminated: The launcher pod virt-launcher-vm1-x was evicted (Eviction API: evicting); the guest powered off); run strategy Always starts a new one"
	if len(events) == 0 || events[0] != want {
		t.Errorf("events %q, want first %q", events, want)
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Base: 10 * time.Second, Max: 5 * time.Minute}
	for n, want := range map[int32]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 6: 5 * time.Minute, 100: 5 * time.Minute} {
		if got := b.Delay(n); got != want {
			t.Errorf("Delay(%d) = %s, want %s", n, got, want)
		}
	}
}

// expectInstance checks what became of the instance before a sync.
func expectInstance(t *testing.T, want outcome, before, got *virtv1.VirtualMachineInstance) {
	t.Helper()
	switch want {
	case kept:
		if got == nil || got.UID != before.UID {
			t.Errorf("the instance was not kept: %v", got)
		}
	case none:
		if got != nil {
			t.Errorf("an instance exists: %s", got.UID)
		}
	case deleted:
		if got != nil {
			t.Errorf("the instance was not deleted")
		}
	case created:
		if got == nil || (before != nil && got.UID == before.UID) {
			t.Errorf("no new instance")
		}
	}
}

// TestStatusWriteOfADeletedVM: a VM deleted after the cache read it is not
// retried (its delete event ends it); a VM changed meanwhile is.
func TestStatusWriteOfADeletedVM(t *testing.T) {
	for _, tt := range []struct {
		name        string
		err         error
		wantRequeue bool
	}{
		{"deleted", apierrors.NewNotFound(virtv1.Resource("virtualmachines"), "vm1"), false},
		{"changed", apierrors.NewConflict(virtv1.Resource("virtualmachines"), "vm1", fmt.Errorf("the object has been modified")), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vm := newVM(virtv1.RunStrategyHalted)
			f := newFixture(t, vm, nil)
			f.virt.PrependReactor("update", "virtualmachines", func(action k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, tt.err
			})
			key := vm.Namespace + "/" + vm.Name
			f.ctrl.queue.Add(key)
			f.ctrl.processNextWorkItem(t.Context())
			if n := f.writes("update", "virtualmachines"); n != 1 {
				t.Fatalf("%d status writes, want 1", n)
			}
			if got := f.ctrl.queue.NumRequeues(key) > 0; got != tt.wantRequeue {
				t.Errorf("requeued %v after %v, want %v", got, tt.err, tt.wantRequeue)
			}
		})
	}
}
