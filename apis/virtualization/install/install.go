// Package install registers the virtualization.kubevirt.io group, all its
// versions and the internal version, into a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Install registers the API group and adds its types to a scheme.
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(virtualization.AddToScheme(scheme))
	utilruntime.Must(virtv1.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(virtv1.SchemeGroupVersion))
}
