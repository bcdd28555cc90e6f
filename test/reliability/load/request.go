package load

import (
	"errors"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// Verb is what a request did to its object.
type Verb string

const (
	Create Verb = "create"
	Update Verb = "update"
	Delete Verb = "delete"
)

// WriteAnnotation holds the number of the write that put a VM in its
// state: 0 for the create, 1, 2, ... for its updates. What the server
// holds after the storm is compared with it.
const WriteAnnotation = "reliability.virt.kubevirt.dev/write"

// Request is one request of the storm as its client saw it.
type Request struct {
	Client int
	Verb   Verb
	// Object is the VM's name; each object is written by one client only.
	Object string
	// Write is the value of WriteAnnotation a create or update sends.
	Write      int
	Start, End time.Time
	// Code is the HTTP status of the answer, 0 when none came (a transport
	// error, the client's deadline).
	Code int
	// Err is the error the client returned, "" for a success.
	Err string
	// UID is what a successful create answered.
	UID types.UID
}

// OK reports whether the request succeeded (its write was acknowledged).
func (r Request) OK() bool { return r.Err == "" }

// Ambiguous reports whether a failed write may have been applied anyway:
// no answer came, or a server error (5xx), which can come after the write
// reached storage. A 4xx refusal says it was not applied.
func (r Request) Ambiguous() bool { return !r.OK() && (r.Code == 0 || r.Code >= 500) }

// Outcome names how the request ended: "ok", the HTTP status of a failure,
// or "transport error".
func (r Request) Outcome() string {
	switch {
	case r.OK():
		return "ok"
	case r.Code == 0:
		return "transport error"
	default:
		return strconv.Itoa(r.Code)
	}
}

// statusCode is the HTTP status of a client error, 0 when the server's
// answer never came.
func statusCode(err error) int {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return int(status.Status().Code)
	}
	return 0
}
