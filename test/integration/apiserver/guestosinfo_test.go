package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestGuestOSInfo: virtualmachineinstances/NAME/guestosinfo answers the
// guest agent's report from the VMI's status in KubeVirt's JSON, once the
// VMI runs with its agent connected; 409 before (KubeVirt's answers), 404
// for a VMI that does not exist.
func TestGuestOSInfo(t *testing.T) {
	_, client := start(t)
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)

	if _, err := vmis.Create(t.Context(), tinyVMI("pending"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vmis.GuestOSInfo(t.Context(), "pending", metav1.GetOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("guestosinfo of a pending VMI: %v, want 409", err)
	}
	if _, err := vmis.GuestOSInfo(t.Context(), "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("guestosinfo of a missing VMI: %v, want 404", err)
	}

	vmi := runningVMI(t, client, "vm", "node-1")
	_, err := vmis.GuestOSInfo(t.Context(), "vm", metav1.GetOptions{})
	if !apierrors.IsConflict(err) || err.Error() != "VMI vm does not have guest agent connected" {
		t.Errorf("guestosinfo without an agent: %v, want 409 saying so", err)
	}

	// virt-handler reports the agent.
	os := virtv1.VirtualMachineInstanceGuestOSInfo{ID: "debian", Name: "Debian GNU/Linux", PrettyName: "Debian GNU/Linux 12 (bookworm)",
		Version: "12 (bookworm)", VersionID: "12", KernelRelease: "6.1.0-41-cloud-amd64", KernelVersion: "#1 SMP", Machine: "x86_64"}
	vmi.Status.GuestOSInfo = os
	vmi.Status.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceAgentConnected, Status: corev1.ConditionTrue}, metav1.Now())
	if _, err := vmis.UpdateStatus(t.Context(), vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The typed client asks in protobuf.
	info, err := vmis.GuestOSInfo(t.Context(), "vm", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("guestosinfo: %v", err)
	}
	if diff := cmp.Diff(os, info.OS); diff != "" {
		t.Errorf("guestosinfo's os (-want +got):\n%s", diff)
	}

	// A client written for KubeVirt reads the same JSON.
	raw, err := client.VirtualizationV1().RESTClient().Get().Namespace(ns).Resource("virtualmachineinstances").Name("vm").
		SubResource("guestosinfo").SetHeader("Accept", "application/json").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	want := map[string]any{
		"kind": "VirtualMachineInstanceGuestAgentInfo", "apiVersion": "virtualization.kubevirt.io/v1",
		"os": map[string]any{"id": "debian", "name": "Debian GNU/Linux", "prettyName": "Debian GNU/Linux 12 (bookworm)",
			"version": "12 (bookworm)", "versionId": "12", "kernelRelease": "6.1.0-41-cloud-amd64", "kernelVersion": "#1 SMP", "machine": "x86_64"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("guestosinfo JSON (-want +got):\n%s", diff)
	}

	// Only GET; discovery names the kind it answers with.
	err = client.VirtualizationV1().RESTClient().Put().Namespace(ns).Resource("virtualmachineinstances").Name("vm").
		SubResource("guestosinfo").Body([]byte("{}")).Do(t.Context()).Error()
	if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT guestosinfo: %v, want 405", err)
	}
	resources, err := client.Discovery().ServerResourcesForGroupVersion(virtv1.SchemeGroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range resources.APIResources {
		if r.Name == "virtualmachineinstances/guestosinfo" {
			found = true
			if r.Kind != "VirtualMachineInstanceGuestAgentInfo" || !r.Namespaced || !cmp.Equal([]string(r.Verbs), []string{"get"}) {
				t.Errorf("discovery of guestosinfo: %+v", r)
			}
		}
	}
	if !found {
		t.Error("discovery lacks virtualmachineinstances/guestosinfo")
	}

	// Once the agent is gone: 409 again.
	vmi, err = vmis.Get(t.Context(), "vm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi.Status.Conditions = nil
	if _, err := vmis.UpdateStatus(t.Context(), vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vmis.GuestOSInfo(t.Context(), "vm", metav1.GetOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("guestosinfo after the agent left: %v, want 409", err)
	}
}
