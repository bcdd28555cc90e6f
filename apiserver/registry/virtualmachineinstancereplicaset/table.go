package virtualmachineinstancereplicaset

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apis/virtualization"
)

// tableConvertor prints replica sets for `kubectl get`: KubeVirt's columns,
// and with -o wide whether it is paused and what it selects.
type tableConvertor struct{}

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the replica set"},
	{Name: "Desired", Type: "integer", Description: "Number of instances asked for (spec.replicas)"},
	{Name: "Current", Type: "integer", Description: "Number of instances that exist and are not ending (status.replicas)"},
	{Name: "Ready", Type: "integer", Description: "Number of Ready instances (status.readyReplicas)"},
	{Name: "Age", Type: "string", Description: "Time since creation"},
	{Name: "Paused", Type: "boolean", Priority: 1, Description: "Whether instances are left alone (spec.paused)"},
	{Name: "Selector", Type: "string", Priority: 1, Description: "The instances the replica set counts"},
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
		rs := obj.(*virtualization.VirtualMachineInstanceReplicaSet)
		return []interface{}{name, int64(desired(rs)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), age,
			rs.Spec.Paused, selectorString(rs)}, nil
	})
	return table, err
}

// desired is spec.replicas, 1 when unset (as the defaults make it).
func desired(rs *virtualization.VirtualMachineInstanceReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

// selectorString is the selector as kubectl -l would take it, "" if it
// cannot be parsed (validation refuses such a selector).
func selectorString(rs *virtualization.VirtualMachineInstanceReplicaSet) string {
	if rs.Spec.Selector == nil {
		return ""
	}
	s, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return ""
	}
	return s.String()
}
