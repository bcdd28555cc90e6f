package v1_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"

	"kubevirt.dev/virt/apis/virtualization/install"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestKubeVirtManifestsDecode proves the promise of the API: a manifest
// written for KubeVirt's kubevirt.io/v1 decodes, strictly (an unknown or
// misspelt field is an error), after changing only its apiVersion.
func TestKubeVirtManifestsDecode(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	strict := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	decoder := strict.UniversalDecoder(virtv1.SchemeGroupVersion)

	load := func(t *testing.T, name string) runtime.Object {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("testdata", "kubevirt", name))
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.Replace(data, []byte("apiVersion: kubevirt.io/v1\n"), []byte("apiVersion: virtualization.kubevirt.io/v1\n"), 1)
		obj, err := runtime.Decode(decoder, data)
		if err != nil {
			t.Fatalf("decode %s: %v", name, err)
		}
		return obj
	}

	t.Run("vmi-fedora", func(t *testing.T) {
		vmi, ok := load(t, "vmi-fedora.yaml").(*virtv1.VirtualMachineInstance)
		if !ok {
			t.Fatal("not a VirtualMachineInstance")
		}
		s := vmi.Spec
		equal(t, s.Domain.CPU.Cores, uint32(2))
		equal(t, s.Domain.CPU.Model, "host-model")
		equal(t, s.Domain.Firmware.UUID, types.UID("5d307ca9-b3ef-428c-8861-06e72d69f223"))
		equal(t, s.Domain.Firmware.Bootloader.EFI != nil, true)
		equal(t, len(s.Domain.Devices.Disks), 4)
		equal(t, *s.Domain.Devices.Disks[0].BootOrder, uint32(1))
		equal(t, *s.Domain.Devices.Disks[2].CDRom.ReadOnly, true)
		equal(t, s.Domain.Devices.Interfaces[0].MacAddress, "de:ad:00:00:be:af")
		equal(t, s.Domain.Devices.Interfaces[0].Masquerade != nil, true)
		equal(t, s.Domain.Devices.Interfaces[0].Ports[0].Port, int32(22))
		equal(t, s.Domain.Devices.Watchdog.I6300ESB.Action, virtv1.WatchdogActionPoweroff)
		equal(t, s.Domain.Memory.Guest.String(), "1Gi")
		equal(t, s.Domain.Resources.Requests.Memory().String(), "1024M")
		equal(t, s.Volumes[0].ContainerDisk.Image, "registry.example/containerdisks/fedora:40")
		equal(t, s.Volumes[1].CloudInitNoCloud.NetworkData != "", true)
		equal(t, s.Volumes[2].PersistentVolumeClaim.ClaimName, "fedora-iso")
		equal(t, s.Volumes[3].EmptyDisk.Capacity.String(), "2Gi")
		equal(t, s.Affinity.NodeAffinity != nil, true)
		equal(t, s.Tolerations[0].Key, "node-role.kubernetes.io/control-plane")
		equal(t, *s.TerminationGracePeriodSeconds, int64(0))
		equal(t, s.Hostname, "fedora")
		equal(t, vmi.Status.Interfaces[0].IPAddress, "198.18.0.17")
		equal(t, vmi.Status.ActivePods["6b0ee1e8-8a3b-4a9e-a1c4-7f00b2c6d4a1"], "node01")
		equal(t, vmi.Status.Conditions[0].Type, virtv1.VirtualMachineInstanceReady)
	})

	t.Run("vm-cirros", func(t *testing.T) {
		vm, ok := load(t, "vm-cirros.yaml").(*virtv1.VirtualMachine)
		if !ok {
			t.Fatal("not a VirtualMachine")
		}
		equal(t, *vm.Spec.Running, false)
		equal(t, vm.Spec.Template.ObjectMeta.Labels["kubevirt.io/vm"], "vm-cirros")
		equal(t, vm.Spec.Template.Spec.Domain.Machine.Type, "q35") // "" is defaulted
		equal(t, vm.Spec.Template.Spec.Volumes[1].CloudInitNoCloud.UserData != "", true)
		equal(t, vm.Spec.Template.Spec.Domain.Memory.Guest.String(), "128Mi")
	})

	t.Run("unknown field is refused", func(t *testing.T) {
		_, err := runtime.Decode(decoder, []byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineInstance","spec":{"domain":{"devices":{}},"bogus":1}}`))
		if err == nil {
			t.Fatal("strict decoding accepted an unknown field")
		}
	})
}
