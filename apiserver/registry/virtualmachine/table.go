package virtualmachine

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apis/virtualization"
)

// tableConvertor prints VMs for `kubectl get`.
type tableConvertor struct{}

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the VM"},
	{Name: "Age", Type: "string", Description: "Time since creation"},
	{Name: "Status", Type: "string", Description: "The VM in one word"},
	{Name: "Ready", Type: "boolean", Description: "Whether the VM's instance is ready"},
	{Name: "RunStrategy", Type: "string", Priority: 1, Description: "When the VM's instance should run"},
	{Name: "Created", Type: "boolean", Priority: 1, Description: "Whether an instance exists"},
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
		vm := obj.(*virtualization.VirtualMachine)
		return []interface{}{name, age, string(vm.Status.PrintableStatus), vm.Status.Ready, string(vm.Spec.EffectiveRunStrategy()), vm.Status.Created}, nil
	})
	return table, err
}
