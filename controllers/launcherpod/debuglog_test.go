package launcherpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// The VMI's libvirt log filters reach the compute container's environment,
// and only valid ones.
func TestNewLibvirtDebugEnv(t *testing.T) {
	env := func(filters *string) []corev1.EnvVar {
		pod, err := New(newVMI(func(v *virtv1.VirtualMachineInstance) {
			if filters != nil {
				v.Annotations = map[string]string{virtv1.LibvirtLogFiltersAnnotation: *filters}
			}
		}), testConfig)
		if err != nil {
			t.Fatal(err)
		}
		return pod.Spec.Containers[0].Env
	}
	if got := env(nil); len(got) != 0 {
		t.Errorf("no annotation: env %v", got)
	}
	filters := "1:qemu.qemu_monitor 3:*"
	got := env(&filters)
	want := []corev1.EnvVar{{Name: "LIBVIRT_LOG_FILTERS", Value: filters}, {Name: "LIBVIRT_LOG_OUTPUTS", Value: "1:stderr"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	bad := "3:*\"\nx=1"
	if got := env(&bad); len(got) != 0 {
		t.Errorf("invalid filters: env %v", got)
	}
}
