package v1_test

import (
	"testing"

	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestEffectiveRunStrategy(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec virtv1.VirtualMachineSpec
		want virtv1.VirtualMachineRunStrategy
	}{
		{"neither", virtv1.VirtualMachineSpec{}, virtv1.RunStrategyHalted},
		{"running", virtv1.VirtualMachineSpec{Running: ptr.To(true)}, virtv1.RunStrategyAlways},
		{"not running", virtv1.VirtualMachineSpec{Running: ptr.To(false)}, virtv1.RunStrategyHalted},
		{"strategy", virtv1.VirtualMachineSpec{RunStrategy: ptr.To(virtv1.RunStrategyManual)}, virtv1.RunStrategyManual},
		{"strategy wins", virtv1.VirtualMachineSpec{Running: ptr.To(true), RunStrategy: ptr.To(virtv1.RunStrategyRerunOnFailure)}, virtv1.RunStrategyRerunOnFailure},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.spec.EffectiveRunStrategy(); got != tt.want {
				t.Errorf("EffectiveRunStrategy = %s, want %s", got, tt.want)
			}
		})
	}
}
