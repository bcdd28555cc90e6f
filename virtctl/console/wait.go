package console

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// rewatchDelay is the pause between a watch that ended and the next.
const rewatchDelay = time.Second

// NotRunningError says why WaitRunning gave up: the VMI is in a phase that
// has no console yet (when ctx ended) or never again.
type NotRunningError struct {
	Name  string
	Phase virtv1.VirtualMachineInstancePhase
	// Deleted: the VMI went away while we waited.
	Deleted bool
	// Cause is ctx's error when the wait timed out or was cancelled.
	Cause error
}

func (e *NotRunningError) Error() string {
	switch {
	case e.Deleted:
		return fmt.Sprintf("VMI %s was deleted while waiting for it to run", e.Name)
	case e.Phase.IsFinal():
		return fmt.Sprintf("VMI %s has ended (phase %s): it has no console any more", e.Name, e.Phase)
	case errors.Is(e.Cause, context.DeadlineExceeded):
		return fmt.Sprintf("VMI %s is not Running yet (phase %s): gave up waiting", e.Name, phaseName(e.Phase))
	default:
		return fmt.Sprintf("VMI %s is not Running (phase %s): %v", e.Name, phaseName(e.Phase), e.Cause)
	}
}

func (e *NotRunningError) Unwrap() error { return e.Cause }

func phaseName(p virtv1.VirtualMachineInstancePhase) string {
	if p == virtv1.PhaseUnset {
		return "none yet"
	}
	return string(p)
}

// WaitRunning returns once the VMI ns/name is Running, calling progress (if
// not nil) with each other phase it sees while waiting. It ends with the API's error
// when the VMI cannot be read (a 404 when there is none), or a
// *NotRunningError when the VMI ends or is deleted first, or ctx ends (give
// ctx the deadline to wait).
func WaitRunning(ctx context.Context, c virtclient.Interface, ns, name string, progress func(virtv1.VirtualMachineInstancePhase)) error {
	vmis := c.VirtualizationV1().VirtualMachineInstances(ns)
	var last virtv1.VirtualMachineInstancePhase
	seen := false
	for {
		vmi, err := vmis.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if seen && ctx.Err() != nil {
				return &NotRunningError{Name: name, Phase: last, Cause: ctx.Err()}
			}
			return err
		}
		phase := vmi.Status.Phase
		if done, err := judge(name, phase); done {
			return err
		}
		if !seen || phase != last {
			if progress != nil {
				progress(phase)
			}
			last, seen = phase, true
		}
		w, err := vmis.Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: vmi.ResourceVersion,
		})
		if err != nil {
			if ctx.Err() != nil {
				return &NotRunningError{Name: name, Phase: last, Cause: ctx.Err()}
			}
			return err
		}
		phase, deleted := follow(ctx, w, name, last, progress)
		w.Stop()
		last = phase
		if deleted {
			return &NotRunningError{Name: name, Phase: last, Deleted: true}
		}
		if done, err := judge(name, phase); done {
			return err
		}
		// The watch ended (a server's timeout, a compaction): read the
		// VMI again, after a pause so that a server that ends every watch
		// at once is not hammered, and watch from there.
		select {
		case <-ctx.Done():
			return &NotRunningError{Name: name, Phase: last, Cause: ctx.Err()}
		case <-time.After(rewatchDelay):
		}
	}
}

// judge tells whether waiting is over in phase, and how.
func judge(name string, phase virtv1.VirtualMachineInstancePhase) (bool, error) {
	switch {
	case phase == virtv1.Running:
		return true, nil
	case phase.IsFinal():
		return true, &NotRunningError{Name: name, Phase: phase}
	}
	return false, nil
}

// follow reads w until the VMI runs or ends, is deleted, the watch ends, or
// ctx does, and returns the last phase seen and whether the VMI was deleted.
func follow(ctx context.Context, w watch.Interface, name string, last virtv1.VirtualMachineInstancePhase,
	progress func(virtv1.VirtualMachineInstancePhase)) (virtv1.VirtualMachineInstancePhase, bool) {
	for {
		select {
		case <-ctx.Done():
			return last, false
		case ev, ok := <-w.ResultChan():
			if !ok {
				return last, false
			}
			vmi, isVMI := ev.Object.(*virtv1.VirtualMachineInstance)
			switch {
			case ev.Type == watch.Error:
				// A 410 Gone and friends: start over from a fresh read.
				return last, false
			case !isVMI || vmi.Name != name:
			case ev.Type == watch.Deleted:
				return last, true
			default:
				phase := vmi.Status.Phase
				if done, _ := judge(name, phase); done {
					return phase, false
				}
				if phase != last && progress != nil {
					progress(phase)
				}
				last = phase
			}
		}
	}
}
