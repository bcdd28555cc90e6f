package virtualmachineinstancetyperevision

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apis/virtualization"
)

// tableConvertor prints revisions for `kubectl get`: which object each is
// a copy of, which generation, and which VM it belongs to.
type tableConvertor struct{}

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the revision"},
	{Name: "Kind", Type: "string", Description: "Kind of the copied instancetype or preference"},
	{Name: "Object", Type: "string", Description: "Name of the copied instancetype or preference"},
	{Name: "Revision", Type: "integer", Description: "Generation of the copied object"},
	{Name: "Age", Type: "string", Description: "Time since creation"},
	{Name: "VM", Type: "string", Priority: 1, Description: "The VirtualMachine that owns the revision"},
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
		r := obj.(*virtualization.VirtualMachineInstancetypeRevision)
		// The data was decoded when the revision was created; only the
		// header is read again here.
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(r.Data.Raw, &head)
		var vm string
		if ref := metav1.GetControllerOfNoCopy(r); ref != nil && ref.Kind == "VirtualMachine" {
			vm = ref.Name
		}
		return []interface{}{name, head.Kind, head.Metadata.Name, r.Revision, age, vm}, nil
	})
	return table, err
}
