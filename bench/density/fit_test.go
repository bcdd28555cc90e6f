package density

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestFits(t *testing.T) {
	per := list("cpu", "20m", "memory", "377Mi")
	for _, tc := range []struct {
		name   string
		asked  int
		free   corev1.ResourceList
		want   int
		wantBy string
	}{
		{"memory limits", 100, list("cpu", "1720m", "memory", "23621Mi", "pods", "100"), 62, "memory"},
		{"cpu limits", 100, list("cpu", "500m", "memory", "100Gi", "pods", "100"), 25, "cpu"},
		{"pod slots limit", 100, list("cpu", "2", "memory", "100Gi", "pods", "7"), 7, "pods"},
		{"all asked fit", 10, list("cpu", "2", "memory", "100Gi", "pods", "100"), 10, "asked"},
		{"nothing free", 10, list("cpu", "2", "memory", "-1Mi", "pods", "100"), 0, "memory"},
		{"resource the node lacks", 10, list("cpu", "2", "pods", "100"), 0, "memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, by := fits(tc.asked, per, tc.free)
			if n != tc.want || by != tc.wantBy {
				t.Errorf("fits = %d (%s), want %d (%s)", n, by, tc.want, tc.wantBy)
			}
		})
	}
}

func TestFreeOnCountsRunningPods(t *testing.T) {
	node := &corev1.Node{Status: corev1.NodeStatus{Allocatable: list("cpu", "2", "memory", "1Gi", "pods", "110")}}
	pod := func(phase corev1.PodPhase, cpu, mem string) corev1.Pod {
		return corev1.Pod{
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: list("cpu", cpu, "memory", mem)}}}},
			Status: corev1.PodStatus{Phase: phase},
		}
	}
	free := freeOn(node, []corev1.Pod{
		pod(corev1.PodRunning, "100m", "100Mi"),
		pod(corev1.PodPending, "50m", "24Mi"),
		pod(corev1.PodSucceeded, "1", "512Mi"), // ended: holds nothing
	})
	want := list("cpu", "1850m", "memory", "900Mi", "pods", "108")
	for name, q := range want {
		if got := free[name]; got.Cmp(q) != 0 {
			t.Errorf("free %s = %s, want %s", name, got.String(), q.String())
		}
	}
	if node.Status.Allocatable.Memory().String() != "1Gi" {
		t.Errorf("freeOn changed the node's allocatable")
	}
}
