package virtualmachineinstance

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apis/virtualization"
)

// tableConvertor prints VMIs for `kubectl get`: the columns KubeVirt users
// know, and with -o wide why a VMI is in its phase and how big it is.
type tableConvertor struct{}

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the VMI"},
	{Name: "Age", Type: "string", Description: "Time since creation"},
	{Name: "Phase", Type: "string", Description: "Where the VMI is in its life"},
	{Name: "IP", Type: "string", Description: "Address of the first interface"},
	{Name: "NodeName", Type: "string", Description: "Node the guest runs on"},
	{Name: "Ready", Type: "string", Description: "Whether the guest runs and can be used"},
	{Name: "Reason", Type: "string", Priority: 1, Description: "Why the VMI is in its phase"},
	{Name: "vCPUs", Type: "integer", Priority: 1, Description: "sockets * cores * threads"},
	{Name: "Memory", Type: "string", Priority: 1, Description: "Guest memory"},
	{Name: "Emulation", Type: "string", Priority: 1, Description: "Software emulation (TCG) when True"},
}

func (tableConvertor) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: columns}
	if m, err := meta.ListAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
		table.Continue = m.GetContinue()
		table.RemainingItemCount = m.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	var err error
	table.Rows, err = metatable.MetaToTableRow(obj, func(obj runtime.Object, m metav1.Object, name, age string) ([]interface{}, error) {
		vmi := obj.(*virtualization.VirtualMachineInstance)
		return []interface{}{name, age, string(vmi.Status.Phase), ip(vmi), vmi.Status.NodeName,
			condition(vmi, virtualization.VirtualMachineInstanceReady), vmi.Status.Reason, vcpus(vmi), memory(vmi),
			condition(vmi, virtualization.VirtualMachineInstanceSoftwareEmulation)}, nil
	})
	return table, err
}

func ip(vmi *virtualization.VirtualMachineInstance) string {
	if len(vmi.Status.Interfaces) == 0 {
		return ""
	}
	return vmi.Status.Interfaces[0].IPAddress
}

func condition(vmi *virtualization.VirtualMachineInstance, t virtualization.VirtualMachineInstanceConditionType) string {
	for _, c := range vmi.Status.Conditions {
		if c.Type == t {
			return string(c.Status)
		}
	}
	return string(corev1.ConditionFalse)
}

func vcpus(vmi *virtualization.VirtualMachineInstance) int64 {
	cpu := vmi.Spec.Domain.CPU
	if cpu == nil {
		return 1
	}
	return int64(max(cpu.Cores, 1)) * int64(max(cpu.Sockets, 1)) * int64(max(cpu.Threads, 1))
}

func memory(vmi *virtualization.VirtualMachineInstance) string {
	if m := vmi.Spec.Domain.Memory; m != nil && m.Guest != nil {
		return m.Guest.String()
	}
	return ""
}
