package launcherpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestResources(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name     string
		mutate   func(*virtv1.VirtualMachineInstance)
		requests corev1.ResourceList
		limits   corev1.ResourceList
	}{{
		// 128Mi guest + 160Mi + 64Mi + 8Mi + 1Mi (128Mi / 128)
		name:     "guest memory only",
		requests: corev1.ResourceList{corev1.ResourceMemory: q("361Mi"), corev1.ResourceCPU: q("100m")},
	}, {
		name: "topology of four vCPUs",
		mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.CPU = &virtv1.CPU{Sockets: 2, Cores: 2, Threads: 1}
		},
		requests: corev1.ResourceList{corev1.ResourceMemory: q("385Mi"), corev1.ResourceCPU: q("400m")},
	}, {
		name: "requests and limits of the VMI",
		mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Memory = nil
			v.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: q("256Mi"), corev1.ResourceCPU: q("1")}
			v.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q("512Mi"), corev1.ResourceCPU: q("2")}
		},
		// overhead 160 + 64 + 8 + 2 = 234Mi
		requests: corev1.ResourceList{corev1.ResourceMemory: q("490Mi"), corev1.ResourceCPU: q("1")},
		limits:   corev1.ResourceList{corev1.ResourceMemory: q("746Mi"), corev1.ResourceCPU: q("2")},
	}, {
		name: "cpu limit only is also the request",
		mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: q("500m")}
		},
		requests: corev1.ResourceList{corev1.ResourceMemory: q("361Mi"), corev1.ResourceCPU: q("500m")},
		limits:   corev1.ResourceList{corev1.ResourceCPU: q("500m")},
	}, {
		// Harvester's templates give memory as a limit alone: defaulted,
		// the limit is the request and the guest's memory, and the pod
		// gets the overhead on both, so the guest is not killed at its
		// own size.
		name: "memory limit only, defaulted",
		mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Memory = nil
			v.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q("256Mi")}
			virtv1.SetDefaults_VirtualMachineInstanceSpec(&v.Spec)
		},
		// overhead 160 + 64 + 8 + 2 = 234Mi
		requests: corev1.ResourceList{corev1.ResourceMemory: q("490Mi"), corev1.ResourceCPU: q("100m")},
		limits:   corev1.ResourceList{corev1.ResourceMemory: q("490Mi")},
	}, {
		name: "overcommitted overhead",
		mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Resources.OvercommitGuestOverhead = true
			v.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q("128Mi")}
		},
		requests: corev1.ResourceList{corev1.ResourceMemory: q("128Mi"), corev1.ResourceCPU: q("100m")},
		limits:   corev1.ResourceList{corev1.ResourceMemory: q("361Mi")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resources(newVMI(tt.mutate))
			if err != nil {
				t.Fatal(err)
			}
			compare(t, "requests", tt.requests, got.Requests)
			compare(t, "limits", tt.limits, got.Limits)
		})
	}
}

func compare(t *testing.T, what string, want, got corev1.ResourceList) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s = %v, want %v", what, got, want)
		return
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g.Cmp(w) != 0 {
			t.Errorf("%s[%s] = %s, want %s", what, name, g.String(), w.String())
		}
	}
}
