package virtualmachinepreference

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.dev/virt/apiserver/registry/instancetypetable"
)

// tableConvertor prints preferences for `kubectl get`: name and age, as
// KubeVirt does.
type tableConvertor struct{}

func (tableConvertor) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return instancetypetable.Preferences(obj)
}
