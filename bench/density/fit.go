package density

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Fit is how many launcher pods of one shape a node has room for.
type Fit struct {
	Node string
	// PodRequests is one launcher pod's requests as the scheduler counts
	// them (its containers, init containers and overhead).
	PodRequests map[string]string
	// Allocatable is the node's; Free is Allocatable minus what the node's
	// other pods request.
	Allocatable, Free map[string]string
	// Count is how many launcher pods fit, at most the number asked for.
	Count int
	// LimitedBy is the resource that caps Count, or "asked" when the number
	// asked for fits.
	LimitedBy string
}

// freeOn is a node's allocatable resources minus the requests of the pods
// on it that hold them (all but those that ended); pods counts too.
func freeOn(node *corev1.Node, pods []corev1.Pod) corev1.ResourceList {
	free := node.Status.Allocatable.DeepCopy()
	held := 0
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		held++
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			if f, ok := free[name]; ok {
				f.Sub(q)
				free[name] = f
			}
		}
	}
	if f, ok := free[corev1.ResourcePods]; ok {
		f.Sub(*resource.NewQuantity(int64(held), resource.DecimalSI))
		free[corev1.ResourcePods] = f
	}
	return free
}

// fits is how many pods requesting per fit in free, at most asked, and
// the resource that limits them. A pod takes one of the node's pod slots
// besides what it requests; a resource the node does not offer fits none.
func fits(asked int, per, free corev1.ResourceList) (int, string) {
	per = per.DeepCopy()
	per[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	n, by := asked, "asked"
	// In name order: the same limit named for the same input.
	for _, name := range slices.Sorted(maps.Keys(per)) {
		want := per[name]
		if want.Sign() <= 0 {
			continue
		}
		have, ok := free[name]
		room := 0
		if ok && have.Sign() > 0 {
			room = int(have.MilliValue() / want.MilliValue())
		}
		if room < n {
			n, by = room, string(name)
		}
	}
	return n, by
}

func asStrings(l corev1.ResourceList) map[string]string {
	m := make(map[string]string, len(l))
	for name, q := range l {
		m[string(name)] = q.String()
	}
	return m
}

// describe is the fit in a sentence for the log.
func (f Fit) describe() string {
	return fmt.Sprintf("%d launcher pods fit on %s (limited by %s): one requests %v; free %v",
		f.Count, f.Node, f.LimitedBy, f.PodRequests, f.Free)
}
