package virtualmachineinstancemigration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubevirt.dev/virt/apis/virtualization"
)

func TestTable(t *testing.T) {
	m := validMigration("mig", "vm1")
	m.Status.Phase = virtualization.MigrationRunning
	m.Status.MigrationState = &virtualization.VirtualMachineInstanceMigrationState{SourceNode: "a", TargetNode: "b"}
	table, err := tableConvertor{}.ConvertToTable(context.Background(), m, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			names = append(names, c.Name)
		}
	}
	if got := names; len(got) != 4 || got[0] != "Name" || got[1] != "Phase" || got[2] != "VMI" || got[3] != "Age" {
		t.Errorf("columns = %v, want [Name Phase VMI Age]", got)
	}
	cells := table.Rows[0].Cells
	if cells[0] != "mig" || cells[1] != "Running" || cells[2] != "vm1" || cells[4] != "a" || cells[5] != "b" {
		t.Errorf("row = %v", cells)
	}
}
