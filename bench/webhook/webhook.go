package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/install"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// Paths the handlers are served on.
const (
	MutatePath   = "/mutate"
	ValidatePath = "/validate"
)

// maxBody bounds a review: the API server sends at most ~3 MiB objects.
const maxBody = 4 << 20

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
}()

// Handler serves both webhooks.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(MutatePath, serve(mutate))
	mux.HandleFunc(ValidatePath, serve(validate))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

type review func(*admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error)

// serve decodes an AdmissionReview, runs one review and answers it; a body
// that is no review is a 400, a review that cannot be processed is denied.
func serve(f review) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			http.Error(w, fmt.Sprintf("read review: %v", err), http.StatusBadRequest)
			return
		}
		var in admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &in); err != nil || in.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		resp, err := f(in.Request)
		if err != nil {
			resp = &admissionv1.AdmissionResponse{Result: &metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: err.Error(),
			}}
		}
		resp.UID = in.Request.UID
		out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(&out); err != nil {
			http.Error(w, fmt.Sprintf("encode review: %v", err), http.StatusInternalServerError)
		}
	}
}

func decode(raw []byte) (*virtv1.VirtualMachineInstance, error) {
	vmi := &virtv1.VirtualMachineInstance{}
	if err := json.Unmarshal(raw, vmi); err != nil {
		return nil, fmt.Errorf("decode VirtualMachineInstance: %w", err)
	}
	return vmi, nil
}

// mutate applies our defaults and replaces the spec with the defaulted one.
func mutate(req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	vmi, err := decode(req.Object.Raw)
	if err != nil {
		return nil, err
	}
	scheme.Default(vmi)
	patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec", "value": vmi.Spec}})
	if err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	pt := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &pt}, nil
}

// validate runs our validation on the internal form, as virt-apiserver's
// strategy does, and answers 422 with one cause per field.
func validate(req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	obj, err := toInternal(req.Object.Raw)
	if err != nil {
		return nil, err
	}
	var errs field.ErrorList
	switch req.Operation {
	case admissionv1.Create:
		errs = validation.ValidateVirtualMachineInstance(obj)
	case admissionv1.Update:
		old, err := toInternal(req.OldObject.Raw)
		if err != nil {
			return nil, err
		}
		if req.SubResource == "status" {
			errs = validation.ValidateVirtualMachineInstanceStatusUpdate(obj, old)
		} else {
			errs = validation.ValidateVirtualMachineInstanceUpdate(obj, old)
		}
	}
	if len(errs) > 0 {
		status := apierrors.NewInvalid(schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}, obj.Name, errs).Status()
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &status}, nil
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	if req.Operation == admissionv1.Create {
		resp.Warnings = validation.VirtualMachineInstanceWarnings(&obj.Spec, "")
	}
	return resp, nil
}

func toInternal(raw []byte) (*virtualization.VirtualMachineInstance, error) {
	vmi, err := decode(raw)
	if err != nil {
		return nil, err
	}
	out := &virtualization.VirtualMachineInstance{}
	if err := scheme.Convert(vmi, out, nil); err != nil {
		return nil, fmt.Errorf("convert VirtualMachineInstance to the internal version: %w", err)
	}
	return out, nil
}
