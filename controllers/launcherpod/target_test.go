package launcherpod

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

func TestNewTarget(t *testing.T) {
	vmi := newVMI(nil)
	source, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := NewTarget(vmi, testConfig, Target{MigrationUID: "mig-1", AvoidNode: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name == source.Name || pod.Name != TargetName(vmi, "mig-1") {
		t.Errorf("target pod name %q, source %q, want TargetName", pod.Name, source.Name)
	}
	if TargetName(vmi, "mig-2") == pod.Name {
		t.Errorf("two migrations' target pods share the name %q", pod.Name)
	}
	if uid, ok := IsTarget(pod); !ok || uid != "mig-1" {
		t.Errorf("IsTarget = %q, %v; want mig-1, true", uid, ok)
	}
	if _, ok := IsTarget(source); ok {
		t.Errorf("the source pod counts as a target")
	}
	if pod.Labels[virtv1.CreatedByLabel] != string(vmi.UID) || pod.OwnerReferences[0].UID != vmi.UID {
		t.Errorf("target pod is not the VMI's: labels %v, owners %v", pod.Labels, pod.OwnerReferences)
	}
	compute := pod.Spec.Containers[0]
	if compute.Name != layout.ComputeContainer || !slices.Contains(compute.Args, MigrationTargetArg) {
		t.Errorf("compute container %s args %v lack %s", compute.Name, compute.Args, MigrationTargetArg)
	}
	if slices.Contains(source.Spec.Containers[0].Args, MigrationTargetArg) {
		t.Errorf("the source pod is started as a migration target")
	}
	want := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-a"}}}}}}
	if diff := cmp.Diff(want, pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution); diff != "" {
		t.Errorf("node affinity (-want +got):\n%s", diff)
	}
	if _, err := NewTarget(vmi, testConfig, Target{}); err == nil {
		t.Errorf("a target pod without a migration UID was rendered")
	}
}

func TestNewTargetKeepsTheVMIsAffinity(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}},
			}}}}
	})
	pod, err := NewTarget(vmi, testConfig, Target{MigrationUID: "mig-1", AvoidNode: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 2 {
		t.Fatalf("terms %v, want the VMI's two", terms)
	}
	for i, term := range terms {
		// Each ORed term must exclude the node, or the other would allow it.
		if len(term.MatchExpressions) != 1 || len(term.MatchFields) != 1 || term.MatchFields[0].Values[0] != "node-a" {
			t.Errorf("term %d = %+v, want the VMI's expression and not node-a", i, term)
		}
	}
	if len(vmi.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields) != 0 {
		t.Errorf("rendering the target pod changed the VMI's affinity")
	}
	same, err := NewTarget(vmi, testConfig, Target{MigrationUID: "mig-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := same.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields; len(got) != 0 {
		t.Errorf("same-node target avoids %v", got)
	}
}
