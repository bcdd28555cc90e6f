package utf8guard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

func TestWithGuard(t *testing.T) {
	scheme := runtime.NewScheme()
	codecs := serializer.NewCodecFactory(scheme)
	gv := schema.GroupVersion{Group: "virtualization.kubevirt.io", Version: "v1"}
	var got string
	h := WithGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.WriteHeader(http.StatusCreated)
	}), 1<<20, codecs, gv)
	tests := []struct {
		name, method, contentType, body string
		want                            int
	}{
		{"valid JSON", http.MethodPost, "application/json", `{"a":"ü"}`, http.StatusCreated},
		{"invalid UTF-8 in a string", http.MethodPost, "application/json", "{\"a\":\"\xff\xfe\"}", http.StatusBadRequest},
		{"invalid UTF-8, charset given", http.MethodPut, "application/json; charset=utf-8", "{\"a\":\"\xc3(\"}", http.StatusBadRequest},
		{"no content type", http.MethodPost, "", "{\"a\":\"\xff\"}", http.StatusBadRequest},
		{"a merge patch", http.MethodPatch, "application/merge-patch+json", "{\"a\":\"\xff\"}", http.StatusBadRequest},
		{"a JSON patch", http.MethodPatch, "application/json-patch+json", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":\"\xff\"}]", http.StatusBadRequest},
		{"a strategic merge patch", http.MethodPatch, "application/strategic-merge-patch+json", "{\"a\":\"\xff\"}", http.StatusBadRequest},
		{"YAML is its parser's", http.MethodPost, "application/yaml", "a: \xff", http.StatusCreated},
		{"protobuf carries bytes", http.MethodPost, "application/vnd.kubernetes.protobuf", "k8s\x00\xff", http.StatusCreated},
		{"a GET is not read", http.MethodGet, "application/json", "\xff", http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = ""
			req := httptest.NewRequest(tt.method, "/apis/virtualization.kubevirt.io/v1/namespaces/ns/virtualmachineinstances", strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.want)
			}
			if tt.want == http.StatusCreated && got != tt.body {
				t.Errorf("the handler read %q, want the body %q", got, tt.body)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	if err := Check([]byte(`{"a":"ü"}`)); err != nil {
		t.Errorf("valid: %v", err)
	}
	err := Check([]byte("{\"a\":\"\xff\"}"))
	if err == nil || !strings.Contains(err.Error(), "offset 6") {
		t.Errorf("invalid: %v, want the offset 6 named", err)
	}
}
