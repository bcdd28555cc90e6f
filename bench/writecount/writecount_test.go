package writecount

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPerVMISubtractsTheBackgroundOverEachWindow(t *testing.T) {
	podPatch := key{KubeAPIServer, "PATCH", "pods", "status"}
	vmiCreate := key{VirtAPIServer, "POST", "virtualmachineinstances", ""}
	vmiDelete := key{VirtAPIServer, "DELETE", "virtualmachineinstances", ""}
	got := perVMI(
		window{writes: map[key]float64{podPatch: 2}, seconds: 40},
		window{writes: map[key]float64{podPatch: 12, vmiCreate: 2}, seconds: 10},
		window{writes: map[key]float64{podPatch: 1, vmiDelete: 2}, seconds: 20},
		2,
	)
	want := []Row{
		// virt-apiserver first, then by resource, subresource and verb.
		{Server: VirtAPIServer, Verb: "DELETE", Resource: "virtualmachineinstances", Delete: 1},
		{Server: VirtAPIServer, Verb: "POST", Resource: "virtualmachineinstances", Create: 1},
		// 2 writes in 40 s of idle: 0.05/s, 3/min; 0.5 of them in the
		// 10 s create window and 1 in the 20 s delete window.
		{Server: KubeAPIServer, Verb: "PATCH", Resource: "pods", Subresource: "status", Create: 5.75, Delete: 0, Background: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}
