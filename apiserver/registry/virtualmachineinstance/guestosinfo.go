package virtualmachineinstance

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
)

// GuestOSInfoREST is the storage of virtualmachineinstances/guestosinfo:
// what the guest agent reported, read from the VMI's status, which
// virt-handler keeps from the agent's reports. KubeVirt asks the agent at
// the moment of the request, through the node; the status already holds
// the operating system, without a round trip to the node.
type GuestOSInfoREST struct {
	vmis *genericregistry.Store
}

var _ rest.Getter = &GuestOSInfoREST{}
var _ rest.GroupVersionKindProvider = &GuestOSInfoREST{}

// NewGuestOSInfoREST returns the guestosinfo subresource of the VMIs of vmis.
func NewGuestOSInfoREST(vmis *REST) *GuestOSInfoREST {
	return &GuestOSInfoREST{vmis: vmis.Store}
}

// New returns an empty answer.
func (r *GuestOSInfoREST) New() runtime.Object {
	return &virtualization.VirtualMachineInstanceGuestAgentInfo{}
}

// Destroy does nothing: the main store owns the storage.
func (r *GuestOSInfoREST) Destroy() {}

// GroupVersionKind says the subresource answers with its own kind, not a
// VMI (discovery and clients read it).
func (r *GuestOSInfoREST) GroupVersionKind(containing schema.GroupVersion) schema.GroupVersionKind {
	return containing.WithKind("VirtualMachineInstanceGuestAgentInfo")
}

// Get answers the guest agent's report of VMI name. As in KubeVirt, a VMI
// that is not running or whose agent is not connected is a 409: its report
// would be stale or empty.
func (r *GuestOSInfoREST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.vmis.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	vmi := obj.(*virtualization.VirtualMachineInstance)
	if vmi.Status.Phase != virtualization.Running {
		return nil, notRunning(vmi)
	}
	if !agentConnected(vmi) {
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusConflict,
			Reason:  metav1.StatusReasonConflict,
			Details: &metav1.StatusDetails{Group: virtualization.GroupName, Kind: "virtualmachineinstances", Name: vmi.Name, UID: vmi.UID},
			Message: "VMI " + vmi.Name + " does not have guest agent connected",
		}}
	}
	return &virtualization.VirtualMachineInstanceGuestAgentInfo{OS: vmi.Status.GuestOSInfo}, nil
}

func agentConnected(vmi *virtualization.VirtualMachineInstance) bool {
	for _, c := range vmi.Status.Conditions {
		if c.Type == virtualization.VirtualMachineInstanceAgentConnected {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
