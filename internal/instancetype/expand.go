package instancetype

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// ExpandVM is vm as if it had been written without references: its template
// expanded with e and then defaulted like any VM's, spec.instancetype and
// spec.preference removed. It is what GET virtualmachines/NAME/expand-spec
// answers, and the template the VM controller creates instances from. vm
// is not changed.
func ExpandVM(vm *virtv1.VirtualMachine, e *Expansion) (*virtv1.VirtualMachine, field.ErrorList) {
	out := vm.DeepCopy()
	if out.Spec.Template == nil {
		return nil, field.ErrorList{field.Required(field.NewPath("spec", "template"), "a VirtualMachine needs the template of its instances")}
	}
	if errs := e.Apply(field.NewPath("spec"), out.Spec.Template); len(errs) > 0 {
		return nil, errs
	}
	// Without references the VM's defaulter defaults the template too.
	out.Spec.Instancetype = nil
	out.Spec.Preference = nil
	virtv1.SetObjectDefaults_VirtualMachine(out)
	return out, nil
}
