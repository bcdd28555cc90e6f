package manager

import (
	"strings"
	"testing"
)

func TestFilesystemOverheadFlag(t *testing.T) {
	for overhead, valid := range map[string]bool{
		"0.055": true, "0": true, "0.99": true,
		"1": false, "-0.1": false, "5%": false, "": false,
	} {
		if got := validOverhead(overhead); got != valid {
			t.Errorf("validOverhead(%q) = %v, want %v", overhead, got, valid)
		}
	}
	// Validate applies the logging flags, which it may do once per process:
	// only a refusal, which comes first, is checked through it.
	o := NewOptions()
	o.LauncherImage = "virt-launcher"
	o.FilesystemOverhead = "1"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--filesystem-overhead") {
		t.Errorf("--filesystem-overhead=1: err = %v, want it refused", err)
	}
	if d := NewOptions().FilesystemOverhead; d != "0.055" {
		t.Errorf("default --filesystem-overhead %q, want KubeVirt's 0.055", d)
	}
}
