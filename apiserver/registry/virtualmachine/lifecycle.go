package virtualmachine

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/dryrun"
	"k8s.io/klog/v2"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/validation"
	"kubevirt.dev/virt/apiserver/action"
)

// Instances is what the lifecycle subresources need of the VMI storage
// (virtualmachineinstance.REST): a VM's instance, and a way to shorten its
// grace period.
type Instances interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
	SetTerminationGracePeriod(ctx context.Context, name string, uid types.UID, seconds int64, dryRun []string) (int64, error)
}

// Lifecycle is the storage of virtualmachines/start, /stop and /restart.
type Lifecycle struct {
	Start   *action.REST
	Stop    *action.REST
	Restart *action.REST
}

// NewLifecycle returns the lifecycle subresources of the VMs of vms, whose
// instances are in vmis.
func NewLifecycle(scheme *runtime.Scheme, vms *REST, status *StatusREST, vmis Instances) (Lifecycle, error) {
	l := &lifecycle{vms: vms.Store, status: status.store, vmis: vmis}
	start, err := action.New(scheme, func() *virtualization.StartOptions { return &virtualization.StartOptions{} }, l.start)
	if err != nil {
		return Lifecycle{}, err
	}
	stop, err := action.New(scheme, func() *virtualization.StopOptions { return &virtualization.StopOptions{} }, l.stop)
	if err != nil {
		return Lifecycle{}, err
	}
	restart, err := action.New(scheme, func() *virtualization.RestartOptions { return &virtualization.RestartOptions{} }, l.restart)
	if err != nil {
		return Lifecycle{}, err
	}
	return Lifecycle{Start: start, Stop: stop, Restart: restart}, nil
}

// start starts the VM name.
func (l *lifecycle) start(ctx context.Context, name string, opts *virtualization.StartOptions) (runtime.Object, error) {
	if errs := validation.ValidateStartOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(virtualization.Kind("StartOptions"), name, errs)
	}
	return l.act(ctx, name, dryrun.IsDryRun(opts.DryRun), start)
}

// stop stops the VM name.
func (l *lifecycle) stop(ctx context.Context, name string, opts *virtualization.StopOptions) (runtime.Object, error) {
	if errs := validation.ValidateStopOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(virtualization.Kind("StopOptions"), name, errs)
	}
	return l.act(ctx, name, dryrun.IsDryRun(opts.DryRun), func(vm *virtualization.VirtualMachine, vmi *virtualization.VirtualMachineInstance) (*change, error) {
		return stop(vm, vmi, opts.GracePeriod)
	})
}

// restart restarts the VM name.
func (l *lifecycle) restart(ctx context.Context, name string, opts *virtualization.RestartOptions) (runtime.Object, error) {
	if errs := validation.ValidateRestartOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(virtualization.Kind("RestartOptions"), name, errs)
	}
	return l.act(ctx, name, dryrun.IsDryRun(opts.DryRun), func(vm *virtualization.VirtualMachine, vmi *virtualization.VirtualMachineInstance) (*change, error) {
		return restart(vm, vmi, opts.GracePeriodSeconds)
	})
}

// lifecycle is what the three subresources share. An action reads the VM
// and its instance, decides, and writes what it decided with the VM's
// resourceVersion: the run strategy through the main resource (so the
// generation moves), state change requests through /status.
type lifecycle struct {
	vms    *genericregistry.Store
	status *genericregistry.Store
	vmis   Instances
}

// change is what an action does to a VM.
type change struct {
	// runStrategy replaces spec.runStrategy (or spec.running, when the VM
	// uses it).
	runStrategy *virtualization.VirtualMachineRunStrategy
	// requests replace status.stateChangeRequests.
	requests []virtualization.VirtualMachineStateChangeRequest
	// gracePeriod shortens the instance's terminationGracePeriodSeconds,
	// before anything else is written.
	gracePeriod *int64
	// done says what happens now, for the response.
	done string
}

// decision is an action's rule: what to do to vm, whose instance is vmi
// (nil when it has none).
type decision func(vm *virtualization.VirtualMachine, vmi *virtualization.VirtualMachineInstance) (*change, error)

// maxAttempts bounds how often an action decides again after the VM or its
// instance changed under it.
const maxAttempts = 5

// act runs decide on the current VM and writes the change. A write that
// loses a race (resourceVersion or UID conflict) decides again on what
// won. Errors are the API's own: the handler answers a wrapped one with 500.
func (l *lifecycle) act(ctx context.Context, name string, dryRun bool, decide decision) (runtime.Object, error) {
	var dry []string
	if dryRun {
		dry = []string{metav1.DryRunAll}
	}
	for attempt := 1; ; attempt++ {
		vm, vmi, err := l.read(ctx, name)
		if err != nil {
			return nil, err
		}
		c, err := decide(vm, vmi)
		if err != nil {
			return nil, err
		}
		err = l.write(ctx, vm, vmi, c, dry)
		if apierrors.IsConflict(err) && attempt < maxAttempts {
			continue
		}
		if err != nil {
			return nil, err
		}
		msg := c.done
		if dryRun {
			msg += " (dry run: nothing was changed)"
		}
		return &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK, Message: msg}, nil
	}
}

// read returns the VM and its instance. A VMI of the VM's name that the VM
// does not control is not its instance, and no action can make one while it
// exists.
func (l *lifecycle) read(ctx context.Context, name string) (*virtualization.VirtualMachine, *virtualization.VirtualMachineInstance, error) {
	obj, err := l.vms.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	vm := obj.(*virtualization.VirtualMachine)
	if vm.DeletionTimestamp != nil {
		return nil, nil, conflict(name, "VM %s is being deleted", name)
	}
	obj, err = l.vmis.Get(ctx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return vm, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	vmi := obj.(*virtualization.VirtualMachineInstance)
	if !metav1.IsControlledBy(vmi, vm) {
		return nil, nil, conflict(name, "VMI %s exists and is not controlled by VM %s", vmi.Name, name)
	}
	return vm, vmi, nil
}

// write makes change c of vm. The grace period comes first, so the
// instance is never deleted with the longer one; it is set back when the
// VM cannot be written.
func (l *lifecycle) write(ctx context.Context, vm *virtualization.VirtualMachine, vmi *virtualization.VirtualMachineInstance, c *change, dryRun []string) (err error) {
	if c.gracePeriod != nil {
		was, serr := l.vmis.SetTerminationGracePeriod(ctx, vmi.Name, vmi.UID, *c.gracePeriod, dryRun)
		if serr != nil {
			return serr
		}
		defer func() {
			if err == nil {
				return
			}
			if _, rerr := l.vmis.SetTerminationGracePeriod(ctx, vmi.Name, vmi.UID, was, dryRun); rerr != nil {
				klog.FromContext(ctx).Error(rerr, "Could not restore the grace period of an instance that was not stopped", "vmi", klog.KObj(vmi), "seconds", was)
			}
		}()
	}
	opts := &metav1.UpdateOptions{DryRun: dryRun}
	if c.runStrategy != nil {
		next := vm.DeepCopy()
		setRunStrategy(&next.Spec, *c.runStrategy)
		if _, _, err := l.vms.Update(ctx, vm.Name, rest.DefaultUpdatedObjectInfo(next), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, opts); err != nil {
			return err
		}
	}
	if c.requests != nil {
		next := vm.DeepCopy()
		next.Status.StateChangeRequests = c.requests
		// A start asked for by the user ends the crash-loop back-off.
		next.Status.StartFailure = nil
		if _, _, err := l.status.Update(ctx, vm.Name, rest.DefaultUpdatedObjectInfo(next), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, opts); err != nil {
			return err
		}
	}
	return nil
}

// setRunStrategy says s in the field the VM uses: runStrategy, or the
// deprecated running when only that is set.
func setRunStrategy(spec *virtualization.VirtualMachineSpec, s virtualization.VirtualMachineRunStrategy) {
	if spec.Running != nil && spec.RunStrategy == nil {
		running := s != virtualization.RunStrategyHalted
		spec.Running = &running
		return
	}
	spec.RunStrategy = &s
}

// withRequests is the change that asks the controller for reqs. Requests
// wait their turn, except a lone Stop, which replaces what is pending (a
// stop wins over a start or restart not yet done).
func withRequests(vm *virtualization.VirtualMachine, done string, reqs ...virtualization.VirtualMachineStateChangeRequest) (*change, error) {
	pending := vm.Status.StateChangeRequests
	if len(pending) > 0 && (len(reqs) != 1 || reqs[0].Action != virtualization.StopRequest) {
		return nil, conflict(vm.Name, "VM %s has a start or stop underway (stateChangeRequests %s): try again once the controller has acted on it",
			vm.Name, describe(pending))
	}
	return &change{requests: reqs, done: done}, nil
}

func describe(reqs []virtualization.VirtualMachineStateChangeRequest) string {
	s := "["
	for i, r := range reqs {
		if i > 0 {
			s += ", "
		}
		s += string(r.Action)
	}
	return s + "]"
}

// running reports whether vmi is an instance that has not ended.
func running(vmi *virtualization.VirtualMachineInstance) bool {
	return vmi != nil && !vmi.Status.Phase.IsFinal()
}

// shorter returns seconds when they are fewer than vmi's grace period.
func shorter(vmi *virtualization.VirtualMachineInstance, seconds *int64) *int64 {
	if seconds == nil || vmi.Spec.TerminationGracePeriodSeconds != nil && *seconds >= *vmi.Spec.TerminationGracePeriodSeconds {
		return nil
	}
	return seconds
}

func gracePeriodOf(vmi *virtualization.VirtualMachineInstance) string {
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil {
		return fmt.Sprintf("%ds", *g)
	}
	return "unset"
}

// conflict is a 409 whose message is only what went wrong: the action makes
// no sense in the VM's state.
func conflict(name, format string, args ...any) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusConflict,
		Reason:  metav1.StatusReasonConflict,
		Details: &metav1.StatusDetails{Group: virtualization.GroupName, Kind: "virtualmachines", Name: name},
		Message: fmt.Sprintf(format, args...),
	}}
}
