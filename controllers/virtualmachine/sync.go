package virtualmachine

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// firmwareNamespace is the name space of the firmware UUIDs derived from VM
// UIDs: a VM's guests keep one SMBIOS identity across restarts, and it is
// not the UID of any Kubernetes object.
var firmwareNamespace = uuid.MustParse("a9d5a3f4-39c3-4c5b-9a55-0e3e1b1f7d55")

// errVMGone: the VM was deleted after the cache read it. Its delete event
// follows; a retry would only ask the server again for what it no longer
// has, until the cache saw the delete (under a storm of short-lived VMs,
// one write or more per VM).
var errVMGone = errors.New("the VM was deleted")

// sync brings the VM of key one step closer to its run strategy and writes
// what it observed to the VM's status.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return fmt.Errorf("split key %q: %w", key, err)
	}
	vm, err := c.vmLister.VirtualMachines(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get VM %s: %w", key, err)
	}
	if !c.expectations.Satisfied(key) {
		logger.V(4).Info("Waiting for instance events")
		c.queue.AddAfter(key, c.expectations.Remaining(key))
		return nil
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(ns).Get(vm.Name)
	if apierrors.IsNotFound(err) {
		vmi = nil
	} else if err != nil {
		return fmt.Errorf("get instance of VM %s: %w", key, err)
	}
	now := c.clock.Now()
	status := vm.Status.DeepCopy()
	setInstancetypeRefs(vm, status)
	if vm.DeletionTimestamp == nil && hasReferences(vm) {
		updated, err := c.captureRevisions(ctx, vm)
		if err != nil {
			status.SetCondition(virtv1.VirtualMachineCondition{
				Type: virtv1.VirtualMachineFailure, Status: corev1.ConditionTrue, Reason: ReasonInstancetypeError, Message: err.Error(),
			}, metav1.NewTime(now))
			c.recorder.Eventf(vm, corev1.EventTypeWarning, ReasonInstancetypeError, "%v", err)
			if _, werr := c.writeStatus(ctx, vm, status, vmi, false); werr != nil {
				logger.Error(werr, "Cannot record the instancetype error")
			}
			return err
		}
		if updated {
			return nil // the VM's update brings it back with its revisions
		}
	}
	if f := status.Condition(virtv1.VirtualMachineFailure); f != nil && f.Reason == ReasonInstancetypeError {
		status.RemoveCondition(virtv1.VirtualMachineFailure)
	}

	if vmi != nil && !metav1.IsControlledBy(vmi, vm) {
		// Someone else's VMI holds the name: touching it could stop a
		// guest this VM does not own.
		status.SetCondition(virtv1.VirtualMachineCondition{
			Type: virtv1.VirtualMachineFailure, Status: corev1.ConditionTrue, Reason: reasonVMIExists,
			Message: fmt.Sprintf("VMI %s exists and is not controlled by this VM", vmi.Name),
		}, metav1.NewTime(now))
		_, err := c.writeStatus(ctx, vm, status, nil, false)
		return err
	}
	if f := status.Condition(virtv1.VirtualMachineFailure); f != nil && f.Reason == reasonVMIExists {
		status.RemoveCondition(virtv1.VirtualMachineFailure)
	}

	sf, recheck := c.backoff.startFailure(vm, vmi, now)
	if recheck > 0 {
		c.queue.AddAfter(key, recheck)
	}
	if sf != nil && (status.StartFailure == nil || status.StartFailure.LastFailedVMIUID != sf.LastFailedVMIUID) {
		// Count the failure before the instance is deleted: once it is
		// gone, nothing tells that it failed.
		status.StartFailure = sf
		c.recorder.Eventf(vm, corev1.EventTypeWarning, ReasonCrashLoop,
			"Instance %s failed soon after it started (%d in a row); the next start waits until %s",
			vmi.UID, sf.ConsecutiveFailCount, sf.RetryAfterTimestamp.UTC().Format("15:04:05"))
		if vm, err = c.writeStatus(ctx, vm, status, vmi, false); err != nil {
			return err
		}
		status = vm.Status.DeepCopy()
	}
	status.StartFailure = sf

	strategy := vm.Spec.EffectiveRunStrategy()
	stopping := false
	var actErr error
	// The user's requests (virtualmachines/NAME/start, stop, restart) come
	// before the run strategy, one at a time and in order: a restart is a
	// stop of the old instance, then a start once it is gone.
	req := nextRequest(status)
	switch {
	case vm.DeletionTimestamp != nil || strategy == virtv1.RunStrategyHalted:
		// No instance is kept: a pending start or stop has nothing to do.
		status.StateChangeRequests = nil
		if vmi != nil && vmi.DeletionTimestamp == nil {
			actErr = c.deleteInstance(ctx, key, vm, vmi)
			stopping = actErr == nil
		}
	case req != nil && req.Action == virtv1.StopRequest:
		if stops(req, vmi) {
			actErr = c.deleteInstance(ctx, key, vm, vmi)
			stopping = actErr == nil
		}
		// Done once the instance it names is being deleted or gone.
		if actErr == nil {
			popRequest(status)
		}
	case vmi == nil:
		start := req != nil && req.Action == virtv1.StartRequest
		if !start && !c.startsFromNothing(vm, strategy) {
			break
		}
		// A start the user asked for does not wait for the back-off.
		if off, left := backingOff(status.StartFailure, now); off && !start {
			c.queue.AddAfter(key, left)
			break
		}
		vmi, actErr = c.createInstance(ctx, key, vm)
		if actErr != nil && !apierrors.IsAlreadyExists(actErr) {
			status.SetCondition(virtv1.VirtualMachineCondition{
				Type: virtv1.VirtualMachineFailure, Status: corev1.ConditionTrue, Reason: ReasonFailedCreate,
				Message: actErr.Error(),
			}, metav1.NewTime(now))
		}
		if vmi != nil {
			status.RemoveCondition(virtv1.VirtualMachineFailure)
		}
		if start && (vmi != nil || apierrors.IsAlreadyExists(actErr)) {
			popRequest(status)
		}
	case vmi.DeletionTimestamp != nil:
		// Stopping already; the next instance, and a pending start, come
		// once it is gone.
	case req != nil && req.Action == virtv1.StartRequest:
		// The VM has an instance: nothing to start. (The API asks to stop
		// an instance that ended before it asks for a start.)
		popRequest(status)
	case vmi.Status.Phase == virtv1.Succeeded && strategy == virtv1.RunStrategyAlways,
		vmi.Status.Phase == virtv1.Failed && restarts(strategy):
		// Say why the VM gets a new instance, before the old one (and its
		// reason) goes.
		c.recorder.Eventf(vm, corev1.EventTypeNormal, ReasonRestarting, "Instance %s (uid %s) ended %s (%s); run strategy %s starts a new one",
			vmi.Name, vmi.UID, vmi.Status.Phase, endedWhy(vmi), strategy)
		actErr = c.deleteInstance(ctx, key, vm, vmi)
		stopping = actErr == nil
	}
	if _, err := c.writeStatus(ctx, vm, status, vmi, stopping); err != nil {
		return err
	}
	return actErr
}

// endedWhy is the reason of an instance's end and its message, for the
// VM's event.
func endedWhy(vmi *virtv1.VirtualMachineInstance) string {
	why := vmi.Status.Reason
	if why == "" {
		why = "no reason given"
	}
	if c := vmi.Status.Condition(virtv1.VirtualMachineInstanceReady); c != nil && c.Status != corev1.ConditionTrue && c.Message != "" {
		why += ": " + c.Message
	}
	return why
}

// startsFromNothing reports whether the VM wants an instance when it has
// none. Manual starts one only when the VM is new (never summarised yet):
// after that, starting and stopping are the user's.
func (c *Controller) startsFromNothing(vm *virtv1.VirtualMachine, s virtv1.VirtualMachineRunStrategy) bool {
	switch s {
	case virtv1.RunStrategyAlways, virtv1.RunStrategyRerunOnFailure:
		return true
	case virtv1.RunStrategyManual:
		return vm.Status.PrintableStatus == "" && !vm.Status.Created
	}
	return false
}

// writeStatus fills in what the VM's status says about vmi and writes it
// if it changed, returning the VM as written.
func (c *Controller) writeStatus(ctx context.Context, vm *virtv1.VirtualMachine, status *virtv1.VirtualMachineStatus,
	vmi *virtv1.VirtualMachineInstance, stopping bool) (*virtv1.VirtualMachine, error) {
	now := c.clock.Now()
	status.Created = vmi != nil
	ready := readyCondition(vmi)
	if stopping {
		ready = readyCondition(&virtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: now}}})
	}
	status.Ready = ready.Status == corev1.ConditionTrue
	status.SetCondition(ready, metav1.NewTime(now))
	status.ObservedGeneration = vm.Generation
	status.PrintableStatus = printableStatus(vm, vmi, stopping, status.StartFailure, now)
	if equality.Semantic.DeepEqual(vm.Status, *status) {
		return vm, nil
	}
	next := vm.DeepCopy()
	next.Status = *status
	updated, err := c.virt.VirtualizationV1().VirtualMachines(vm.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("update status of VM %s/%s: %w", vm.Namespace, vm.Name, errVMGone)
	}
	if err != nil {
		return nil, fmt.Errorf("update status of VM %s/%s: %w", vm.Namespace, vm.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Updated status", "printableStatus", status.PrintableStatus, "created", status.Created, "ready", status.Ready)
	return updated, nil
}

func (c *Controller) createInstance(ctx context.Context, key string, vm *virtv1.VirtualMachine) (*virtv1.VirtualMachineInstance, error) {
	vmi, err := c.instanceOf(ctx, vm)
	if err != nil {
		c.recorder.Eventf(vm, corev1.EventTypeWarning, ReasonFailedCreate, "Cannot create an instance: %v", err)
		return nil, err
	}
	c.expectations.ExpectCreations(key, 1)
	created, err := c.virt.VirtualizationV1().VirtualMachineInstances(vm.Namespace).Create(ctx, vmi, metav1.CreateOptions{})
	if err != nil {
		c.expectations.CreationObserved(key)
		if !apierrors.IsAlreadyExists(err) {
			c.recorder.Eventf(vm, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating instance: %v", err)
		}
		return nil, fmt.Errorf("create instance of VM %s: %w", key, err)
	}
	c.recorder.Eventf(vm, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created instance %s", created.Name)
	klog.FromContext(ctx).V(2).Info("Created instance", "vmi", klog.KObj(created), "uid", created.UID)
	return created, nil
}

func (c *Controller) deleteInstance(ctx context.Context, key string, vm *virtv1.VirtualMachine, vmi *virtv1.VirtualMachineInstance) error {
	c.expectations.ExpectDeletions(key, string(vmi.UID))
	err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Delete(ctx, vmi.Name, metav1.DeleteOptions{
		Preconditions: metav1.NewUIDPreconditions(string(vmi.UID)),
	})
	switch {
	case err == nil:
		c.recorder.Eventf(vm, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted instance %s (%s)", vmi.Name, vmi.Status.Phase)
		klog.FromContext(ctx).V(2).Info("Deleted instance", "vmi", klog.KObj(vmi), "uid", vmi.UID)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		c.expectations.DeletionObserved(key, string(vmi.UID))
		return nil
	default:
		c.expectations.DeletionObserved(key, string(vmi.UID))
		c.recorder.Eventf(vm, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting instance %s: %v", vmi.Name, err)
		return fmt.Errorf("delete instance of VM %s: %w", key, err)
	}
}

// NewInstance is the VMI vm runs now: its template, named like the VM,
// controlled by it, labelled with its name, and with a firmware UUID derived
// from the VM's UID unless the template sets one.
func NewInstance(vm *virtv1.VirtualMachine) (*virtv1.VirtualMachineInstance, error) {
	t := vm.Spec.Template
	if t == nil {
		return nil, fmt.Errorf("VM %s/%s has no template", vm.Namespace, vm.Name)
	}
	labels := maps.Clone(t.ObjectMeta.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[virtv1.VMNameLabel] = vm.Name
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       vm.Namespace,
			Name:            vm.Name,
			Labels:          labels,
			Annotations:     maps.Clone(t.ObjectMeta.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, virtv1.SchemeGroupVersion.WithKind("VirtualMachine"))},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	// The fencing policy reads the VMI; set on the VM, it applies to the
	// instances the VM starts (the template's own value wins).
	if v, ok := vm.Annotations[virtv1.FenceNodeAfterAnnotation]; ok {
		if _, set := vmi.Annotations[virtv1.FenceNodeAfterAnnotation]; !set {
			if vmi.Annotations == nil {
				vmi.Annotations = map[string]string{}
			}
			vmi.Annotations[virtv1.FenceNodeAfterAnnotation] = v
		}
	}
	if vmi.Spec.Domain.Firmware == nil {
		vmi.Spec.Domain.Firmware = &virtv1.Firmware{}
	}
	if vmi.Spec.Domain.Firmware.UUID == "" {
		vmi.Spec.Domain.Firmware.UUID = types.UID(uuid.NewSHA1(firmwareNamespace, []byte(vm.UID)).String())
	}
	return vmi, nil
}
