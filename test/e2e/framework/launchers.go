package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
)

// LauncherPodSeen is what a LauncherPodLog saw of one launcher pod.
type LauncherPodSeen struct {
	UID  types.UID
	Name string
	// VMI is the UID of the VMI the pod was created for.
	VMI types.UID
	// Seen is when the watch first delivered the pod: this machine's
	// clock, milliseconds after its creation (creationTimestamp has
	// seconds only).
	Seen    time.Time
	Deleted bool
}

// LauncherPodLog records every launcher pod of a namespace from the moment
// it starts, through a watch, so a pod that lived between two looks at the
// API is counted too: "one pod per VMI" means one ever, not one at the end.
type LauncherPodLog struct {
	mu   sync.Mutex
	pods map[types.UID]*LauncherPodSeen
}

// RecordLauncherPods starts a LauncherPodLog of ns that runs until the test
// ends.
func (c *Cluster) RecordLauncherPods(t *testing.T, ns string) *LauncherPodLog {
	t.Helper()
	l := &LauncherPodLog{pods: map[types.UID]*LauncherPodSeen{}}
	factory := kubeinformers.NewSharedInformerFactoryWithOptions(c.Kube, 0,
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
		t.Fatalf("watch launcher pods of %s: %v", ns, err)
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

func (l *LauncherPodLog) saw(obj any, deleted bool) {
	now := time.Now()
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := l.pods[pod.UID]
	if rec == nil {
		rec = &LauncherPodSeen{UID: pod.UID, Name: pod.Name, VMI: types.UID(pod.Labels[virtv1.CreatedByLabel]), Seen: now}
		l.pods[pod.UID] = rec
	}
	rec.Deleted = rec.Deleted || deleted
}

// All returns every pod seen, in the order they were first seen.
func (l *LauncherPodLog) All() []LauncherPodSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]LauncherPodSeen, 0, len(l.pods))
	for _, p := range l.pods {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b LauncherPodSeen) int { return a.Seen.Compare(b.Seen) })
	return out
}

// Of returns the pods seen for the VMI of UID vmi.
func (l *LauncherPodLog) Of(vmi types.UID) []LauncherPodSeen {
	var out []LauncherPodSeen
	for _, p := range l.All() {
		if p.VMI == vmi {
			out = append(out, p)
		}
	}
	return out
}

// Duplicates counts the launcher pods beyond the first of each VMI and
// names them.
func (l *LauncherPodLog) Duplicates() (int, string) {
	byVMI := map[types.UID][]string{}
	for _, p := range l.All() {
		byVMI[p.VMI] = append(byVMI[p.VMI], p.Name)
	}
	n := 0
	var names []string
	for vmi, pods := range byVMI {
		if len(pods) > 1 {
			n += len(pods) - 1
			names = append(names, fmt.Sprintf("VMI %s: %s", vmi, strings.Join(pods, ", ")))
		}
	}
	slices.Sort(names)
	return n, strings.Join(names, "; ")
}
