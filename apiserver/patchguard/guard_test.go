package patchguard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

var gv = schema.GroupVersion{Group: "virtualization.kubevirt.io", Version: "v1"}

func codecs() serializer.CodecFactory {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}

func serve(t *testing.T, contentType string, h http.HandlerFunc) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPatch, "/apis/virtualization.kubevirt.io/v1/namespaces/ns/virtualmachines/vm", strings.NewReader("{}"))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	WithGuard(h, codecs(), gv).ServeHTTP(rec, req)
	return rec
}

// The finisher re-raises its worker's panic as the value and the worker's
// stack: one from the strategic merge patch code is the patch's fault.
func TestPanicOfThePatchCodeIsABadRequest(t *testing.T) {
	rec := serve(t, "application/strategic-merge-patch+json", func(http.ResponseWriter, *http.Request) {
		panic("interface conversion: interface {} is map[string]interface {}, not string\ngoroutine 7 [running]:\n" +
			"k8s.io/apimachinery/pkg/util/strategicpatch.partitionPrimitivesByPresentInList(...)")
	})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "the patch cannot be applied to the object: interface conversion") ||
		strings.Contains(rec.Body.String(), "goroutine") {
		t.Errorf("got %d %s, want 400 naming the first line of the panic only", rec.Code, rec.Body)
	}
}

// Any other panic is a defect of the server: left to the apiserver's recovery.
func TestOtherPanicsAreNotHidden(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "a bug of ours") {
			t.Errorf("recovered %v, want the handler's own panic", r)
		}
	}()
	serve(t, "application/merge-patch+json", func(http.ResponseWriter, *http.Request) { panic("a bug of ours") })
	t.Error("the panic was swallowed")
}

func TestApplyThatDoesNotFitTheSchemaIs422(t *testing.T) {
	rec := serve(t, "application/apply-patch+yaml", func(w http.ResponseWriter, req *http.Request) {
		responsewriters.ErrorNegotiated(apierrors.NewInternalError(
			errorString(`failed to create typed patch object (virtualization.kubevirt.io/v1, Kind=VirtualMachine ns/vm): .spec.runStrategy: expected string, got &value.valueUnstructured{Value:1}`)),
			codecs(), gv, w, req)
	})
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "does not fit the schema") ||
		!strings.Contains(rec.Body.String(), ".spec.runStrategy: expected string") {
		t.Errorf("got %d %s, want 422 with the conversion's message", rec.Code, rec.Body)
	}
}

func TestOtherAnswersPassUnchanged(t *testing.T) {
	for _, ct := range []string{"application/apply-patch+yaml", "application/json-patch+json"} {
		rec := serve(t, ct, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Test", "kept")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte("conflict"))
		})
		if rec.Code != http.StatusConflict || rec.Body.String() != "conflict" || rec.Header().Get("X-Test") != "kept" {
			t.Errorf("%s: got %d %q %v", ct, rec.Code, rec.Body, rec.Header())
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
