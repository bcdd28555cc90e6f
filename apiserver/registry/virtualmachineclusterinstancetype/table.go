package virtualmachineclusterinstancetype

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/registry/instancetypetable"
)

// tableConvertor prints instancetypes for `kubectl get`: KubeVirt's name
// and age, and with -o wide the size.
type tableConvertor struct{}

func (tableConvertor) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return instancetypetable.Instancetypes(obj, func(obj runtime.Object) *virtualization.VirtualMachineInstancetypeSpec {
		return &obj.(*virtualization.VirtualMachineClusterInstancetype).Spec
	})
}
