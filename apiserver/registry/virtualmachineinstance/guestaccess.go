package virtualmachineinstance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/action"
)

// Handlers finds the virt-handler that serves a VMI's guest
// (apiserver/guestaccess.Handlers): the URL of subresource on the handler of
// node, for the VMI namespace/name with uid, and the transport to it. Its
// errors are the API's (503 when guest access is off or the node has no
// handler to reach).
type Handlers interface {
	Location(node, namespace, name string, uid types.UID, subresource string) (*url.URL, http.RoundTripper, error)
}

// GuestAccess is the storage of the subresources that reach a running
// guest through the handler of its node (docs/guest-access.md).
type GuestAccess struct {
	Console    *ConsoleREST
	VNC        *VNCREST
	Pause      *action.REST
	Unpause    *action.REST
	SoftReboot *action.REST
}

// NewGuestAccess returns the guest-access subresources of the VMIs of
// vmis, reaching their guests through handlers; the option bodies are
// decoded with scheme.
func NewGuestAccess(scheme *runtime.Scheme, vmis *REST, handlers Handlers) (GuestAccess, error) {
	g := &guests{vmis: vmis.Store, handlers: handlers}
	pause, err := g.pauseREST(scheme)
	if err != nil {
		return GuestAccess{}, err
	}
	unpause, err := g.unpauseREST(scheme)
	if err != nil {
		return GuestAccess{}, err
	}
	softReboot, err := g.softRebootREST(scheme)
	if err != nil {
		return GuestAccess{}, err
	}
	return GuestAccess{
		Console:    &ConsoleREST{g},
		VNC:        &VNCREST{g},
		Pause:      pause,
		Unpause:    unpause,
		SoftReboot: softReboot,
	}, nil
}

// guests is what the subresources share: the VMI store and the handlers.
type guests struct {
	vmis     *genericregistry.Store
	handlers Handlers
}

// guest is a running VMI and where its handler serves subresource.
type guest struct {
	vmi       *virtualization.VirtualMachineInstance
	location  *url.URL
	transport http.RoundTripper
}

// find returns the VMI name, which must be Running, and its handler's
// location of subresource: 404 for a missing VMI, 409 for one that is not
// running, 503 when its handler cannot be found.
func (g *guests) find(ctx context.Context, name, subresource string) (*guest, error) {
	obj, err := g.vmis.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	vmi := obj.(*virtualization.VirtualMachineInstance)
	if vmi.Status.Phase != virtualization.Running {
		return nil, notRunning(vmi)
	}
	location, transport, err := g.handlers.Location(vmi.Status.NodeName, vmi.Namespace, vmi.Name, vmi.UID, subresource)
	if err != nil {
		var status apierrors.APIStatus
		if !errors.As(err, &status) {
			err = apierrors.NewInternalError(fmt.Errorf("find the virt-handler of VMI %s: %w", name, err))
		}
		return nil, err
	}
	return &guest{vmi: vmi, location: location, transport: transport}, nil
}

// notRunning is a 409 whose message is only what went wrong, as the
// handler words it.
func notRunning(vmi *virtualization.VirtualMachineInstance) error {
	phase := vmi.Status.Phase
	if phase == virtualization.PhaseUnset {
		phase = virtualization.Pending
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusConflict,
		Reason:  metav1.StatusReasonConflict,
		Details: &metav1.StatusDetails{Group: virtualization.GroupName, Kind: "virtualmachineinstances", Name: vmi.Name, UID: vmi.UID},
		Message: fmt.Sprintf("VMI %s is not running (phase %s)", vmi.Name, phase),
	}}
}

// unreachable is the error of a handler that could not be talked to.
func unreachable(vmi *virtualization.VirtualMachineInstance, err error) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf("cannot reach the virt-handler of node %s for VMI %s: %v", vmi.Status.NodeName, vmi.Name, err))
}
