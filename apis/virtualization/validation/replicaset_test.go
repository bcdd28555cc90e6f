package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
)

func validReplicaSet() *virtualization.VirtualMachineInstanceReplicaSet {
	return &virtualization.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: virtualization.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &virtualization.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
				Spec:       validVMI().Spec,
			},
		},
	}
}

func TestValidateVirtualMachineInstanceReplicaSet(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*virtualization.VirtualMachineInstanceReplicaSet)
		wantPaths []string
	}{
		{"valid", func(*virtualization.VirtualMachineInstanceReplicaSet) {}, nil},
		{"zero replicas", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Replicas = ptr.To(int32(0)) }, nil},
		{"paused", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Paused = true }, nil},
		{"selector by expression", func(rs *virtualization.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front", "back"}}}}
		}, nil},
		{"negative replicas", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Replicas = ptr.To(int32(-1)) },
			[]string{"spec.replicas"}},
		{"no selector", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Selector = nil }, []string{"spec.selector"}},
		{"empty selector", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Selector = &metav1.LabelSelector{} },
			[]string{"spec.selector"}},
		{"bad selector operator", func(rs *virtualization.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
		}, []string{"spec.selector.matchExpressions[0].operator"}},
		{"selector misses the template", func(rs *virtualization.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Selector.MatchLabels = map[string]string{"app": "db"}
		}, []string{"spec.template.metadata.labels"}},
		{"template without labels", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Template.ObjectMeta.Labels = nil },
			[]string{"spec.template.metadata.labels"}},
		{"no template", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Template = nil }, []string{"spec.template"}},
		{"invalid template spec", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Template.Spec.Domain.CPU.Cores = 0 },
			[]string{"spec.template.spec.domain.cpu.cores"}},
		{"name is not a DNS label", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Name = "web.example" },
			[]string{"metadata.name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validReplicaSet()
			tc.mutate(rs)
			errs := ValidateVirtualMachineInstanceReplicaSet(rs)
			if got := paths(errs); got != strings.Join(tc.wantPaths, ",") {
				t.Errorf("error paths = %q, want %v; errors: %v", got, tc.wantPaths, errs.ToAggregate())
			}
		})
	}
}

func TestValidateVirtualMachineInstanceReplicaSetUpdate(t *testing.T) {
	old := validReplicaSet()
	old.ResourceVersion = "1"
	tests := []struct {
		name      string
		mutate    func(*virtualization.VirtualMachineInstanceReplicaSet)
		wantPaths []string
	}{
		{"scale", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Replicas = ptr.To(int32(7)) }, nil},
		{"new template", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Template.Spec.Hostname = "other" }, nil},
		{"pause", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Spec.Paused = true }, nil},
		{"new selector", func(rs *virtualization.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Selector.MatchLabels = map[string]string{"tier": "front"}
		}, []string{"spec.selector"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := old.DeepCopy()
			tc.mutate(rs)
			errs := ValidateVirtualMachineInstanceReplicaSetUpdate(rs, old)
			if got := paths(errs); got != strings.Join(tc.wantPaths, ",") {
				t.Errorf("error paths = %q, want %v; errors: %v", got, tc.wantPaths, errs.ToAggregate())
			}
		})
	}
}

func TestValidateVirtualMachineInstanceReplicaSetStatusUpdate(t *testing.T) {
	old := validReplicaSet()
	old.ResourceVersion = "1"
	cond := func(ty virtualization.VirtualMachineInstanceReplicaSetConditionType, s corev1.ConditionStatus) virtualization.VirtualMachineInstanceReplicaSetCondition {
		return virtualization.VirtualMachineInstanceReplicaSetCondition{Type: ty, Status: s}
	}
	tests := []struct {
		name      string
		status    virtualization.VirtualMachineInstanceReplicaSetStatus
		wantPaths []string
	}{
		{"valid", virtualization.VirtualMachineInstanceReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, LabelSelector: "app=web",
			Conditions: []virtualization.VirtualMachineInstanceReplicaSetCondition{cond("ReplicaPaused", corev1.ConditionTrue)}}, nil},
		{"negative", virtualization.VirtualMachineInstanceReplicaSetStatus{Replicas: -1}, []string{"status.replicas", "status.readyReplicas"}},
		{"more ready than replicas", virtualization.VirtualMachineInstanceReplicaSetStatus{Replicas: 1, ReadyReplicas: 2}, []string{"status.readyReplicas"}},
		{"bad selector", virtualization.VirtualMachineInstanceReplicaSetStatus{LabelSelector: "app in (("}, []string{"status.labelSelector"}},
		{"duplicate condition", virtualization.VirtualMachineInstanceReplicaSetStatus{Conditions: []virtualization.VirtualMachineInstanceReplicaSetCondition{
			cond("ReplicaFailure", corev1.ConditionTrue), cond("ReplicaFailure", corev1.ConditionTrue)}}, []string{"status.conditions[1].type"}},
		{"bad condition status", virtualization.VirtualMachineInstanceReplicaSetStatus{Conditions: []virtualization.VirtualMachineInstanceReplicaSetCondition{
			cond("ReplicaFailure", "Maybe")}}, []string{"status.conditions[0].status"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := old.DeepCopy()
			rs.Status = tc.status
			errs := ValidateVirtualMachineInstanceReplicaSetStatusUpdate(rs, old)
			if got := paths(errs); got != strings.Join(tc.wantPaths, ",") {
				t.Errorf("error paths = %q, want %v; errors: %v", got, tc.wantPaths, errs.ToAggregate())
			}
		})
	}
}

func TestReplicaSetWarnings(t *testing.T) {
	rs := validReplicaSet()
	rs.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To(int64(0))
	w := VirtualMachineInstanceReplicaSetWarnings(rs)
	if len(w) != 1 || !strings.HasPrefix(w[0], "spec.template.spec.terminationGracePeriodSeconds") {
		t.Errorf("want the template's grace period warning, got %v", w)
	}
}
