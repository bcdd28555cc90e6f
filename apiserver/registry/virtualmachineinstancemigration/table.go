package virtualmachineinstancemigration

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apis/virtualization"
)

// tableConvertor prints migrations for `kubectl get`: KubeVirt's columns,
// and with -o wide where the guest moves from and to.
type tableConvertor struct{}

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the migration"},
	{Name: "Phase", Type: "string", Description: "The migration's current step (status.phase)"},
	{Name: "VMI", Type: "string", Description: "The VMI being migrated (spec.vmiName)"},
	{Name: "Age", Type: "string", Description: "Time since creation"},
	{Name: "Source", Type: "string", Priority: 1, Description: "The node the guest moves from"},
	{Name: "Target", Type: "string", Priority: 1, Description: "The node the guest moves to"},
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
	table.Rows, err = metatable.MetaToTableRow(obj, func(obj runtime.Object, _ metav1.Object, name, age string) ([]interface{}, error) {
		m := obj.(*virtualization.VirtualMachineInstanceMigration)
		var source, target string
		if s := m.Status.MigrationState; s != nil {
			source, target = s.SourceNode, s.TargetNode
		}
		return []interface{}{name, string(m.Status.Phase), m.Spec.VMIName, age, source, target}, nil
	})
	return table, err
}
