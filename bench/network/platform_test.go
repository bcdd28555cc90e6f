package network

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/generated/clientset/versioned/fake"
)

func TestVMI(t *testing.T) {
	vmi := VMI("net")
	if got := vmi.Spec.Domain.Resources.Requests[corev1.ResourceMemory]; got.Cmp(resource.MustParse("192Mi")) != 0 {
		t.Errorf("memory %s, want 192Mi", got.String())
	}
	if args := vmi.Spec.Domain.Firmware.KernelBoot.KernelArgs; !strings.HasSuffix(args, " virt.bigfile=64") || !strings.Contains(args, "virt.hostname=net") {
		t.Errorf("kernel arguments %q, want virt.hostname=net and virt.bigfile=64", args)
	}
	// The network is the API's default: the pod network through masquerade.
	if len(vmi.Spec.Domain.Devices.Interfaces) != 0 || len(vmi.Spec.Networks) != 0 {
		t.Errorf("interfaces %v, networks %v: want the API's default", vmi.Spec.Domain.Devices.Interfaces, vmi.Spec.Networks)
	}
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	if got := bindingOf(vmi, virtv1.DefaultPodNetworkName); got != "masquerade" {
		t.Errorf("defaulted binding %q, want masquerade", got)
	}
}

func TestWaitOnline(t *testing.T) {
	vmi := func(phase virtv1.VirtualMachineInstancePhase, ifaces ...virtv1.VirtualMachineInstanceNetworkInterface) *virtv1.VirtualMachineInstance {
		v := VMI(platformName)
		v.Namespace = Namespace
		virtv1.SetObjectDefaults_VirtualMachineInstance(v)
		v.Status.Phase, v.Status.Interfaces = phase, ifaces
		return v
	}
	leased := virtv1.VirtualMachineInstanceNetworkInterface{Name: "default", IPAddress: "198.18.0.7", InfoSource: "domain, dhcp"}
	for _, tc := range []struct {
		name   string
		vmi    *virtv1.VirtualMachineInstance
		wantIP string
		err    string
	}{
		{name: "lease taken", vmi: vmi(virtv1.Running, leased), wantIP: "198.18.0.7"},
		{name: "no lease yet", vmi: vmi(virtv1.Running, virtv1.VirtualMachineInstanceNetworkInterface{Name: "default", IPAddress: "198.18.0.7", InfoSource: "domain"}),
			err: `infoSource "domain" ipAddress "198.18.0.7"`},
		{name: "still scheduling", vmi: vmi(virtv1.Scheduling), err: "last: phase Scheduling"},
		{name: "failed", vmi: vmi(virtv1.Failed), err: "ended Failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{Virt: fake.NewSimpleClientset(tc.vmi)}
			ip, binding, err := waitOnline(t.Context(), env, platformName, time.Second)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ip != tc.wantIP || binding != "masquerade" {
				t.Errorf("waitOnline = %s, %s; want %s, masquerade", ip, binding, tc.wantIP)
			}
		})
	}
}
