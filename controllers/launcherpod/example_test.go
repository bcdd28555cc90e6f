package launcherpod_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
	"kubevirt.dev/virt/launcher/layout"
)

// A VMI with a container disk gets the launcher, which gets /dev/net/tun
// from virt-handler's device plugin and installs virt-imagecopy (a postStart
// hook), and beside it the disk's image, running virt-imagecopy hold:
// the launcher puts a writable overlay over the disk in that container, and
// nothing is copied.
func ExampleNew() {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tiny", UID: "6b4a3c1e"},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{Memory: &virtv1.Memory{Guest: ptr.To(resource.MustParse("128Mi"))}},
			Volumes: []virtv1.Volume{{Name: "root", VolumeSource: virtv1.VolumeSource{
				ContainerDisk: &virtv1.ContainerDiskSource{Image: "localhost/guest-disk:dev"}}}},
		},
	}
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi) // as virt-apiserver stores it
	pod, err := launcherpod.New(vmi, launcherpod.Config{LauncherImage: "localhost/virt-launcher:dev", GracePeriodMargin: 15, TunDevice: true})
	if err != nil {
		panic(err)
	}
	for _, c := range pod.Spec.Containers {
		fmt.Println(c.Name, c.Command)
	}
	res := pod.Spec.Containers[0].Resources
	fmt.Println("memory request:", res.Requests.Memory().String(), "grace:", *pod.Spec.TerminationGracePeriodSeconds)
	tun := res.Limits.Name(layout.TunResourceName, resource.DecimalSI)
	fmt.Println(layout.TunResourceName, "limit:", tun.String())
	// Output:
	// compute [/usr/bin/virt-launcher]
	// volume-root [/var/run/virt-tools/virt-imagecopy hold /disk /var/run/virt-disks/root/containerdisk.json /usr/bin/virt-launcher]
	// memory request: 361Mi grace: 45
	// devices.kubevirt.io/tun limit: 1
}
