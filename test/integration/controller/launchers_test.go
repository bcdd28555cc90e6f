package controller

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// launcher is what the test saw of one launcher pod over its life.
type launcher struct {
	UID  types.UID
	Name string
	// CreatedOn is spec.nodeName of the pod as created: empty when the
	// scheduler, not virt-controller, picks the node.
	CreatedOn string
	// Node is the last spec.nodeName seen.
	Node    string
	Deleted bool
}

// launchers records every launcher pod of a namespace from before the test
// creates its first VMI, so a pod that lived between two looks at the API
// is counted too: "exactly one pod" means one ever, not one at the end.
type launchers struct {
	mu sync.Mutex
	// byVMI is keyed by the created-by label (the VMI's UID).
	byVMI map[types.UID]map[types.UID]*launcher
}

// watchLaunchers starts recording the launcher pods of ns until the test
// ends.
func watchLaunchers(t *testing.T, ns string) *launchers {
	t.Helper()
	l := &launchers{byVMI: map[types.UID]map[types.UID]*launcher{}}
	factory := kubeinformers.NewSharedInformerFactoryWithOptions(cluster.Kube, 0,
		kubeinformers.WithNamespace(ns),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{virtv1.ComponentLabel: virtv1.LauncherComponent}.String()
		}))
	informer := factory.Core().V1().Pods().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { l.saw(obj, false) },
		UpdateFunc: func(_, obj any) { l.saw(obj, false) },
		DeleteFunc: func(obj any) { l.saw(obj, true) },
	}); err != nil {
		t.Fatalf("watch launcher pods: %v", err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatalf("launcher pods of %s: the watch did not sync within a minute", ns)
	}
	return l
}

func (l *launchers) saw(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	vmi := types.UID(pod.Labels[virtv1.CreatedByLabel])
	l.mu.Lock()
	defer l.mu.Unlock()
	pods := l.byVMI[vmi]
	if pods == nil {
		pods = map[types.UID]*launcher{}
		l.byVMI[vmi] = pods
	}
	rec := pods[pod.UID]
	if rec == nil {
		rec = &launcher{UID: pod.UID, Name: pod.Name, CreatedOn: pod.Spec.NodeName}
		pods[pod.UID] = rec
	}
	rec.Node = pod.Spec.NodeName
	rec.Deleted = rec.Deleted || deleted
}

// of returns the launcher pods seen for a VMI, by name.
func (l *launchers) of(vmi types.UID) []launcher {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []launcher
	for _, rec := range l.byVMI[vmi] {
		out = append(out, *rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// only returns the one launcher pod ever seen for vmi, or an error naming
// all of them.
func (l *launchers) only(vmi *virtv1.VirtualMachineInstance) (launcher, error) {
	pods := l.of(vmi.UID)
	if len(pods) != 1 {
		return launcher{}, fmt.Errorf("VMI %s/%s (uid %s) had %d launcher pods, want exactly 1: %+v", vmi.Namespace, vmi.Name, vmi.UID, len(pods), pods)
	}
	return pods[0], nil
}

// waitDeleted waits until every launcher pod of vmi was deleted.
func (l *launchers) waitDeleted(ctx context.Context, vmi *virtv1.VirtualMachineInstance, timeout time.Duration) error {
	return framework.WaitFor(ctx, timeout, fmt.Sprintf("launcher pods of VMI %s/%s deleted", vmi.Namespace, vmi.Name), func(context.Context) (bool, error) {
		pods := l.of(vmi.UID)
		if len(pods) == 0 {
			return false, fmt.Errorf("no launcher pod seen at all")
		}
		for _, p := range pods {
			if !p.Deleted {
				return false, fmt.Errorf("pod %s still exists", p.Name)
			}
		}
		return true, nil
	})
}

// waitCreated waits until a launcher pod of vmi was seen.
func (l *launchers) waitCreated(ctx context.Context, vmi *virtv1.VirtualMachineInstance, timeout time.Duration) error {
	return framework.WaitFor(ctx, timeout, fmt.Sprintf("a launcher pod of VMI %s/%s", vmi.Namespace, vmi.Name), func(context.Context) (bool, error) {
		return len(l.of(vmi.UID)) > 0, nil
	})
}
