package validation

import (
	"testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestValidateLibvirtLogFilters(t *testing.T) {
	valid := []string{
		"1:*",
		"1:qemu.qemu_monitor 3:*",
		// KubeVirt's functional tests use this one.
		"3:remote 4:event 3:util.json 3:util.object 3:util.dbus 3:util.netlink 3:node_device 3:rpc 3:access 1:*",
		"2:+qemu.qemu_process",
	}
	for _, v := range valid {
		if err := ValidateLibvirtLogFilters(v); err != nil {
			t.Errorf("%q refused: %v", v, err)
		}
	}
	invalid := []string{
		"",
		" ",
		"debug",
		"0:*",
		"5:qemu",
		"1:",
		"1:qemu 3:*\n",
		" 1:qemu",
		"1:qemu  3:*",
		"1:qemu/../x",
		"1:*qemu",
		// The value that rewrote KubeVirt's virtqemud.conf: a quote, a
		// newline and a setting of the user's.
		"2:qemu.qemu_monitor 3:*\"\na=\"$(touch /tmp/x)",
	}
	for _, v := range invalid {
		if err := ValidateLibvirtLogFilters(v); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
	many := "1:*"
	for range maxLibvirtLogFilters {
		many += " 1:*"
	}
	if err := ValidateLibvirtLogFilters(many); err == nil {
		t.Errorf("%d filters accepted", maxLibvirtLogFilters+1)
	}
}

// The annotation is checked on a VMI's create and update and in a VM's
// template, with the annotation's key in the field path.
func TestLibvirtLogFiltersAnnotation(t *testing.T) {
	const want = "metadata.annotations[kubevirt.io/libvirt-log-filters]"
	vmi := validVMI()
	vmi.Annotations = map[string]string{virtv1.LibvirtLogFiltersAnnotation: "1:qemu.qemu_monitor 3:*"}
	if errs := ValidateVirtualMachineInstance(vmi); len(errs) != 0 {
		t.Errorf("valid filters refused: %v", errs)
	}
	bad := vmi.DeepCopy()
	bad.Annotations[virtv1.LibvirtLogFiltersAnnotation] = "everything"
	errs := ValidateVirtualMachineInstance(bad)
	if len(errs) != 1 || errs[0].Field != want {
		t.Errorf("create with bad filters: got %v, want one error on %s", errs, want)
	}
	vmi.ResourceVersion = "1"
	bad.ResourceVersion = "1"
	errs = ValidateVirtualMachineInstanceUpdate(bad, vmi)
	if len(errs) != 1 || errs[0].Field != want {
		t.Errorf("update to bad filters: got %v, want one error on %s", errs, want)
	}
}
