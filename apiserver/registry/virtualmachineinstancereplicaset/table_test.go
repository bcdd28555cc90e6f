package virtualmachineinstancereplicaset

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubevirt.dev/virt/apis/virtualization"
)

func TestConvertToTable(t *testing.T) {
	rs := validReplicaSet("web")
	rs.CreationTimestamp = metav1.Now()
	rs.Status = virtualization.VirtualMachineInstanceReplicaSetStatus{Replicas: 2, ReadyReplicas: 1}
	table, err := tableConvertor{}.ConvertToTable(t.Context(), rs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			names = append(names, c.Name)
		}
	}
	if got := strings.Join(names, " "); got != "Name Desired Current Ready Age" {
		t.Errorf("default columns = %s, want KubeVirt's", got)
	}
	row := table.Rows[0].Cells
	want := []interface{}{"web", int64(2), int64(2), int64(1), "0s", false, "app=web"}
	if len(row) != len(want) {
		t.Fatalf("row = %v, want %v", row, want)
	}
	for i := range want {
		if row[i] != want[i] {
			t.Errorf("column %s = %v, want %v", table.ColumnDefinitions[i].Name, row[i], want[i])
		}
	}

	list := &virtualization.VirtualMachineInstanceReplicaSetList{Items: []virtualization.VirtualMachineInstanceReplicaSet{*rs, *validReplicaSet("two")}}
	table, err = tableConvertor{}.ConvertToTable(t.Context(), list, nil)
	if err != nil || len(table.Rows) != 2 {
		t.Fatalf("list: %d rows, err %v; want 2 rows", len(table.Rows), err)
	}
}
