package action

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/install"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// responder records what the action answered.
type responder struct {
	code int
	obj  runtime.Object
	err  error
}

func (r *responder) Object(code int, obj runtime.Object) { r.code, r.obj = code, obj }
func (r *responder) Error(err error)                     { r.err = err }

func TestDecodeAndAct(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	pb, err := runtime.Encode(protobuf.NewSerializer(scheme, scheme), &virtv1.StopOptions{
		TypeMeta: metav1.TypeMeta{APIVersion: "virtualization.kubevirt.io/v1", Kind: "StopOptions"}, GracePeriod: ptr.To(int64(7))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		body      string
		wantGrace *int64
		wantCode  int32 // of the error; 0: the action ran
	}{
		{"KubeVirt's bare JSON", `{"gracePeriod":7}`, ptr.To(int64(7)), 0},
		{"JSON with kind", `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"StopOptions","gracePeriod":7}`, ptr.To(int64(7)), 0},
		{"YAML", "gracePeriod: 7\n", ptr.To(int64(7)), 0},
		{"protobuf", string(pb), ptr.To(int64(7)), 0},
		{"empty", "", nil, 0},
		{"garbage", "{gracePeriod", nil, http.StatusBadRequest},
		{"wrong field type", `{"gracePeriod":"soon"}`, nil, http.StatusBadRequest},
		{"a field the server does not know", `{"gracePeriod":7,"force":true}`, nil, http.StatusBadRequest},
		{"another kind", `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"StartOptions"}`, nil, http.StatusBadRequest},
		{"too large", `{"dryRun":["` + strings.Repeat("x", maxBodyBytes) + `"]}`, nil, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *virtualization.StopOptions
			r, err := New(scheme, func() *virtualization.StopOptions { return &virtualization.StopOptions{} },
				func(_ context.Context, name string, body *virtualization.StopOptions) (runtime.Object, error) {
					got = body
					return &metav1.Status{Status: metav1.StatusSuccess, Message: "stopping " + name}, nil
				})
			if err != nil {
				t.Fatal(err)
			}
			res := &responder{}
			h, err := r.Connect(t.Context(), "vm", nil, res)
			if err != nil {
				t.Fatal(err)
			}
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/stop", strings.NewReader(tc.body)))
			if tc.wantCode != 0 {
				if st, ok := res.err.(apierrors.APIStatus); !ok || st.Status().Code != tc.wantCode {
					t.Fatalf("err = %v, want %d", res.err, tc.wantCode)
				}
				if got != nil {
					t.Error("the action ran on a bad body")
				}
				return
			}
			if res.err != nil {
				t.Fatal(res.err)
			}
			if res.code != http.StatusOK || res.obj.(*metav1.Status).Message != "stopping vm" {
				t.Errorf("answer %d %v", res.code, res.obj)
			}
			if got == nil || (got.GracePeriod == nil) != (tc.wantGrace == nil) || got.GracePeriod != nil && *got.GracePeriod != *tc.wantGrace {
				t.Errorf("body = %+v, want gracePeriod %v", got, tc.wantGrace)
			}
		})
	}
}

func TestConnectIsPutOnly(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	r, err := New(scheme, func() *virtualization.StartOptions { return &virtualization.StartOptions{} },
		func(context.Context, string, *virtualization.StartOptions) (runtime.Object, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if m := r.ConnectMethods(); len(m) != 1 || m[0] != http.MethodPut {
		t.Errorf("methods = %v, want [PUT]", m)
	}
	if _, ok := r.New().(*virtualization.StartOptions); !ok {
		t.Errorf("New() = %T", r.New())
	}
	if _, err := New(runtime.NewScheme(), func() *virtualization.StartOptions { return &virtualization.StartOptions{} }, nil); err == nil {
		t.Error("a body the scheme does not know was accepted")
	}
}
