package virtualmachine

import (
	"context"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/registry/registrytest"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineinstance"
)

// lifecycleFixture is a VM store and a VMI store on one etcd, and the VM's
// actions wired to both, as in the server.
type lifecycleFixture struct {
	t         *testing.T
	ctx       context.Context
	vms       *REST
	status    *StatusREST
	vmis      *virtualmachineinstance.REST
	vmiStatus *virtualmachineinstance.StatusREST
	l         *lifecycle
}

func newLifecycleFixture(t *testing.T) *lifecycleFixture {
	t.Helper()
	scheme := registrytest.NewScheme()
	getter := registrytest.SharedOptionsGetter(t, scheme)
	vms, status, err := NewREST(scheme, getter, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vms.Store.DestroyFunc)
	vmis, vmiStatus, err := virtualmachineinstance.NewREST(scheme, getter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vmis.Store.DestroyFunc)
	return &lifecycleFixture{
		t: t, ctx: genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace),
		vms: vms, status: status, vmis: vmis, vmiStatus: vmiStatus,
		l: &lifecycle{vms: vms.Store, status: status.store, vmis: vmis},
	}
}

// instance is the state of a VM's VMI before an action.
type instance string

const (
	noVMI      instance = ""
	runningVMI instance = "Running"
	succeeded  instance = "Succeeded"
	failed     instance = "Failed"
	// stopping is a Running VMI being deleted.
	stopping instance = "Stopping"
	// foreign is a VMI of the VM's name that another owner controls.
	foreign instance = "Foreign"
)

// vm creates VM "vm" with strategy (or the deprecated running, for
// runningTrue and runningFalse), pending state change requests, and its
// instance in state.
func (f *lifecycleFixture) vm(strategy *virtualization.VirtualMachineRunStrategy, state instance, pending ...virtualization.VirtualMachineStateChangeRequest) (*virtualization.VirtualMachine, *virtualization.VirtualMachineInstance) {
	f.t.Helper()
	in := validVM("vm")
	switch in.Spec.RunStrategy = strategy; strategy {
	case runningTrue, runningFalse:
		in.Spec.RunStrategy = nil
		in.Spec.Running = ptr.To(strategy == runningTrue)
	}
	obj, err := f.vms.Create(f.ctx, in, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	vm := obj.(*virtualization.VirtualMachine)
	if len(pending) > 0 {
		vm = vm.DeepCopy()
		vm.Status.StateChangeRequests = pending
		obj, _, err = f.status.Update(f.ctx, vm.Name, rest.DefaultUpdatedObjectInfo(vm), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		vm = obj.(*virtualization.VirtualMachine)
	}
	if state == noVMI {
		return vm, nil
	}
	vmi := &virtualization.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "virtualization.kubevirt.io/v1", Kind: "VirtualMachine",
				Name: vm.Name, UID: vm.UID, Controller: ptr.To(true)}}},
		Spec: *vm.Spec.Template.Spec.DeepCopy(),
	}
	if state == foreign {
		vmi.OwnerReferences = nil
	}
	if obj, err = f.vmis.Create(f.ctx, vmi, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	vmi = obj.(*virtualization.VirtualMachineInstance)
	switch state {
	case runningVMI, stopping:
		vmi = f.phases(vmi, virtualization.Scheduled, virtualization.Running)
	case succeeded:
		vmi = f.phases(vmi, virtualization.Succeeded)
	case failed:
		vmi = f.phases(vmi, virtualization.Failed)
	}
	if state == stopping {
		obj, _, err := f.vmis.Delete(f.ctx, vmi.Name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		vmi = obj.(*virtualization.VirtualMachineInstance)
	}
	return vm, vmi
}

// phases moves vmi through phases as the controller and the node would.
func (f *lifecycleFixture) phases(vmi *virtualization.VirtualMachineInstance, phases ...virtualization.VirtualMachineInstancePhase) *virtualization.VirtualMachineInstance {
	f.t.Helper()
	for _, p := range phases {
		vmi = vmi.DeepCopy()
		if p == virtualization.Scheduled {
			vmi.Status.NodeName = "node1"
		}
		vmi.Status.SetPhase(p, "", metav1.Now())
		obj, _, err := f.vmiStatus.Update(f.ctx, vmi.Name, rest.DefaultUpdatedObjectInfo(vmi), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			f.t.Fatalf("VMI to %s: %v", p, err)
		}
		vmi = obj.(*virtualization.VirtualMachineInstance)
	}
	return vmi
}

// do runs the action of body on VM "vm"; action.REST, which decodes the
// body of a request, is tested on its own and through the server.
func (f *lifecycleFixture) do(body runtime.Object) (runtime.Object, error) {
	switch b := body.(type) {
	case *virtualization.StartOptions:
		return f.l.start(f.ctx, "vm", b)
	case *virtualization.StopOptions:
		return f.l.stop(f.ctx, "vm", b)
	case *virtualization.RestartOptions:
		return f.l.restart(f.ctx, "vm", b)
	}
	f.t.Fatalf("no action takes a %T", body)
	return nil, nil
}

func (f *lifecycleFixture) get() (*virtualization.VirtualMachine, *virtualization.VirtualMachineInstance) {
	f.t.Helper()
	obj, err := f.vms.Get(f.ctx, "vm", &metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	vm := obj.(*virtualization.VirtualMachine)
	obj, err = f.vmis.Get(f.ctx, "vm", &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return vm, nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return vm, obj.(*virtualization.VirtualMachineInstance)
}

var (
	always         = ptr.To(virtualization.RunStrategyAlways)
	rerunOnFailure = ptr.To(virtualization.RunStrategyRerunOnFailure)
	manual         = ptr.To(virtualization.RunStrategyManual)
	halted         = ptr.To(virtualization.RunStrategyHalted)
	// runningTrue and runningFalse stand for the deprecated spec.running.
	runningTrue  = ptr.To(virtualization.VirtualMachineRunStrategy("running: true"))
	runningFalse = ptr.To(virtualization.VirtualMachineRunStrategy("running: false"))
)

// outcome is what an action left behind.
type outcome struct {
	// runStrategy is the VM's effective run strategy after the action.
	runStrategy virtualization.VirtualMachineRunStrategy
	// requests are the VM's state change requests ("Stop:vmi", "Start").
	requests string
	// grace is the instance's terminationGracePeriodSeconds (0: no instance).
	grace int64
}

func observe(vm *virtualization.VirtualMachine, vmi *virtualization.VirtualMachineInstance) outcome {
	var reqs []string
	for _, r := range vm.Status.StateChangeRequests {
		s := string(r.Action)
		if r.UID != nil {
			s += ":" + string(*r.UID)
			if vmi != nil && *r.UID == vmi.UID {
				s = string(r.Action) + ":vmi"
			}
		}
		reqs = append(reqs, s)
	}
	o := outcome{runStrategy: vm.Spec.EffectiveRunStrategy(), requests: strings.Join(reqs, ",")}
	if vmi != nil {
		o.grace = *vmi.Spec.TerminationGracePeriodSeconds
	}
	return o
}

type lifecycleCase struct {
	name     string
	strategy *virtualization.VirtualMachineRunStrategy
	state    instance
	pending  []virtualization.VirtualMachineStateChangeRequest
	body     runtime.Object
	// wantCode is the HTTP status of the error; 0 for success.
	wantCode int32
	// wantMessage is part of the error's or the success's message.
	wantMessage string
	// want is what the action leaves behind; on an error, nothing changed.
	want outcome
}

func runLifecycleCases(t *testing.T, cases []lifecycleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newLifecycleFixture(t)
			before := observe(f.vm(tc.strategy, tc.state, tc.pending...))
			obj, err := f.do(tc.body)
			var msg string
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatalf("err = %v, want success", err)
			case tc.wantCode == 0:
				st := obj.(*metav1.Status)
				if st.Status != metav1.StatusSuccess {
					t.Fatalf("status = %+v, want Success", st)
				}
				msg = st.Message
			case err == nil:
				t.Fatalf("succeeded (%v), want %d", obj, tc.wantCode)
			default:
				st, ok := err.(apierrors.APIStatus)
				if !ok || st.Status().Code != tc.wantCode {
					t.Fatalf("err = %#v, want an API error with code %d", err, tc.wantCode)
				}
				msg = st.Status().Message
			}
			if !strings.Contains(msg, tc.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", msg, tc.wantMessage)
			}
			want := tc.want
			if tc.wantCode != 0 {
				want = before
			}
			if got := observe(f.get()); got != want {
				t.Errorf("after: %+v, want %+v", got, want)
			}
		})
	}
}

var (
	startReq = virtualization.VirtualMachineStateChangeRequest{Action: virtualization.StartRequest}
	stopReq  = virtualization.VirtualMachineStateChangeRequest{Action: virtualization.StopRequest, UID: ptr.To(types.UID("gone"))}
)

func TestStart(t *testing.T) {
	body := &virtualization.StartOptions{}
	runLifecycleCases(t, []lifecycleCase{
		{name: "Halted, no VMI: Always", strategy: halted, body: body, wantMessage: "VM vm is starting",
			want: outcome{runStrategy: virtualization.RunStrategyAlways}},
		{name: "running=false: running=true", strategy: runningFalse, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyAlways}},
		{name: "Halted, VMI stopping: Always", strategy: halted, state: stopping, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyAlways, grace: 30}},
		{name: "Halted, VMI running", strategy: halted, state: runningVMI, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm is already running (VMI phase Running)"},
		{name: "Manual, no VMI: Start", strategy: manual, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyManual, requests: "Start"}},
		{name: "Manual, VMI stopping: Start", strategy: manual, state: stopping, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyManual, requests: "Start", grace: 30}},
		{name: "Manual, VMI succeeded: Stop it, Start", strategy: manual, state: succeeded, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyManual, requests: "Stop:vmi,Start", grace: 30}},
		{name: "Manual, VMI running", strategy: manual, state: runningVMI, body: body,
			wantCode: http.StatusConflict, wantMessage: "already running"},
		{name: "Manual, a stop pending", strategy: manual, pending: []virtualization.VirtualMachineStateChangeRequest{stopReq}, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm has a start or stop underway (stateChangeRequests [Stop])"},
		{name: "RerunOnFailure, VMI succeeded: Stop it, Start", strategy: rerunOnFailure, state: succeeded, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyRerunOnFailure, requests: "Stop:vmi,Start", grace: 30}},
		{name: "RerunOnFailure, no VMI: Start", strategy: rerunOnFailure, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyRerunOnFailure, requests: "Start"}},
		{name: "RerunOnFailure, VMI failed", strategy: rerunOnFailure, state: failed, body: body,
			wantCode: http.StatusConflict, wantMessage: "restarts its failed instance by itself"},
		{name: "RerunOnFailure, VMI running", strategy: rerunOnFailure, state: runningVMI, body: body,
			wantCode: http.StatusConflict, wantMessage: "already running"},
		{name: "Always, no VMI", strategy: always, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm has runStrategy Always: the controller starts its instance by itself"},
		{name: "Always, VMI running", strategy: always, state: runningVMI, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm is already running"},
		{name: "foreign VMI", strategy: halted, state: foreign, body: body,
			wantCode: http.StatusConflict, wantMessage: "VMI vm exists and is not controlled by VM vm"},
		{name: "dry run", strategy: halted, body: &virtualization.StartOptions{DryRun: []string{metav1.DryRunAll}},
			wantMessage: "dry run", want: outcome{runStrategy: virtualization.RunStrategyHalted}},
		{name: "bad dry run", strategy: halted, body: &virtualization.StartOptions{DryRun: []string{"Some"}},
			wantCode: http.StatusUnprocessableEntity, wantMessage: "dryRun"},
	})
}

func TestStop(t *testing.T) {
	body := &virtualization.StopOptions{}
	grace := func(s int64) *virtualization.StopOptions { return &virtualization.StopOptions{GracePeriod: &s} }
	runLifecycleCases(t, []lifecycleCase{
		{name: "Always, VMI running: Halted", strategy: always, state: runningVMI, body: body, wantMessage: "VM vm is stopping",
			want: outcome{runStrategy: virtualization.RunStrategyHalted, grace: 30}},
		{name: "Always, no VMI: Halted", strategy: always, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyHalted}},
		{name: "running=true: running=false", strategy: runningTrue, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyHalted}},
		{name: "RerunOnFailure, VMI running: Halted", strategy: rerunOnFailure, state: runningVMI, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyHalted, grace: 30}},
		{name: "Always, gracePeriod 5: shortened", strategy: always, state: runningVMI, body: grace(5),
			want: outcome{runStrategy: virtualization.RunStrategyHalted, grace: 5}},
		{name: "Always, gracePeriod 60: kept", strategy: always, state: runningVMI, body: grace(60),
			want: outcome{runStrategy: virtualization.RunStrategyHalted, grace: 30}},
		{name: "Manual, VMI running: Stop it", strategy: manual, state: runningVMI, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyManual, requests: "Stop:vmi", grace: 30}},
		{name: "Manual, gracePeriod 0: Stop it, shortened", strategy: manual, state: runningVMI, body: grace(0),
			want: outcome{runStrategy: virtualization.RunStrategyManual, requests: "Stop:vmi", grace: 0}},
		{name: "Manual, a start pending: the stop replaces it", strategy: manual, state: runningVMI,
			pending: []virtualization.VirtualMachineStateChangeRequest{startReq}, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyManual, requests: "Stop:vmi", grace: 30}},
		{name: "Manual, no VMI", strategy: manual, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm is not running"},
		{name: "Manual, VMI succeeded", strategy: manual, state: succeeded, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm is not running"},
		{name: "Manual, VMI stopping", strategy: manual, state: stopping, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm is already stopping; only a gracePeriod shorter than its instance's (30s)"},
		{name: "Manual, VMI stopping, gracePeriod 1: shortened", strategy: manual, state: stopping, body: grace(1),
			want: outcome{runStrategy: virtualization.RunStrategyManual, grace: 1}},
		{name: "Halted, no VMI", strategy: halted, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm is not running"},
		{name: "Halted, VMI running", strategy: halted, state: runningVMI, body: body,
			wantCode: http.StatusConflict, wantMessage: "already stopping"},
		{name: "Halted, VMI running, gracePeriod 30", strategy: halted, state: runningVMI, body: grace(30),
			wantCode: http.StatusConflict, wantMessage: "already stopping"},
		{name: "Halted, VMI stopping, gracePeriod 2: shortened", strategy: halted, state: stopping, body: grace(2),
			want: outcome{runStrategy: virtualization.RunStrategyHalted, grace: 2}},
		{name: "foreign VMI", strategy: always, state: foreign, body: body,
			wantCode: http.StatusConflict, wantMessage: "not controlled by VM vm"},
		{name: "dry run", strategy: manual, state: runningVMI,
			body: &virtualization.StopOptions{GracePeriod: ptr.To(int64(0)), DryRun: []string{metav1.DryRunAll}},
			want: outcome{runStrategy: virtualization.RunStrategyManual, grace: 30}},
		{name: "negative gracePeriod", strategy: always, state: runningVMI, body: grace(-1),
			wantCode: http.StatusUnprocessableEntity, wantMessage: "gracePeriod"},
	})
}

func TestRestart(t *testing.T) {
	body := &virtualization.RestartOptions{}
	runLifecycleCases(t, []lifecycleCase{
		{name: "Always, VMI running: Stop it, Start", strategy: always, state: runningVMI, body: body, wantMessage: "VM vm is restarting",
			want: outcome{runStrategy: virtualization.RunStrategyAlways, requests: "Stop:vmi,Start", grace: 30}},
		{name: "Manual, VMI succeeded: Stop it, Start", strategy: manual, state: succeeded, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyManual, requests: "Stop:vmi,Start", grace: 30}},
		{name: "RerunOnFailure, VMI failed: Stop it, Start", strategy: rerunOnFailure, state: failed, body: body,
			want: outcome{runStrategy: virtualization.RunStrategyRerunOnFailure, requests: "Stop:vmi,Start", grace: 30}},
		{name: "Manual, gracePeriodSeconds 0: shortened", strategy: manual, state: runningVMI,
			body: &virtualization.RestartOptions{GracePeriodSeconds: ptr.To(int64(0))},
			want: outcome{runStrategy: virtualization.RunStrategyManual, requests: "Stop:vmi,Start", grace: 0}},
		{name: "Halted", strategy: halted, state: runningVMI, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm is stopped (runStrategy Halted): start it instead"},
		{name: "Always, no VMI", strategy: always, body: body,
			wantCode: http.StatusConflict, wantMessage: "VM vm is not running: it has no instance to restart"},
		{name: "a stop pending", strategy: manual, state: runningVMI, pending: []virtualization.VirtualMachineStateChangeRequest{stopReq}, body: body,
			wantCode: http.StatusConflict, wantMessage: "underway"},
		{name: "dry run", strategy: always, state: runningVMI, body: &virtualization.RestartOptions{DryRun: []string{metav1.DryRunAll}},
			want: outcome{runStrategy: virtualization.RunStrategyAlways, grace: 30}},
		{name: "negative gracePeriodSeconds", strategy: always, state: runningVMI,
			body:     &virtualization.RestartOptions{GracePeriodSeconds: ptr.To(int64(-1))},
			wantCode: http.StatusUnprocessableEntity, wantMessage: "gracePeriodSeconds"},
	})
}

// TestActionsOnMissingAndDeletedVMs: a missing VM is 404; a VM being
// deleted takes no action.
func TestActionsOnMissingAndDeletedVMs(t *testing.T) {
	f := newLifecycleFixture(t)
	actions := map[string]runtime.Object{
		"start":   &virtualization.StartOptions{},
		"stop":    &virtualization.StopOptions{},
		"restart": &virtualization.RestartOptions{},
	}
	for name, body := range actions {
		if _, err := f.do(body); !apierrors.IsNotFound(err) {
			t.Errorf("%s of a missing VM: err = %v, want NotFound", name, err)
		}
	}
	vm := validVM("vm")
	vm.Finalizers = []string{"test/hold"}
	if _, err := f.vms.Create(f.ctx, vm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.vms.Delete(f.ctx, "vm", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, body := range actions {
		if _, err := f.do(body); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "VM vm is being deleted") {
			t.Errorf("%s of a VM being deleted: err = %v, want Conflict", name, err)
		}
	}
}

// TestStopRestoresGracePeriodWhenTheVMCannotBeWritten: the grace period is
// shortened before the VM is written; a VM write that fails sets it back,
// so a stop that did not happen leaves the instance as it was.
func TestStopRestoresGracePeriodWhenTheVMCannotBeWritten(t *testing.T) {
	f := newLifecycleFixture(t)
	vm, vmi := f.vm(manual, runningVMI)
	// A request list the status validation refuses stands for any failed write.
	c := &change{gracePeriod: ptr.To(int64(1)), requests: []virtualization.VirtualMachineStateChangeRequest{{Action: "Reboot"}}}
	if err := f.l.write(f.ctx, vm, vmi, c, nil); !apierrors.IsInvalid(err) {
		t.Fatalf("write: err = %v, want Invalid", err)
	}
	if _, got := f.get(); *got.Spec.TerminationGracePeriodSeconds != 30 {
		t.Errorf("grace period = %d, want 30 restored", *got.Spec.TerminationGracePeriodSeconds)
	}
}
