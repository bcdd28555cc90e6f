package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
)

func validVM() *virtualization.VirtualMachine {
	return &virtualization.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "default"},
		Spec: virtualization.VirtualMachineSpec{
			RunStrategy: ptr.To(virtualization.RunStrategyAlways),
			Template:    &virtualization.VirtualMachineInstanceTemplateSpec{Spec: validVMI().Spec},
		},
	}
}

func TestValidateVirtualMachine(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*virtualization.VirtualMachine)
		wantPaths []string
	}{
		{"valid", func(*virtualization.VirtualMachine) {}, nil},
		{"unknown run strategy", func(vm *virtualization.VirtualMachine) {
			vm.Spec.RunStrategy = ptr.To(virtualization.VirtualMachineRunStrategy("Sometimes"))
		}, []string{"spec.runStrategy"}},
		{"running and runStrategy", func(vm *virtualization.VirtualMachine) { vm.Spec.Running = ptr.To(true) }, []string{"spec.running"}},
		{"no template", func(vm *virtualization.VirtualMachine) { vm.Spec.Template = nil }, []string{"spec.template"}},
		{"invalid template", func(vm *virtualization.VirtualMachine) { vm.Spec.Template.Spec.Domain.CPU.Cores = 0 },
			[]string{"spec.template.spec.domain.cpu.cores"}},
		{"bad template label", func(vm *virtualization.VirtualMachine) {
			vm.Spec.Template.ObjectMeta.Labels = map[string]string{"a b": "c"}
		}, []string{"spec.template.metadata.labels"}},
		{"bad libvirt log filters in the template", func(vm *virtualization.VirtualMachine) {
			vm.Spec.Template.ObjectMeta.Annotations = map[string]string{"kubevirt.io/libvirt-log-filters": "all"}
		}, []string{"spec.template.metadata.annotations[kubevirt.io/libvirt-log-filters]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vm := validVM()
			tc.mutate(vm)
			errs := ValidateVirtualMachine(vm)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.wantPaths, ",") {
				t.Errorf("error paths = %v, want %v; errors: %v", got, tc.wantPaths, errs.ToAggregate())
			}
		})
	}
}

func TestValidateVirtualMachineUpdateAllowsSpecChange(t *testing.T) {
	old := validVM()
	old.ResourceVersion = "1"
	halted := old.DeepCopy()
	halted.Spec.RunStrategy = ptr.To(virtualization.RunStrategyHalted)
	if errs := ValidateVirtualMachineUpdate(halted, old); len(errs) != 0 {
		t.Errorf("stopping a VM was refused: %v", errs)
	}
}

func TestVirtualMachineWarnings(t *testing.T) {
	vm := validVM()
	vm.Spec.RunStrategy = nil
	vm.Spec.Running = ptr.To(true)
	w := VirtualMachineWarnings(vm)
	if len(w) != 1 || !strings.Contains(w[0], "spec.running is deprecated") {
		t.Errorf("want the deprecation warning of spec.running, got %v", w)
	}
}
