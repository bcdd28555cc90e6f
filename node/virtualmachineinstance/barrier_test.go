package virtualmachineinstance

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtinformersv1 "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// The tests drive the controller's queue themselves instead of Run's
// workers, and see what its informers and launcher watches hand it, so
// that "nothing else happens" is a barrier that can fail rather than a
// sleep that passes on a loaded machine: see settled.

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
// idle (see busy): every change was handed to it and synced. Then every VMI
// is synced once more, synchronously, and the controller must become idle
// again: a controller that would still write, call a launcher or retry
// given what it has seen does so there, before the test counts.
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
		f.collectEvents()
		why = f.busy()
		return why == "", nil
	})
	if err != nil {
		f.t.Fatalf("controller not %s after %s (%v): %s; events: %v", what, waitTimeout, err, why, f.eventList())
	}
}

// busy says what the controller has yet to be handed or to work off, ""
// when it is idle: its informers' handlers were handed every VMI and pod as
// the API has them, its launcher watches hold what the launchers have and
// reported it, nothing is queued or being synced, and no failed sync waits
// for its retry. The handlers and the report queue the VMI before they are
// counted as handed: whatever the controller was told, it has synced since.
func (f *fixture) busy() string {
	f.workMu.Lock()
	defer f.workMu.Unlock()
	vmis := map[string]any{}
	for _, v := range f.apiVMIs() {
		vmis[v.Namespace+"/"+v.Name] = &v
	}
	if why := f.vmisHanded.behind("VMI", vmis); why != "" {
		return why
	}
	if f.targetsHanded != nil {
		if why := f.targetsHanded.behind("VMI (migration target)", vmis); why != "" {
			return why
		}
	}
	pods := map[string]any{}
	for _, p := range f.apiPods() {
		pods[p.Namespace+"/"+p.Name] = &p
	}
	if why := f.podsHanded.behind("pod", pods); why != "" {
		return why
	}
	if why := f.staleLaunchers(); why != "" {
		return why
	}
	if n := f.ctrl.queue.Len(); n > 0 {
		return fmt.Sprintf("%d VMIs queued", n)
	}
	for key := range vmis {
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

func (f *fixture) apiPods() []corev1.Pod {
	f.t.Helper()
	obj, err := f.kube.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), "")
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*corev1.PodList).Items
}

// staleLaunchers: every watched launcher's state is its fake's domain, and
// was reported to the controller.
func (f *fixture) staleLaunchers() string {
	for _, uid := range f.ctrl.monitor.PodUIDs() {
		l, ok := f.ctrl.monitor.Get(uid)
		fake := f.launchers[uid]
		if !ok || fake == nil {
			continue
		}
		st := l.State()
		if st.Err != nil || !proto.Equal(st.Domain, fake.Domain()) {
			return fmt.Sprintf("watch of launcher %s behind: has %v (%v), the launcher %v", uid, st.Domain, st.Err, fake.Domain())
		}
		if r := f.reports.get(uid); !proto.Equal(r, st.Domain) {
			return fmt.Sprintf("launcher %s's domain %v not reported yet (last reported %v)", uid, st.Domain, r)
		}
	}
	return ""
}

// handed records the last version of each object an informer handed the
// controller's event handler, once the handler returned.
type handed struct {
	mu   sync.Mutex
	objs map[string]any
}

func newHanded() *handed { return &handed{objs: map[string]any{}} }

func (h *handed) record(obj any, deleted bool) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		panic(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if deleted {
		delete(h.objs, key)
		return
	}
	h.objs[key] = obj
}

// behind says how the objects handed differ from api (by key), "" if not.
func (h *handed) behind(kind string, api map[string]any) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, obj := range api {
		if got, ok := h.objs[key]; !ok || !equality.Semantic.DeepEqual(got, obj) {
			return fmt.Sprintf("%s %s not handed to the controller as the API has it", kind, key)
		}
	}
	for key := range h.objs {
		if _, ok := api[key]; !ok {
			return fmt.Sprintf("deletion of %s %s not handed to the controller", kind, key)
		}
	}
	return ""
}

// recordingHandler hands the informer's events to the controller's
// handler, then records them.
type recordingHandler struct {
	cache.ResourceEventHandler
	h *handed
}

func (r recordingHandler) OnAdd(obj any, initial bool) {
	r.ResourceEventHandler.OnAdd(obj, initial)
	r.h.record(obj, false)
}

func (r recordingHandler) OnUpdate(old, obj any) {
	r.ResourceEventHandler.OnUpdate(old, obj)
	r.h.record(obj, false)
}

func (r recordingHandler) OnDelete(obj any) {
	r.ResourceEventHandler.OnDelete(obj)
	r.h.record(obj, true)
}

// recordingInformer records what it hands the handlers added to it.
type recordingInformer struct {
	cache.SharedIndexInformer
	h *handed
}

func (i recordingInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandler(recordingHandler{handler, i.h})
}

func (i recordingInformer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithOptions(recordingHandler{handler, i.h}, o)
}

type recordingVMIInformer struct {
	virtinformersv1.VirtualMachineInstanceInformer
	h *handed
}

func (i recordingVMIInformer) Informer() cache.SharedIndexInformer {
	return recordingInformer{i.VirtualMachineInstanceInformer.Informer(), i.h}
}

type recordingPodInformer struct {
	coreinformers.PodInformer
	h *handed
}

func (i recordingPodInformer) Informer() cache.SharedIndexInformer {
	return recordingInformer{i.PodInformer.Informer(), i.h}
}

// reported records the domain of each launcher as it was when the
// controller last queued the launcher's VMI on the monitor's report.
type reported struct {
	mu      sync.Mutex
	domains map[types.UID]*apiv1.Domain
}

func (r *reported) get(uid types.UID) *apiv1.Domain {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.domains[uid]
}

// changed is the monitor's report: it queues the VMI as New's does, then
// records the domains its launchers hold, which a sync after that Add sees.
func (r *reported) changed(ctrl *Controller) func(string) {
	return func(key string) {
		ctrl.queue.Add(key)
		for _, uid := range ctrl.monitor.PodUIDs() {
			l, ok := ctrl.monitor.Get(uid)
			if !ok || l.Target().VMIKey != key {
				continue
			}
			d := l.State().Domain
			r.mu.Lock()
			r.domains[uid] = d
			r.mu.Unlock()
		}
	}
}
