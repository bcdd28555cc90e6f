package exponentguard

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

func TestAbsurdNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"1e-1000000000": true, "1e1000000000": true, "-1E+1001": true, "1.5e1001": true, ".5e-99999": true,
		"1e1000": false, "1e-1000": false, "1e0001000": false, "128e6": false, "1Gi": false, "100m": false,
		"1e": false, "e5000": false, "1e5000x": false, "ae5000": false, "1..2e5000": false, ".e5000": false,
		"1e--5000": false, "3e1000000000abc==": false, "": false, "E": false,
		strings.Repeat("9", 1001): true, "0." + strings.Repeat("0", 1000) + "1": true, strings.Repeat("1", 1001) + "e5": true,
		strings.Repeat("9", 1000): false, strings.Repeat("9", 1001) + "x": false, "1.2.3": false, "12345": false,
	} {
		if got := absurdNumber(s); got != want {
			t.Errorf("absurdNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

// The guard's bound must keep what it lets through cheap: the quantities
// at the bound parse and compare at once (a hang would time the test out).
func TestBoundIsCheap(t *testing.T) {
	for _, s := range []string{"1e1000", "1e-1000", "9.99e1000", strings.Repeat("9", 1000), "0." + strings.Repeat("0", 998) + "1e-1000"} {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		_ = q.Cmp(resource.MustParse("1Gi"))
		_ = q.String()
	}
}

func TestCheckJSONAndYAML(t *testing.T) {
	cases := []struct {
		contentType, body string
		path, value       string // empty path and value: accepted
	}{
		{"application/json", `{"spec":{"domain":{"memory":{"guest":"1e-1000000000"}}}}`, "spec.domain.memory.guest", "1e-1000000000"},
		{"application/json; charset=utf-8", `{"spec":{"domain":{"resources":{"requests":{"memory":1e1000000000}}}}}`, "spec.domain.resources.requests.memory", "1e1000000000"},
		{"application/merge-patch+json", `{"spec":{"volumes":[{"name":"a"},{"x":["1e5000"]}]}}`, "spec.volumes[1].x[0]", "1e5000"},
		{"application/json-patch+json", `[{"op":"add","path":"/spec/domain/memory","value":{"guest":"1E-99999"}}]`, "[0].value.guest", "1E-99999"},
		{"application/apply-patch+yaml", "spec:\n  domain:\n    memory:\n      guest: '1e-1000000000'\n", "spec.domain.memory.guest", "1e-1000000000"},
		{"application/yaml", "metadata:\n  labels:\n    a: \"5e+2000\"\n", "metadata.labels.a", "5e+2000"},
		{"application/json", `{"spec":{"domain":{"memory":{"guest":"128e6"}},"userData":"M2UxMDAwMDAwMDAw3e1000000000=="}}`, "", ""},
		{"application/json", `{"a":1e308,"b":"1e-1000","c":[true,null,{"d":"x"}]}`, "", ""},
		{"text/plain", `1e-1000000000`, "", ""},
	}
	for _, c := range cases {
		err := Check(c.contentType, []byte(c.body))
		var refused *Error
		if c.path == "" && c.value == "" {
			if err != nil {
				t.Errorf("%s %s: refused: %v", c.contentType, c.body, err)
			}
			continue
		}
		if !errors.As(err, &refused) {
			t.Errorf("%s %s: want a refusal, got %v", c.contentType, c.body, err)
			continue
		}
		if refused.Path != c.path || refused.Value != c.value {
			t.Errorf("%s %s: refused %q at %q, want %q at %q", c.contentType, c.body, refused.Value, refused.Path, c.value, c.path)
		}
		if !strings.Contains(err.Error(), "±1000") || !strings.Contains(err.Error(), "1000 digits") {
			t.Errorf("the message does not say the bound: %v", err)
		}
	}
	// Malformed bodies are the decoder's business: not a refusal.
	if err := Check("application/json", []byte(`{"a":`)); errors.As(err, new(*Error)) {
		t.Errorf("malformed JSON counted as a refusal: %v", err)
	}
}

// A quantity travels in protobuf as a message holding one string: the walk
// finds it however deep, in a body the Kubernetes protobuf serializer wrote.
func TestCheckProtobuf(t *testing.T) {
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Version: "v1"}
	metav1.AddToGroupVersion(scheme, gv)
	scheme.AddKnownTypes(gv, &metav1.Status{})
	s := protobuf.NewSerializer(scheme, scheme)
	encode := func(message string) []byte {
		var b strings.Builder
		st := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Message: message,
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Message: message, Field: "x"}}}}
		if err := s.Encode(st, &b); err != nil {
			t.Fatal(err)
		}
		return []byte(b.String())
	}
	if err := Check("application/vnd.kubernetes.protobuf", encode("1e-1000000000")); !errors.As(err, new(*Error)) {
		t.Errorf("protobuf body with an absurd exponent: want a refusal, got %v", err)
	}
	if err := Check("application/vnd.kubernetes.protobuf", encode("128e6 and more")); err != nil {
		t.Errorf("ordinary protobuf body refused: %v", err)
	}
}

func TestWithGuard(t *testing.T) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	scheme.AddUnversionedTypes(schema.GroupVersion{Version: "v1"}, &metav1.Status{})
	codecs := serializer.NewCodecFactory(scheme)
	var got string
	h := WithGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.WriteHeader(http.StatusCreated)
	}), 64, codecs, schema.GroupVersion{Group: "virtualization.kubevirt.io", Version: "v1"})

	do := func(method, body string) *httptest.ResponseRecorder {
		got = ""
		r := httptest.NewRequest(method, "/apis/virtualization.kubevirt.io/v1/namespaces/a/virtualmachineinstances", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := do(http.MethodPost, `{"guest":"1e-1000000000"}`); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "guest") || got != "" {
		t.Errorf("absurd exponent: %d %s (handler read %q), want 400 naming the field and the handler not called", w.Code, w.Body.String(), got)
	}
	if w := do(http.MethodPost, `{"guest":"128Mi"}`); w.Code != http.StatusCreated || got != `{"guest":"128Mi"}` {
		t.Errorf("ordinary body: %d, handler read %q", w.Code, got)
	}
	long := `{"guest":"1e-1000000000","pad":"` + strings.Repeat("x", 100) + `"}`
	if w := do(http.MethodPut, long); w.Code != http.StatusCreated || got != long {
		t.Errorf("body over the limit: %d, handler read %d bytes, want it passed whole to the server (which answers 413)", w.Code, len(got))
	}
}
