package virtualmachineinstance

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// The tests drive the controller's queue themselves instead of Run's
// workers, so that "nothing else happens" is a barrier that can fail rather
// than a sleep that passes on a loaded machine: see settled.

// work syncs the VMIs ctrl queues, one at a time, until ctx ends, as a
// worker of Run would once the caches are filled.
func (f *fixture) work(ctx context.Context, ctrl *Controller) {
	if !cache.WaitForCacheSync(ctx.Done(), ctrl.HasSynced) {
		return
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) { f.drain(ctx, ctrl) }, time.Millisecond)
}

// drain syncs queued VMIs until none is queued. It holds workMu, so only
// one sync runs at a time and none runs while a barrier looks.
func (f *fixture) drain(ctx context.Context, ctrl *Controller) {
	f.workMu.Lock()
	defer f.workMu.Unlock()
	// The queue has one consumer, this one under workMu: with items queued,
	// Get does not block.
	for ctx.Err() == nil && ctrl.queue.Len() > 0 {
		ctrl.processNextWorkItem(ctx)
	}
}

// settled returns once the running controller has done everything it is
// going to do, and fails the test if it cannot get there. The controller is
// idle (see busy); then every VMI is synced once more, synchronously, and
// the controller must become idle again. That extra sync is the barrier
// that can fail: a controller that would still write, call a launcher or
// retry given what it has seen does so in it, before the test counts.
func (f *fixture) settled() {
	f.t.Helper()
	f.waitIdle("idle")
	f.workMu.Lock()
	for _, v := range f.apiVMIs() {
		f.ctrl.queue.Add(v.Namespace + "/" + v.Name)
	}
	for f.ctrl.queue.Len() > 0 {
		f.ctrl.processNextWorkItem(f.ctx)
	}
	f.workMu.Unlock()
	f.waitIdle("idle after one more sync of every VMI")
}

func (f *fixture) waitIdle(what string) {
	f.t.Helper()
	var why string
	err := wait.PollUntilContextTimeout(f.t.Context(), time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		why = f.busy()
		return why == "", nil
	})
	if err != nil {
		f.t.Fatalf("controller not %s after %s (%v): %s; events: %v", what, waitTimeout, err, why, f.eventList())
	}
}

// busy says what the controller still has to take in or work off, "" when
// it is idle: its caches show what the API has, its launcher watches what
// the launchers have, nothing is queued or being synced, and no failed sync
// waits for its retry. A change it has seen but not yet queued (the
// informer's or the watch's callback between cache and queue) would find
// the state that settled syncs anyway.
func (f *fixture) busy() string {
	if why := f.stalePods(); why != "" {
		return why
	}
	if why := f.staleVMIs(); why != "" {
		return why
	}
	if why := f.staleLaunchers(); why != "" {
		return why
	}
	f.workMu.Lock()
	defer f.workMu.Unlock()
	if n := f.ctrl.queue.Len(); n > 0 {
		return fmt.Sprintf("%d VMIs queued", n)
	}
	for _, v := range f.apiVMIs() {
		key := v.Namespace + "/" + v.Name
		if n := f.ctrl.queue.NumRequeues(key); n > 0 {
			return fmt.Sprintf("VMI %s waits for retry %d of a failed sync", key, n)
		}
	}
	return ""
}

func (f *fixture) apiVMIs() []virtv1.VirtualMachineInstance {
	f.t.Helper()
	obj, err := f.virt.Tracker().List(vmiGVR, virtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"), "")
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*virtv1.VirtualMachineInstanceList).Items
}

func (f *fixture) staleVMIs() string {
	api := f.apiVMIs()
	cached, err := f.ctrl.vmiLister.List(labels.Everything())
	if err != nil {
		return err.Error()
	}
	if len(cached) != len(api) {
		return fmt.Sprintf("VMI cache holds %d VMIs, the API %d", len(cached), len(api))
	}
	for i := range api {
		c, err := f.ctrl.vmiLister.VirtualMachineInstances(api[i].Namespace).Get(api[i].Name)
		if err != nil || !equality.Semantic.DeepEqual(c, &api[i]) {
			return fmt.Sprintf("VMI cache behind the API on %s/%s", api[i].Namespace, api[i].Name)
		}
	}
	return ""
}

func (f *fixture) stalePods() string {
	obj, err := f.kube.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), "")
	if err != nil {
		f.t.Fatal(err)
	}
	api := obj.(*corev1.PodList).Items
	cached, err := f.ctrl.podLister.List(labels.Everything())
	if err != nil {
		return err.Error()
	}
	if len(cached) != len(api) {
		return fmt.Sprintf("pod cache holds %d pods, the API %d", len(cached), len(api))
	}
	for i := range api {
		c, err := f.ctrl.podLister.Pods(api[i].Namespace).Get(api[i].Name)
		if err != nil || !equality.Semantic.DeepEqual(c, &api[i]) {
			return fmt.Sprintf("pod cache behind the API on %s/%s", api[i].Namespace, api[i].Name)
		}
	}
	return ""
}

// staleLaunchers: every watched launcher's state is its fake's domain. The
// monitor reports a change only after it stored it.
func (f *fixture) staleLaunchers() string {
	for _, uid := range f.ctrl.monitor.PodUIDs() {
		l, ok := f.ctrl.monitor.Get(uid)
		fake := f.launchers[uid]
		if !ok || fake == nil {
			continue
		}
		if st := l.State(); st.Err != nil || !proto.Equal(st.Domain, fake.Domain()) {
			return fmt.Sprintf("watch of launcher %s behind: has %v (%v), the launcher %v", uid, st.Domain, st.Err, fake.Domain())
		}
	}
	return ""
}
