package patchguard

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"
)

// patchCode are the packages whose panics are a malformed patch's.
var patchCode = []string{
	"k8s.io/apimachinery/pkg/util/strategicpatch.",
	"k8s.io/apimachinery/pkg/util/jsonmergepatch.",
	"evanphx/json-patch",
}

// typedPatchError is in the message of server-side apply's plain error for
// a body that does not fit the schema (k8s.io/apimachinery's
// managedfields/internal/structuredmerge.go).
const typedPatchError = "failed to create typed patch object"

// WithGuard serves h, answering PATCH requests whose patch the upstream
// patch code cannot handle with a client error (package doc).
func WithGuard(h http.Handler, s runtime.NegotiatedSerializer, gv schema.GroupVersion) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPatch {
			h.ServeHTTP(w, req)
			return
		}
		if !isApply(req) {
			serveRecovering(h, w, req, s, gv)
			return
		}
		// An apply's answer is one object: held until it is known whether
		// it is the 500 to rewrite.
		held := &heldResponse{header: http.Header{}}
		serveRecovering(h, held, req, s, gv)
		held.writeTo(w, req, s, gv)
	})
}

func isApply(req *http.Request) bool {
	return strings.HasPrefix(req.Header.Get("Content-Type"), string(types.ApplyPatchType)) ||
		strings.HasPrefix(req.Header.Get("Content-Type"), string(types.ApplyCBORPatchType))
}

func serveRecovering(h http.Handler, w http.ResponseWriter, req *http.Request, s runtime.NegotiatedSerializer, gv schema.GroupVersion) {
	defer func() {
		reason := recover()
		if reason == nil {
			return
		}
		if reason == http.ErrAbortHandler {
			panic(reason)
		}
		// The finisher re-raises its worker's panic as a string that
		// carries the worker's stack; a panic raised here has its frames
		// on this goroutine's stack, below this deferred call.
		text := fmt.Sprint(reason)
		where := text + "\n" + string(debug.Stack())
		if !fromPatchCode(where) {
			panic(reason)
		}
		first, _, _ := strings.Cut(text, "\n")
		klog.FromContext(req.Context()).V(2).Info("Refused a patch the upstream patch code could not apply",
			"uri", req.RequestURI, "patchType", req.Header.Get("Content-Type"), "reason", first)
		responsewriters.ErrorNegotiated(apierrors.NewBadRequest(
			fmt.Sprintf("the patch cannot be applied to the object: %s", first)), s, gv, w, req)
	}()
	h.ServeHTTP(w, req)
}

func fromPatchCode(stack string) bool {
	for _, p := range patchCode {
		if strings.Contains(stack, p) {
			return true
		}
	}
	return false
}

// heldResponse records an answer to write it later, changed or not.
type heldResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *heldResponse) Header() http.Header { return r.header }

func (r *heldResponse) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *heldResponse) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *heldResponse) writeTo(w http.ResponseWriter, req *http.Request, s runtime.NegotiatedSerializer, gv schema.GroupVersion) {
	if st := r.status(s); r.code == http.StatusInternalServerError && st != nil && strings.Contains(st.Message, typedPatchError) {
		details := &metav1.StatusDetails{Group: gv.Group}
		resource := gv.Group
		if info, ok := request.RequestInfoFrom(req.Context()); ok {
			details.Name = info.Name
			resource = schema.GroupResource{Group: gv.Group, Resource: info.Resource}.String()
		}
		err := &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusUnprocessableEntity,
			Reason:  metav1.StatusReasonInvalid,
			Details: details,
			Message: fmt.Sprintf("the applied configuration does not fit the schema of %s: %s", resource, st.Message),
		}}
		responsewriters.ErrorNegotiated(err, s, gv, w, req)
		return
	}
	for k, v := range r.header {
		w.Header()[k] = v
	}
	if r.code != 0 {
		w.WriteHeader(r.code)
	}
	_, _ = w.Write(r.body.Bytes())
}

// status decodes the held answer as a Status, in whichever encoding the
// client negotiated; nil when it is none.
func (r *heldResponse) status(s runtime.NegotiatedSerializer) *metav1.Status {
	mediaType, _, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		return nil
	}
	info, ok := runtime.SerializerInfoForMediaType(s.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil
	}
	obj, _, err := info.Serializer.Decode(r.body.Bytes(), nil, &metav1.Status{})
	if err != nil {
		return nil
	}
	st, _ := obj.(*metav1.Status)
	return st
}
