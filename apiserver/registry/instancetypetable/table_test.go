package instancetypetable

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apis/virtualization"
)

func TestInstancetypes(t *testing.T) {
	list := &virtualization.VirtualMachineClusterInstancetypeList{
		ListMeta: metav1.ListMeta{ResourceVersion: "7"},
		Items: []virtualization.VirtualMachineClusterInstancetype{{
			ObjectMeta: metav1.ObjectMeta{Name: "u1.small"},
			Spec: virtualization.VirtualMachineInstancetypeSpec{
				CPU:    virtualization.CPUInstancetype{Guest: 1},
				Memory: virtualization.MemoryInstancetype{Guest: resource.MustParse("2Gi")},
			},
		}},
	}
	table, err := Instancetypes(list, func(o runtime.Object) *virtualization.VirtualMachineInstancetypeSpec {
		return &o.(*virtualization.VirtualMachineClusterInstancetype).Spec
	})
	if err != nil {
		t.Fatal(err)
	}
	if table.ResourceVersion != "7" || len(table.Rows) != 1 {
		t.Fatalf("table %+v", table)
	}
	cells := table.Rows[0].Cells
	if cells[0] != "u1.small" || cells[2] != int64(1) || cells[3] != "2Gi" {
		t.Errorf("cells %v, want u1.small, age, 1, 2Gi", cells)
	}
	for i, c := range table.ColumnDefinitions {
		if (i >= 2) != (c.Priority == 1) {
			t.Errorf("column %s has priority %d: only the size is -o wide", c.Name, c.Priority)
		}
	}
}

func TestPreferences(t *testing.T) {
	table, err := Preferences(&virtualization.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "fedora", ResourceVersion: "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if table.ResourceVersion != "3" || len(table.Rows) != 1 || table.Rows[0].Cells[0] != "fedora" || len(table.ColumnDefinitions) != 2 {
		t.Errorf("table %+v", table)
	}
}
