package virtualmachineinstance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubevirt.dev/virt/apis/virtualization"
)

func TestConvertToTable(t *testing.T) {
	vmi := validVMI("tiny")
	vmi.CreationTimestamp = metav1.Now()
	vmi.Spec.Domain.CPU = &virtualization.CPU{Cores: 2, Sockets: 2, Threads: 1}
	vmi.Status = virtualization.VirtualMachineInstanceStatus{
		Phase:      virtualization.Running,
		NodeName:   "node-1",
		Interfaces: []virtualization.VirtualMachineInstanceNetworkInterface{{Name: "default", IPAddress: "198.18.0.7"}},
		Conditions: []virtualization.VirtualMachineInstanceCondition{
			{Type: virtualization.VirtualMachineInstanceReady, Status: corev1.ConditionTrue},
			{Type: virtualization.VirtualMachineInstanceSoftwareEmulation, Status: corev1.ConditionTrue},
		},
	}
	table, err := tableConvertor{}.ConvertToTable(t.Context(), vmi, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			names = append(names, c.Name)
		}
	}
	if got := fmtList(names); got != "Name Age Phase IP NodeName Ready" {
		t.Errorf("default columns = %s", got)
	}
	row := table.Rows[0].Cells
	want := []interface{}{"tiny", "0s", "Running", "198.18.0.7", "node-1", "True", "", int64(4), "128Mi", "True"}
	if len(row) != len(want) {
		t.Fatalf("row = %v, want %v", row, want)
	}
	for i := range want {
		if row[i] != want[i] {
			t.Errorf("column %s = %v, want %v", table.ColumnDefinitions[i].Name, row[i], want[i])
		}
	}

	list := &virtualization.VirtualMachineInstanceList{Items: []virtualization.VirtualMachineInstance{*vmi, *validVMI("two")}}
	table, err = tableConvertor{}.ConvertToTable(t.Context(), list, nil)
	if err != nil || len(table.Rows) != 2 {
		t.Fatalf("list: %d rows, err %v; want 2 rows", len(table.Rows), err)
	}
}

func fmtList(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
