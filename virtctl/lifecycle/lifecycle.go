package lifecycle

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// The resources whose subresources act.
const (
	VirtualMachines         = "virtualmachines"
	VirtualMachineInstances = "virtualmachineinstances"
)

// Verb is the RBAC verb every lifecycle subresource is authorized with.
const Verb = "update"

// A Call is one PUT to a lifecycle subresource. The constructors give
// every call that has options a body, empty ones for nil: the server
// decodes one.
type Call struct {
	Resource    string // VirtualMachines or VirtualMachineInstances
	Subresource string // start, stop, ...
	Namespace   string
	Name        string
	// Body is the options; nil sends an empty body.
	Body runtime.Object
}

// Start gives the VM ns/name a running instance.
func Start(ns, name string, o *virtv1.StartOptions) Call {
	if o == nil {
		o = &virtv1.StartOptions{}
	}
	return Call{VirtualMachines, "start", ns, name, o}
}

// Stop stops the VM's instance and keeps the VM stopped.
func Stop(ns, name string, o *virtv1.StopOptions) Call {
	if o == nil {
		o = &virtv1.StopOptions{}
	}
	return Call{VirtualMachines, "stop", ns, name, o}
}

// Restart replaces the VM's instance by a new one.
func Restart(ns, name string, o *virtv1.RestartOptions) Call {
	if o == nil {
		o = &virtv1.RestartOptions{}
	}
	return Call{VirtualMachines, "restart", ns, name, o}
}

// Pause stops the vCPUs of the VMI ns/name.
func Pause(ns, name string, o *virtv1.PauseOptions) Call {
	if o == nil {
		o = &virtv1.PauseOptions{}
	}
	return Call{VirtualMachineInstances, "pause", ns, name, o}
}

// Unpause resumes the vCPUs of the VMI ns/name.
func Unpause(ns, name string, o *virtv1.UnpauseOptions) Call {
	if o == nil {
		o = &virtv1.UnpauseOptions{}
	}
	return Call{VirtualMachineInstances, "unpause", ns, name, o}
}

// SoftReboot asks the guest of the VMI ns/name to reboot (ACPI).
func SoftReboot(ns, name string) Call {
	return Call{VirtualMachineInstances, "softreboot", ns, name, nil}
}

// Do sends the call. The error is the API's (an *apierrors.StatusError for
// an answer of the server), wrapped with what was asked.
func (c Call) Do(ctx context.Context, client virtclient.Interface) error {
	req := client.VirtualizationV1().RESTClient().Put().
		Namespace(c.Namespace).Resource(c.Resource).Name(c.Name).SubResource(c.Subresource)
	if c.Body != nil {
		req = req.Body(c.Body)
	}
	if err := req.Do(ctx).Error(); err != nil {
		return fmt.Errorf("%s %s/%s: %w", c.Subresource, c.Namespace, c.Name, err)
	}
	return nil
}
