package webhook_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/fixture"
	"kubevirt.dev/virt/bench/webhook"
)

func post(t *testing.T, path string, op admissionv1.Operation, vmi *virtv1.VirtualMachineInstance) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(vmi)
	if err != nil {
		t.Fatal(err)
	}
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "42", Operation: op, Object: runtime.RawExtension{Raw: raw}, OldObject: runtime.RawExtension{Raw: raw},
			Kind: metav1.GroupVersionKind{Group: "virtbench.kubevirt.io", Version: "v1", Kind: "VirtualMachineInstance"},
		},
	}
	body, _ := json.Marshal(in)
	rec := httptest.NewRecorder()
	webhook.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("%s: bad review %s: %v", path, rec.Body, err)
	}
	if out.Response.UID != "42" {
		t.Errorf("%s: UID %q, want the request's", path, out.Response.UID)
	}
	return out.Response
}

func TestMutateAppliesOurDefaults(t *testing.T) {
	resp := post(t, webhook.MutatePath, admissionv1.Create, fixture.VMI("tiny"))
	if !resp.Allowed || resp.PatchType == nil {
		t.Fatalf("not allowed or no patch: %+v", resp)
	}
	for _, want := range []string{`"machine":{"type":"q35"}`, `"masquerade":{}`, `"guest":"128Mi"`} {
		if !strings.Contains(string(resp.Patch), want) {
			t.Errorf("patch %s lacks %s", resp.Patch, want)
		}
	}
}

// defaulted is what the validating webhook gets: the object after the
// mutating webhook, in a namespace.
func defaulted(name string) *virtv1.VirtualMachineInstance {
	vmi := fixture.VMI(name)
	vmi.Namespace = "ns"
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	return vmi
}

func TestValidate(t *testing.T) {
	tooManyCPUs := defaulted("big")
	tooManyCPUs.Spec.Domain.CPU.Cores = 300
	badName := defaulted("Not_A_Label")
	for _, tc := range []struct {
		name    string
		vmi     *virtv1.VirtualMachineInstance
		allowed bool
		field   string
	}{
		{"the test guest", defaulted("tiny"), true, ""},
		{"too many vCPUs", tooManyCPUs, false, "spec.domain.cpu"},
		{"name not a DNS label", badName, false, "metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, webhook.ValidatePath, admissionv1.Create, tc.vmi)
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed %v, want %v: %+v", resp.Allowed, tc.allowed, resp.Result)
			}
			if tc.allowed {
				return
			}
			if resp.Result.Code != http.StatusUnprocessableEntity || !strings.Contains(resp.Result.Message, tc.field) {
				t.Errorf("got %d %q, want 422 naming %s", resp.Result.Code, resp.Result.Message, tc.field)
			}
		})
	}
}
