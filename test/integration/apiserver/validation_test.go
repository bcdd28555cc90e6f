package apiserver

import (
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestInvalidVMIsAreRefusedWithFieldPaths: every invalid VMI is answered 422
// and names the offending field, so kubectl can tell the user what to fix.
func TestInvalidVMIsAreRefusedWithFieldPaths(t *testing.T) {
	_, client := start(t)
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)

	tests := []struct {
		name   string
		mutate func(*virtv1.VirtualMachineInstance)
		path   string
	}{
		{"name with capitals", func(v *virtv1.VirtualMachineInstance) { v.Name = "Tiny" }, "metadata.name"},
		{"no memory", func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Resources.Requests = nil }, "spec.domain.memory.guest"},
		{"memory below 1Mi", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Memory = &virtv1.Memory{Guest: ptr.To(resource.MustParse("100Ki"))}
		}, "spec.domain.memory.guest"},
		{"guest memory above its limit", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
		}, "spec.domain.memory.guest"},
		{"300 cores", func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.CPU = &virtv1.CPU{Cores: 300} }, "spec.domain.cpu.cores"},
		{"too many vCPUs in total", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.CPU = &virtv1.CPU{Cores: 16, Sockets: 4, Threads: 8}
		}, "spec.domain.cpu"},
		{"unknown machine type", func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Machine = &virtv1.Machine{Type: "virt"} }, "spec.domain.machine.type"},
		{"firmware uuid not a UUID", func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Firmware.UUID = "1234" }, "spec.domain.firmware.uuid"},
		{"kernel boot without image", func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Firmware.KernelBoot.Container.Image = "" },
			"spec.domain.firmware.kernelBoot.container.image"},
		{"disk without volume", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks = append(v.Spec.Domain.Devices.Disks, virtv1.Disk{Name: "data"})
		}, "spec.domain.devices.disks[3].name"},
		// A volume without a disk gets one (KubeVirt's defaulting); a KubeVirt
		// field this platform cannot run is refused at its path.
		{"host devices", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.HostDevices = []virtv1.HostDevice{{Name: "nic", DeviceName: "intel.com/ixgbe"}}
		}, "spec.domain.devices.hostDevices"},
		{"duplicate disk name", func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Devices.Disks[1].Name = "root" }, "spec.domain.devices.disks[1].name"},
		{"volume without source", func(v *virtv1.VirtualMachineInstance) { v.Spec.Volumes[1].EmptyDisk = nil }, "spec.volumes[1]"},
		{"empty disk of zero bytes", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Volumes[1].EmptyDisk.Capacity = resource.MustParse("0")
		}, "spec.volumes[1].emptyDisk.capacity"},
		{"container disk without image", func(v *virtv1.VirtualMachineInstance) { v.Spec.Volumes[0].ContainerDisk.Image = "" },
			"spec.volumes[0].containerDisk.image"},
		{"unknown disk bus", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks[1].Disk.Bus = "ide"
		}, "spec.domain.devices.disks[1].disk.bus"},
		{"duplicate boot order", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks[2].BootOrder = ptr.To(uint32(1))
		}, "spec.domain.devices.disks[2].bootOrder"},
		{"interface without network", func(v *virtv1.VirtualMachineInstance) { v.Spec.Networks[0].Name = "lan" },
			"spec.domain.devices.interfaces[0].name"},
		{"network without interface", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Name = "lan"
		}, "spec.networks[0].name"},
		{"interface without binding", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Masquerade = nil
			v.Spec.Domain.Devices.Interfaces[0].Ports = nil
		}, "spec.domain.devices.interfaces[0].masquerade"},
		{"ports with the bridge binding", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Masquerade = nil
			v.Spec.Domain.Devices.Interfaces[0].Bridge = &virtv1.InterfaceBridge{}
		}, "spec.domain.devices.interfaces[0].ports"},
		{"unknown NIC model", func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Devices.Interfaces[0].Model = "ne3000" },
			"spec.domain.devices.interfaces[0].model"},
		{"multicast MAC", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].MacAddress = "01:00:5e:00:00:01"
		}, "spec.domain.devices.interfaces[0].macAddress"},
		{"port 0", func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Devices.Interfaces[0].Ports[0].Port = 0 },
			"spec.domain.devices.interfaces[0].ports[0].port"},
		{"negative grace period", func(v *virtv1.VirtualMachineInstance) { v.Spec.TerminationGracePeriodSeconds = ptr.To(int64(-5)) },
			"spec.terminationGracePeriodSeconds"},
		{"hostname not a DNS label", func(v *virtv1.VirtualMachineInstance) { v.Spec.Hostname = "web_1" }, "spec.hostname"},
		{"user data given twice", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Volumes[2].CloudInitNoCloud.UserDataBase64 = "I2Nsb3VkLWNvbmZpZwo="
		}, "spec.volumes[2].cloudInitNoCloud"},
		{"bad toleration operator", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: "Sometimes"}}
		}, "spec.tolerations[0].operator"},
		{"bad node selector", func(v *virtv1.VirtualMachineInstance) { v.Spec.NodeSelector = map[string]string{"a b": "c"} },
			"spec.nodeSelector"},
	}
	if len(tests) < 20 {
		t.Fatalf("only %d cases; the API promises at least 20 kinds of refusal", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := fullVMI("invalid")
			tc.mutate(vmi)
			_, err := vmis.Create(t.Context(), vmi, metav1.CreateOptions{})
			status, ok := err.(apierrors.APIStatus)
			if !ok {
				t.Fatalf("err = %v, want a 422 from the server", err)
			}
			if code := status.Status().Code; code != http.StatusUnprocessableEntity {
				t.Fatalf("code = %d (%v), want 422", code, err)
			}
			var paths []string
			for _, c := range status.Status().Details.Causes {
				paths = append(paths, c.Field)
				if c.Field == tc.path && strings.TrimSpace(c.Message) == "" {
					t.Errorf("cause for %s has no message", tc.path)
				}
			}
			if !contains(paths, tc.path) {
				t.Errorf("causes name %v, want %s; message: %v", paths, tc.path, err)
			}
		})
	}
}

// TestMalformedBodies: garbage never reaches validation, let alone panics;
// it is a 400 that says what is wrong.
func TestMalformedBodies(t *testing.T) {
	_, client := start(t)
	rc := client.VirtualizationV1().RESTClient()
	for name, body := range map[string]string{
		"not json":         "garbage{",
		"wrong type":       `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"x"},"spec":{"domain":{"cpu":{"cores":"many"}}}}`,
		"wrong kind":       `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"x"},"spec":{}}`,
		"truncated":        `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"x"},"spec":{"domain":`,
		"quantity garbage": `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"x"},"spec":{"domain":{"memory":{"guest":"lots"},"devices":{}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			err := rc.Post().Namespace(ns).Resource("virtualmachineinstances").
				SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(t.Context()).Error()
			status, ok := err.(apierrors.APIStatus)
			if !ok {
				t.Fatalf("err = %v, want an API status", err)
			}
			if code := status.Status().Code; code != http.StatusBadRequest {
				t.Errorf("code = %d (%v), want 400", code, err)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
