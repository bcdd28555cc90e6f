package nodecapability

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/capability"
)

// PluginName is the name to enable or disable the plugin by.
const PluginName = "VirtNodeCapability"

var vmis = virtualization.Resource("virtualmachineinstances")

// Plugin refuses VMIs no Ready node can run.
type Plugin struct {
	*admission.Handler
	nodes corelisters.NodeLister
}

var (
	_ admission.ValidationInterface                = &Plugin{}
	_ admission.InitializationValidator            = &Plugin{}
	_ initializer.WantsExternalKubeInformerFactory = &Plugin{}
)

// New returns the plugin; it needs the kube-apiserver's informers
// (SetExternalKubeInformerFactory) before it serves.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create)}
}

// SetExternalKubeInformerFactory reads the Nodes through the server's shared
// informers, which the server starts after it started serving.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	nodes := f.Core().V1().Nodes()
	p.nodes = nodes.Lister()
	p.SetReadyFunc(nodes.Informer().HasSynced)
}

// ValidateInitialization fails a chain built without the informers.
func (p *Plugin) ValidateInitialization() error {
	if p.nodes == nil {
		return errors.New(PluginName + " has no Node lister")
	}
	return nil
}

// Validate refuses a VMI that needs a capability no Ready node reports.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != vmis || a.GetSubresource() != "" {
		return nil
	}
	vmi, ok := a.GetObject().(*virtualization.VirtualMachineInstance)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected object %T", a.GetObject()))
	}
	var spec virtv1.VirtualMachineInstanceSpec
	if err := virtv1.Convert_virtualization_VirtualMachineInstanceSpec_To_v1_VirtualMachineInstanceSpec(&vmi.Spec, &spec, nil); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("convert the VMI's spec: %w", err))
	}
	specPath := field.NewPath("spec")
	if len(capability.Needs(&spec, specPath)) == 0 {
		return nil
	}
	if !p.WaitForReady() {
		return apierrors.NewServiceUnavailable("the Nodes' capabilities are not read yet; try again")
	}
	nodes, err := p.nodes.List(labels.Everything())
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list nodes: %w", err))
	}
	if errs := capability.Check(&spec, specPath, nodes); len(errs) > 0 {
		return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), errs)
	}
	return nil
}
