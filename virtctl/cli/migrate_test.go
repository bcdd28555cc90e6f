package cli_test

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestMigrate: `migrate NAME` PUTs the VM's migrate subresource and names
// the migration the server created; a name without a VM goes to the VMI's.
func TestMigrate(t *testing.T) {
	const vms, vmis = group + "/namespaces/ctx-ns/virtualmachines/", group + "/namespaces/ctx-ns/virtualmachineinstances/"
	answer := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, &virtv1.VirtualMachineInstanceMigration{
			TypeMeta:   metav1.TypeMeta{APIVersion: "virtualization.kubevirt.io/v1", Kind: "VirtualMachineInstanceMigration"},
			ObjectMeta: metav1.ObjectMeta{Namespace: r.PathValue("ns"), Name: "kubevirt-migrate-vm-abcde"},
			Spec:       virtv1.VirtualMachineInstanceMigrationSpec{VMIName: r.PathValue("name")},
		})
	}

	a := newFakeAPI(t)
	a.mux.HandleFunc("PUT "+group+"/namespaces/{ns}/virtualmachines/{name}/migrate", answer)
	a.mux.HandleFunc("PUT "+group+"/namespaces/{ns}/virtualmachineinstances/{name}/migrate", answer)
	a.vms["ctx-ns/vm1"] = true
	res := a.run(nil, "migrate", "vm1")
	if res.err != nil {
		t.Fatalf("error: %v\n%s", res.err, res.errOut)
	}
	if got := a.last(); got.Method != http.MethodPut || got.Path != vms+"vm1/migrate" {
		t.Errorf("%s %s, want PUT %s", got.Method, got.Path, vms+"vm1/migrate")
	}
	if want := "VM vm1 was scheduled to migrate: virtualmachineinstancemigration/kubevirt-migrate-vm-abcde\n"; res.out != want {
		t.Errorf("output %q, want %q", res.out, want)
	}

	// A bare VMI: the VM's subresource says NotFound, and so does the VM.
	b := newFakeAPI(t)
	b.mux.HandleFunc("PUT "+group+"/namespaces/{ns}/virtualmachineinstances/{name}/migrate", answer)
	b.mux.HandleFunc("PUT "+group+"/namespaces/{ns}/virtualmachines/{name}/migrate", b.getVM)
	res = b.run(nil, "migrate", "vmi1")
	if res.err != nil {
		t.Fatalf("error: %v\n%s", res.err, res.errOut)
	}
	if got := b.last(); got.Path != vmis+"vmi1/migrate" {
		t.Errorf("last request %s %s, want PUT %s", got.Method, got.Path, vmis+"vmi1/migrate")
	}
	if !strings.Contains(res.out, "kubevirt-migrate-vm-abcde") {
		t.Errorf("output %q does not name the migration", res.out)
	}
}
