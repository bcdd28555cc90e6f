package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// VMIWatch checks every version of one VMI from the moment it started
// until it is stopped. Create it with WatchVMI.
type VMIWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
	// err is set before done is closed.
	err error
}

// WatchVMI reads the VMI ns/name and then follows its every change from
// that version on, so a change undone a moment later is seen too, where
// polling would miss it. check gets each version, nil when the VMI does not
// exist or was deleted; the first error it returns ends the watch and is
// the watch's verdict. A VMI that fails check at the start is an error
// here.
func (c *Cluster) WatchVMI(ctx context.Context, ns, name string, check func(*virtv1.VirtualMachineInstance) error) (*VMIWatch, error) {
	vmis := c.Virt.VirtualizationV1().VirtualMachineInstances(ns)
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	list, err := vmis.List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list VMI %s/%s: %w", ns, name, err)
	}
	var cur *virtv1.VirtualMachineInstance
	if len(list.Items) > 0 {
		cur = &list.Items[0]
	}
	if err := check(cur); err != nil {
		return nil, fmt.Errorf("VMI %s/%s at resourceVersion %s: %w", ns, name, list.ResourceVersion, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	// A RetryWatcher resumes from the last version it delivered when the
	// connection breaks: no change falls between two watches.
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return vmis.Watch(ctx, o)
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch VMI %s/%s: %w", ns, name, err)
	}
	w := &VMIWatch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer rw.Stop()
		if err := follow(ctx, rw, check); err != nil {
			w.err = fmt.Errorf("VMI %s/%s: %w", ns, name, err)
		}
	}()
	return w, nil
}

// follow checks the watch's events until check refuses one, the watch
// fails or ctx ends.
func follow(ctx context.Context, rw *watchtools.RetryWatcher, check func(*virtv1.VirtualMachineInstance) error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-rw.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("the watch ended: later changes were not seen")
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				vmi, ok := ev.Object.(*virtv1.VirtualMachineInstance)
				if !ok {
					return fmt.Errorf("watch event %s holds a %T", ev.Type, ev.Object)
				}
				if err := check(vmi); err != nil {
					return fmt.Errorf("at resourceVersion %s: %w", vmi.ResourceVersion, err)
				}
			case watch.Deleted:
				if err := check(nil); err != nil {
					return fmt.Errorf("deleted: %w", err)
				}
			case watch.Error:
				return fmt.Errorf("the watch failed, changes may have been missed: %w", apierrors.FromObject(ev.Object))
			}
		}
	}
}

// Stop ends the watch and returns its verdict: the first version check
// refused or why the watch failed; nil when every version passed.
func (w *VMIWatch) Stop() error {
	w.cancel()
	<-w.done
	return w.err
}

// Hold keeps the watch for d, or until a version fails, then stops it and
// returns its verdict.
func (w *VMIWatch) Hold(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
	return w.Stop()
}
