package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestAbsurdExponentRefused: a quantity with an exponent of a billion would
// keep the server busy until the request times out (resource.Quantity builds
// a number of a billion digits); the server refuses it at once with 400,
// naming the field, whatever the verb and encoding, and keeps serving.
func TestAbsurdExponentRefused(t *testing.T) {
	_, c := start(t)
	// A hang would outlast this; a refusal takes milliseconds.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	vmis := c.VirtualizationV1().VirtualMachineInstances(ns)
	if _, err := vmis.Create(ctx, tinyVMI("target"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	body := func(memory string) []byte {
		m := map[string]any{}
		b, _ := json.Marshal(tinyVMI("absurd"))
		_ = json.Unmarshal(b, &m)
		m["apiVersion"], m["kind"] = "virtualization.kubevirt.io/v1", "VirtualMachineInstance"
		m["spec"].(map[string]any)["domain"].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["memory"] = memory
		b, _ = json.Marshal(m)
		return b
	}
	rest := c.VirtualizationV1().RESTClient()
	for _, r := range []struct {
		name string
		do   func() error
	}{
		{"create 1e-1000000000", func() error {
			return rest.Post().Namespace(ns).Resource("virtualmachineinstances").SetHeader("Content-Type", "application/json").
				Body(body("1e-1000000000")).Do(ctx).Error()
		}},
		{"create 1e1000000000", func() error {
			return rest.Post().Namespace(ns).Resource("virtualmachineinstances").SetHeader("Content-Type", "application/json").
				Body(body("1e1000000000")).Do(ctx).Error()
		}},
		{"merge patch", func() error {
			_, err := vmis.Patch(ctx, "target", types.MergePatchType,
				[]byte(`{"spec":{"domain":{"resources":{"requests":{"memory":"1e-1000000000"}}}}}`), metav1.PatchOptions{})
			return err
		}},
		{"server-side apply", func() error {
			_, err := vmis.Patch(ctx, "target", types.ApplyPatchType,
				[]byte("apiVersion: virtualization.kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: target}\nspec:\n  domain:\n    resources:\n      requests: {memory: '1e1000000000'}\n"),
				metav1.PatchOptions{FieldManager: "test", Force: new(true)})
			return err
		}},
	} {
		err := r.do()
		var status apierrors.APIStatus
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "spec.domain.resources.requests.memory") {
			t.Errorf("%s: got %v, want 400 Bad Request naming spec.domain.resources.requests.memory", r.name, err)
		} else if !errors.As(err, &status) || status.Status().Code != http.StatusBadRequest {
			t.Errorf("%s: not a Status with code 400: %v", r.name, err)
		}
	}
	// Still serving, the target unchanged.
	vmi, err := vmis.Get(ctx, "target", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := vmi.Spec.Domain.Resources.Requests.Memory().String(); got != "128Mi" {
		t.Errorf("target's memory is %s after refused patches, want 128Mi", got)
	}
}
