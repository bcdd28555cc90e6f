package instancetypetable

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apis/virtualization"
)

// KubeVirt prints only names and ages; the size is what people look for
// when they choose one, so -o wide adds it.
var instancetypeColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the instancetype"},
	{Name: "Age", Type: "string", Description: "Time since creation"},
	{Name: "CPU", Type: "integer", Priority: 1, Description: "vCPUs of the guest (spec.cpu.guest)"},
	{Name: "Memory", Type: "string", Priority: 1, Description: "Memory of the guest (spec.memory.guest)"},
}

var preferenceColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the preference"},
	{Name: "Age", Type: "string", Description: "Time since creation"},
}

// Instancetypes prints obj, an instancetype or a list of them, with spec
// returning the spec of one.
func Instancetypes(obj runtime.Object, spec func(runtime.Object) *virtualization.VirtualMachineInstancetypeSpec) (*metav1.Table, error) {
	return convert(obj, instancetypeColumns, func(o runtime.Object, name, age string) []interface{} {
		s := spec(o)
		return []interface{}{name, age, int64(s.CPU.Guest), s.Memory.Guest.String()}
	})
}

// Preferences prints obj, a preference or a list of them.
func Preferences(obj runtime.Object) (*metav1.Table, error) {
	return convert(obj, preferenceColumns, func(_ runtime.Object, name, age string) []interface{} {
		return []interface{}{name, age}
	})
}

func convert(obj runtime.Object, columns []metav1.TableColumnDefinition, cells func(runtime.Object, string, string) []interface{}) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: columns}
	if m, err := meta.ListAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
		table.Continue = m.GetContinue()
		table.RemainingItemCount = m.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	var err error
	table.Rows, err = metatable.MetaToTableRow(obj, func(o runtime.Object, _ metav1.Object, name, age string) ([]interface{}, error) {
		return cells(o, name, age), nil
	})
	if err != nil {
		return nil, fmt.Errorf("print %T: %w", obj, err)
	}
	return table, nil
}
