package apiserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/testserver"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

const ns = "default"

// start runs a fresh server for one test and returns a client of it.
func start(t *testing.T) (*testserver.Server, virtclient.Interface) {
	t.Helper()
	s := testserver.Start(t, t.TempDir())
	return s, newClient(t, s.ClientConfig)
}

func newClient(t *testing.T, config *rest.Config) virtclient.Interface {
	t.Helper()
	c, err := virtclient.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tinyVMI is the smallest VMI a user writes: memory and a kernel to boot.
func tinyVMI(name string) *virtv1.VirtualMachineInstance {
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{
				Resources: virtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
				Firmware: &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{
					KernelArgs: "console=ttyS0",
					Container:  &virtv1.KernelBootContainer{Image: "localhost/virt-guest:dev", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.gz"},
				}},
			},
		},
	}
}

// fullVMI uses one of each device so invalid variants can break one thing.
func fullVMI(name string) *virtv1.VirtualMachineInstance {
	vmi := tinyVMI(name)
	vmi.Spec.Domain.Devices = virtv1.Devices{
		Disks: []virtv1.Disk{
			{Name: "root", BootOrder: ptr.To(uint32(1))},
			{Name: "scratch", DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusSATA}}},
			{Name: "cloudinit"},
		},
		Interfaces: []virtv1.Interface{{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}},
			Ports: []virtv1.Port{{Name: "ssh", Port: 22}}}},
	}
	vmi.Spec.Networks = []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
	vmi.Spec.Volumes = []virtv1.Volume{
		{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "localhost/virt-guest-disk:dev"}}},
		{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}},
		{Name: "cloudinit", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
	}
	return vmi
}

func vmFor(name string) *virtv1.VirtualMachine {
	return &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(virtv1.RunStrategyAlways),
			Template:    &virtv1.VirtualMachineInstanceTemplateSpec{Spec: tinyVMI("").Spec},
		},
	}
}
