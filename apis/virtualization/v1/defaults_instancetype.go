package v1

// SetDefaults_VirtualMachine defaults a VM and, unless it references an
// instancetype or a preference, its template like a VMI.
//
// A template that references one stays as written. Its empty fields are
// the instancetype's and the preference's to fill when the instance is
// created (the VM controller expands it; the instance is then defaulted
// as any VMI): a defaulted template would already hold one vCPU, the q35
// machine and virtio disks, which would conflict with the instancetype and
// leave the preference nothing to fill. KubeVirt does not default a VM's
// template either.
//
// +k8s:defaulter-gen=covers
func SetDefaults_VirtualMachine(vm *VirtualMachine) {
	SetDefaults_VirtualMachineSpec(&vm.Spec)
	if vm.Spec.Template == nil || vm.Spec.Instancetype != nil || vm.Spec.Preference != nil {
		return
	}
	// The generated VMI defaulter calls every nested defaulter, including
	// ones added later; the template is defaulted through it so that a VM
	// and a VMI of the same spec never differ.
	vmi := &VirtualMachineInstance{Spec: vm.Spec.Template.Spec}
	SetObjectDefaults_VirtualMachineInstance(vmi)
	vm.Spec.Template.Spec = vmi.Spec
}

// SetDefaultPodNetwork gives a guest without any network the pod network
// through a masquerade interface, as the defaults of a VMI do. Expanding a
// VM with a preference needs it before the preference fills the NIC's
// model, which the full defaults would fill first.
func SetDefaultPodNetwork(spec *VirtualMachineInstanceSpec) {
	setDefaultPodNetwork(spec)
}
