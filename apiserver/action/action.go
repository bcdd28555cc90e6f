package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/rest"
)

// maxBodyBytes bounds what is read of a body; an option body is a few
// hundred bytes.
const maxBodyBytes = 64 << 10

// Func carries out an action on the object name, given the request's body,
// and says what happened.
type Func[T runtime.Object] func(ctx context.Context, name string, body T) (runtime.Object, error)

// REST is the storage of one action.
type REST struct {
	newBody func() runtime.Object
	kind    schema.GroupVersionKind
	decoder runtime.Decoder
	do      func(ctx context.Context, name string, body runtime.Object) (runtime.Object, error)
}

var _ rest.Connecter = &REST{}

// New returns the action that decodes its body into newBody() (an internal
// type of scheme) and calls do with it. A body without apiVersion and kind,
// as KubeVirt's clients send, is taken for the preferred version of the
// type's group; an empty body is an empty newBody().
func New[T runtime.Object](scheme *runtime.Scheme, newBody func() T, do Func[T]) (*REST, error) {
	kinds, _, err := scheme.ObjectKinds(newBody())
	if err != nil {
		return nil, fmt.Errorf("action body: %w", err)
	}
	versions := scheme.PrioritizedVersionsForGroup(kinds[0].Group)
	if len(versions) == 0 {
		return nil, fmt.Errorf("action body %s: no version of its group", kinds[0])
	}
	return &REST{
		newBody: func() runtime.Object { return newBody() },
		kind:    versions[0].WithKind(kinds[0].Kind),
		// Strict: a field the server does not know (KubeVirt's
		// StartOptions.paused) is refused, not silently ignored.
		decoder: serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder(),
		do: func(ctx context.Context, name string, body runtime.Object) (runtime.Object, error) {
			b, ok := body.(T)
			if !ok {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("the body must be a %s, not a %s",
					kinds[0].Kind, body.GetObjectKind().GroupVersionKind().Kind))
			}
			return do(ctx, name, b)
		},
	}, nil
}

// New returns an empty body: it names the subresource's kind in discovery.
func (r *REST) New() runtime.Object { return r.newBody() }

// Destroy does nothing: an action has no storage of its own.
func (r *REST) Destroy() {}

// ConnectMethods is PUT only: authorized as update, like KubeVirt's.
func (r *REST) ConnectMethods() []string { return []string{http.MethodPut} }

// NewConnectOptions says the action reads nothing from the query: its
// options are the body.
func (r *REST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

// Connect decodes the request's body and carries out the action.
func (r *REST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	return http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		body, err := r.decode(req)
		if err != nil {
			responder.Error(err)
			return
		}
		out, err := r.do(ctx, name, body)
		if err != nil {
			responder.Error(err)
			return
		}
		responder.Object(http.StatusOK, out)
	}), nil
}

func (r *REST) decode(req *http.Request) (runtime.Object, error) {
	if req.Body == nil {
		return r.newBody(), nil
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("read the body: %v", err))
	}
	if len(data) > maxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the body is limited to %d bytes", maxBodyBytes))
	}
	if len(data) == 0 {
		return r.newBody(), nil
	}
	obj, _, err := r.decoder.Decode(data, &r.kind, r.newBody())
	if err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return nil, err
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is not a %s: %v", r.kind.Kind, err))
	}
	return obj, nil
}
