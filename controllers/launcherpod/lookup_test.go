package launcherpod

import (
	"testing"

	"kubevirt.dev/virt/internal/vmipod"
)

// A rendered pod is found by the lookups both components use.
func TestLookupOfARenderedPod(t *testing.T) {
	vmi := newVMI(nil)
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := vmipod.IndexByVMIUID(pod); len(got) != 1 || got[0] != string(vmi.UID) {
		t.Errorf("IndexByVMIUID = %v, want [%s]", got, vmi.UID)
	}
	if got := vmipod.VMIKey(pod); got != vmi.Namespace+"/"+vmi.Name {
		t.Errorf("VMIKey = %q, want %s/%s", got, vmi.Namespace, vmi.Name)
	}
	if vmipod.Exited(pod) {
		t.Errorf("a new pod has exited")
	}
}
