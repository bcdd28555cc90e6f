// Package fuzzer holds the randfill functions that keep fuzzed objects of the
// virtualization group round-trippable: every object they make is already in
// its defaulted form, because decoding applies defaults and would otherwise
// "change" a fuzzed object on its way back.
package fuzzer

import (
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/randfill"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Funcs returns the fuzzer functions of the virtualization group.
func Funcs(_ runtimeserializer.CodecFactory) []interface{} {
	return []interface{}{
		func(vmi *virtualization.VirtualMachineInstance, c randfill.Continue) {
			c.FillNoCustom(vmi)
			defaultVMI(vmi)
		},
		func(vm *virtualization.VirtualMachine, c randfill.Continue) {
			c.FillNoCustom(vm)
			defaultVM(vm)
		},
		func(rs *virtualization.VirtualMachineInstanceReplicaSet, c randfill.Continue) {
			c.FillNoCustom(rs)
			defaultReplicaSet(rs)
		},
		// Instancetypes and preferences hold VMI types (GPUs, features,
		// timers) whose defaults apply to them too.
		func(it *virtualization.VirtualMachineInstancetype, c randfill.Continue) {
			c.FillNoCustom(it)
			out := &virtv1.VirtualMachineInstancetype{}
			utilruntime.Must(virtv1.Convert_virtualization_VirtualMachineInstancetype_To_v1_VirtualMachineInstancetype(it, out, nil))
			virtv1.SetObjectDefaults_VirtualMachineInstancetype(out)
			utilruntime.Must(virtv1.Convert_v1_VirtualMachineInstancetype_To_virtualization_VirtualMachineInstancetype(out, it, nil))
		},
		func(it *virtualization.VirtualMachineClusterInstancetype, c randfill.Continue) {
			c.FillNoCustom(it)
			out := &virtv1.VirtualMachineClusterInstancetype{}
			utilruntime.Must(virtv1.Convert_virtualization_VirtualMachineClusterInstancetype_To_v1_VirtualMachineClusterInstancetype(it, out, nil))
			virtv1.SetObjectDefaults_VirtualMachineClusterInstancetype(out)
			utilruntime.Must(virtv1.Convert_v1_VirtualMachineClusterInstancetype_To_virtualization_VirtualMachineClusterInstancetype(out, it, nil))
		},
		func(p *virtualization.VirtualMachinePreference, c randfill.Continue) {
			c.FillNoCustom(p)
			out := &virtv1.VirtualMachinePreference{}
			utilruntime.Must(virtv1.Convert_virtualization_VirtualMachinePreference_To_v1_VirtualMachinePreference(p, out, nil))
			virtv1.SetObjectDefaults_VirtualMachinePreference(out)
			utilruntime.Must(virtv1.Convert_v1_VirtualMachinePreference_To_virtualization_VirtualMachinePreference(out, p, nil))
		},
		func(p *virtualization.VirtualMachineClusterPreference, c randfill.Continue) {
			c.FillNoCustom(p)
			out := &virtv1.VirtualMachineClusterPreference{}
			utilruntime.Must(virtv1.Convert_virtualization_VirtualMachineClusterPreference_To_v1_VirtualMachineClusterPreference(p, out, nil))
			virtv1.SetObjectDefaults_VirtualMachineClusterPreference(out)
			utilruntime.Must(virtv1.Convert_v1_VirtualMachineClusterPreference_To_virtualization_VirtualMachineClusterPreference(out, p, nil))
		},
	}
}

// defaultVMI applies the v1 defaults to an internal VMI by converting it to
// v1 and back, so the fuzzer can never drift from what defaulting does.
func defaultVMI(in *virtualization.VirtualMachineInstance) {
	out := &virtv1.VirtualMachineInstance{}
	utilruntime.Must(virtv1.Convert_virtualization_VirtualMachineInstance_To_v1_VirtualMachineInstance(in, out, nil))
	virtv1.SetObjectDefaults_VirtualMachineInstance(out)
	utilruntime.Must(virtv1.Convert_v1_VirtualMachineInstance_To_virtualization_VirtualMachineInstance(out, in, nil))
}

func defaultVM(in *virtualization.VirtualMachine) {
	out := &virtv1.VirtualMachine{}
	utilruntime.Must(virtv1.Convert_virtualization_VirtualMachine_To_v1_VirtualMachine(in, out, nil))
	virtv1.SetObjectDefaults_VirtualMachine(out)
	utilruntime.Must(virtv1.Convert_v1_VirtualMachine_To_virtualization_VirtualMachine(out, in, nil))
}

func defaultReplicaSet(in *virtualization.VirtualMachineInstanceReplicaSet) {
	out := &virtv1.VirtualMachineInstanceReplicaSet{}
	utilruntime.Must(virtv1.Convert_virtualization_VirtualMachineInstanceReplicaSet_To_v1_VirtualMachineInstanceReplicaSet(in, out, nil))
	virtv1.SetObjectDefaults_VirtualMachineInstanceReplicaSet(out)
	utilruntime.Must(virtv1.Convert_v1_VirtualMachineInstanceReplicaSet_To_virtualization_VirtualMachineInstanceReplicaSet(out, in, nil))
}
