package e2e

import (
	"path"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// The kernel's own words when the firmware booted it with Secure Boot on.
const secureBootEnabled = "secureboot: Secure boot enabled"

// TestSecureBoot boots the project's Debian image (Debian's signed shim,
// GRUB and kernel) with KubeVirt's Secure Boot settings, SMM on and
// firmware.bootloader.efi.secureBoot: the guest's kernel reports Secure Boot
// enabled, and the domain runs OVMF's Secure Boot build with SMM. Secure
// Boot with SMM explicitly off is refused, as KubeVirt refuses it: OVMF
// enforces Secure Boot from SMM.
func TestSecureBoot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vmis := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns)

	t.Run("Secure Boot with SMM disabled is refused", func(t *testing.T) {
		vmi := secureBootVMI(t, "smm-off", false)
		_, err := vmis.Create(ctx, vmi, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !apierrors.IsInvalid(err) {
			// KubeVirt answers "SecureBoot requires SMM, which is currently
			// disabled"; accepted, the launcher would silently turn on the
			// SMM the spec turns off.
			t.Fatalf("create with secureBoot: true and smm.enabled: false: err = %v, want a 422", err)
		}
		causes := err.(apierrors.APIStatus).Status().Details.Causes
		paths := []string{"spec.domain", "spec.domain.features.smm", "spec.domain.features.smm.enabled", "spec.domain.firmware.bootloader.efi.secureBoot"}
		if !slices.ContainsFunc(causes, func(c metav1.StatusCause) bool {
			return slices.Contains(paths, c.Field) && strings.Contains(strings.ToLower(c.Message), "smm")
		}) {
			t.Errorf("no cause at %v names SMM: %v", paths, causes)
		}
	})

	vmi, err := vmis.Create(ctx, secureBootVMI(t, "secureboot", true), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi, err = cluster.WaitVMIRunning(ctx, ns, vmi.Name)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	serial := cluster.FollowSerial(t, pod)

	t.Run("the domain runs OVMF's Secure Boot build with SMM", func(t *testing.T) {
		d, err := cluster.LiveDomain(ctx, pod, vmi)
		if err != nil {
			t.Fatal(err)
		}
		if d.OS == nil || d.OS.Loader == nil || path.Base(d.OS.Loader.Path) != "OVMF_CODE_4M.secboot.fd" || d.OS.Loader.Secure != "yes" {
			t.Errorf("loader %+v, want OVMF_CODE_4M.secboot.fd, secure", d.OS.Loader)
		}
		if d.OS == nil || d.OS.NVRam == nil || path.Base(d.OS.NVRam.Template) != "OVMF_VARS_4M.ms.fd" {
			t.Errorf("nvram %+v, want a copy of OVMF_VARS_4M.ms.fd (Microsoft's keys enrolled)", d.OS.NVRam)
		}
		if d.Features == nil || d.Features.SMM == nil || d.Features.SMM.State != "on" {
			t.Errorf("features %+v, want SMM on", d.Features)
		}
		if d.OS == nil || d.OS.Type == nil || !strings.Contains(d.OS.Type.Machine, "q35") {
			t.Errorf("os type %+v, want a q35 machine", d.OS.Type)
		}
	})

	t.Run("the guest's kernel reports Secure Boot enabled", func(t *testing.T) {
		// Debian's kernel line says quiet: the runcmd copies the kernel's
		// Secure Boot lines from its log to the serial console.
		if err := serial.WaitFor(ctx, secureBootEnabled, debianBoot); err != nil {
			t.Fatalf("%v\nserial console:\n%s", err, serial.Output())
		}
		for _, line := range strings.Split(serial.Output(), "\n") {
			if strings.Contains(line, "VIRT-E2E-SECUREBOOT") {
				t.Logf("serial: %s", strings.TrimSpace(line))
			}
		}
	})
}

// secureBootVMI is the Debian example's guest with EFI Secure Boot on and
// SMM as smm says, and a cloud-init runcmd that prints the kernel's Secure
// Boot messages on the serial console.
func secureBootVMI(t *testing.T, name string, smm bool) *virtv1.VirtualMachineInstance {
	t.Helper()
	vm := exampleVM(t, "vm-debian.yaml")
	spec := vm.Spec.Template.Spec.DeepCopy()
	spec.Domain.Firmware = &virtv1.Firmware{Bootloader: &virtv1.Bootloader{EFI: &virtv1.EFI{SecureBoot: ptr.To(true)}}}
	spec.Domain.Features = &virtv1.Features{SMM: &virtv1.FeatureState{Enabled: ptr.To(smm)}}
	setUserData(t, spec, `#cloud-config
runcmd:
  - 'echo "VIRT-E2E-SECUREBOOT $(dmesg | grep -i secureboot)" > /dev/ttyS0'
`)
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: vm.Spec.Template.ObjectMeta.Labels},
		Spec:       *spec,
	}
}
