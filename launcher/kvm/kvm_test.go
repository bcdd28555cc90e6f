package kvm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHasVirtFlag(t *testing.T) {
	for name, tc := range map[string]struct {
		cpuinfo string
		want    bool
	}{
		"intel":     {"processor\t: 0\nflags\t\t: fpu vme vmx sse2\n", true},
		"amd":       {"flags : fpu svm\n", true},
		"none":      {"flags\t\t: fpu vme de pse tsc msr pae hypervisor\n", false},
		"substring": {"flags : vmxx svmm\nmodel name : vmx\n", false},
		"empty":     {"", false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := hasVirtFlag(strings.NewReader(tc.cpuinfo)); got != tc.want {
				t.Errorf("hasVirtFlag = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUsableReasons(t *testing.T) {
	dir := t.TempDir()
	noFlag := filepath.Join(dir, "noflag")
	withFlag := filepath.Join(dir, "flag")
	notKVM := filepath.Join(dir, "notkvm")
	for p, s := range map[string]string{noFlag: "flags : fpu\n", withFlag: "flags : fpu vmx\n", notKVM: "x"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(c, d string) { CPUInfoPath, DevicePath = c, d }(CPUInfoPath, DevicePath)
	for name, tc := range map[string]struct{ cpuinfo, dev, reason string }{
		"no cpuinfo":   {filepath.Join(dir, "missing"), notKVM, "cannot read"},
		"no flag":      {noFlag, notKVM, "no vmx or svm flag"},
		"no device":    {withFlag, filepath.Join(dir, "missing"), "cannot open"},
		"not kvm node": {withFlag, notKVM, "does not answer KVM_GET_API_VERSION"},
	} {
		t.Run(name, func(t *testing.T) {
			CPUInfoPath, DevicePath = tc.cpuinfo, tc.dev
			ok, reason := Usable()
			if ok || !strings.Contains(reason, tc.reason) {
				t.Errorf("Usable() = %v, %q; want false with a reason containing %q", ok, reason, tc.reason)
			}
		})
	}
}
