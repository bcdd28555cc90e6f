package kvm

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Paths probed; variables so tests can point them at fixtures.
var (
	CPUInfoPath = "/proc/cpuinfo"
	DevicePath  = "/dev/kvm"
)

// kvmGetAPIVersion is KVM_GET_API_VERSION, _IO(0xAE, 0x00); every KVM
// answers 12.
const (
	kvmGetAPIVersion = 0xAE00
	kvmAPIVersion    = 12
)

// Usable reports whether hardware virtualisation can run guests, and why not.
func Usable() (bool, string) {
	f, err := os.Open(CPUInfoPath)
	if err != nil {
		return false, fmt.Sprintf("cannot read %s: %v", CPUInfoPath, err)
	}
	defer f.Close()
	if !hasVirtFlag(f) {
		return false, fmt.Sprintf("no vmx or svm flag in %s", CPUInfoPath)
	}
	dev, err := os.OpenFile(DevicePath, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Sprintf("cannot open %s: %v", DevicePath, err)
	}
	defer dev.Close()
	v, err := unix.IoctlRetInt(int(dev.Fd()), kvmGetAPIVersion)
	if err != nil {
		return false, fmt.Sprintf("%s does not answer KVM_GET_API_VERSION: %v", DevicePath, err)
	}
	if v != kvmAPIVersion {
		return false, fmt.Sprintf("%s speaks KVM API %d, not %d", DevicePath, v, kvmAPIVersion)
	}
	return true, ""
}

// hasVirtFlag reports whether a cpuinfo lists vmx (Intel VT-x) or svm (AMD-V).
func hasVirtFlag(r io.Reader) bool {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok || strings.TrimSpace(key) != "flags" {
			continue
		}
		for _, flag := range strings.Fields(value) {
			if flag == "vmx" || flag == "svm" {
				return true
			}
		}
	}
	return false
}
