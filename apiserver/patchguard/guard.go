package patchguard

import (
	"bytes"
	"fmt"
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

// typedPatchError starts the message of server-side apply's plain error for
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
	if r.code == http.StatusInternalServerError && bytes.Contains(r.body.Bytes(), []byte(typedPatchError)) {
		msg := typedPatchError
		if i := bytes.Index(r.body.Bytes(), []byte(typedPatchError)); i >= 0 {
			msg = extractMessage(r.body.Bytes()[i:])
		}
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
			Message: fmt.Sprintf("the applied configuration does not fit the schema of %s: %s", resource, msg),
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

// extractMessage cuts the message at the end of its JSON string (the body
// is a Status), or keeps it whole.
func extractMessage(b []byte) string {
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' {
			i++
			continue
		}
		if b[i] == '"' {
			return strings.ReplaceAll(string(b[:i]), `\"`, `"`)
		}
	}
	return string(b)
}
